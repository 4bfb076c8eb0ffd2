package store_test

import (
	"testing"

	"github.com/rukh-dev/rukh/store"
)

// A task whose owner process died without recording its end (SIGKILL: on
// etcd its lease ends, on bbolt its lock goes) reads cancelled from any
// other process, which records it so, saying why.
func TestOrphanedTaskReadsCancelled(t *testing.T) {
	a := mustStore(t)
	b := otherHandle(t, a)
	owner, release, err := a.BecomeTaskOwner()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	tk := store.Task{ID: store.NewTaskID(), Endpoint: "web", Agent: "builder", Command: "site.build", Tool: "build", TTLMs: 60_000, Owner: owner}
	if err := a.CreateTask(tk, 4); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Task(tk.ID); err != nil || got.State != store.TaskWorking {
		t.Fatalf("the task of a live owner, from another process: %+v, %v", got, err)
	}
	if onEtcd() {
		endLease(t, a)
	} else {
		release()
	}
	got, err := b.Task(tk.ID)
	if err != nil || got.State != store.TaskCancelled || got.Outcome != "cancelled" || got.Reason != store.ReasonOwnerGone || got.EndedAt.IsZero() {
		t.Fatalf("the task of a dead owner, from another process: %+v, %v", got, err)
	}
	// Recorded: every later reader, even one that does not look at owners, sees it.
	ts, err := b.Tasks("web")
	if err != nil || len(ts) != 1 || ts[0].State != store.TaskCancelled || ts[0].Version != got.Version {
		t.Fatalf("Tasks after the read = %+v, %v", ts, err)
	}
	if again, err := a.Task(tk.ID); err != nil || again.Version != got.Version {
		t.Errorf("a second read wrote again: %+v, %v", again, err)
	}
}
