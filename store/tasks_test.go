package store

import (
	"errors"
	"testing"
	"time"

	"github.com/rukh-dev/rukh/kernel"
)

func newTask(endpoint, agent string, owner TaskOwner) Task {
	return Task{ID: NewTaskID(), Endpoint: endpoint, Agent: agent, Command: "site.build", Tool: "build", TTLMs: 60_000, Owner: owner}
}

func TestTaskLifecycle(t *testing.T) {
	s := testStore(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	setClock(t, &now)
	owner, release, err := s.BecomeTaskOwner()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	tk := newTask("local", "owner", owner)
	if err := s.CreateTask(tk, 2); err != nil {
		t.Fatal(err)
	}
	got, err := s.Task(tk.ID)
	if err != nil || got.State != TaskWorking || got.Version != 1 || !got.CreatedAt.Equal(now) {
		t.Fatalf("Task = %+v, %v", got, err)
	}
	// maxTasks counts running and kept tasks of the endpoint, not others'.
	if err := s.CreateTask(newTask("local", "owner", owner), 2); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTask(newTask("other", "owner", owner), 2); err != nil {
		t.Fatal(err)
	}
	err = s.CreateTask(newTask("local", "owner", owner), 2)
	if !errors.Is(err, ErrTaskLimit) || kernel.ErrorCode(err) != kernel.CodeUnavailable {
		t.Fatalf("third task on a maxTasks 2 endpoint: %v", err)
	}
	// A cancel request on a task whose owner lives only sets the flag.
	got, err = s.RequestTaskCancel(tk.ID)
	if err != nil || got.State != TaskWorking || !got.CancelRequested || got.Version != 2 {
		t.Fatalf("cancel request = %+v, %v", got, err)
	}
	got, err = s.UpdateTask(tk.ID, func(r *Task) bool {
		r.State, r.Outcome, r.StatusMessage = TaskCancelled, "cancelled", string(make([]byte, 5000))
		return true
	})
	if err != nil || got.Version != 3 || len(got.StatusMessage) != MaxStatusMessage {
		t.Fatalf("update = %+v, %v", got, err)
	}
	// Expiry, ttl after the end: not found, then purged (the two tasks
	// still working stay), and the slot is free again.
	now = now.Add(time.Minute)
	if _, err := s.Task(tk.ID); !errors.Is(err, ErrTaskNotFound) || kernel.ErrorCode(err) != kernel.CodeNotFound {
		t.Fatalf("expired task: %v", err)
	}
	if n, err := s.PurgeTasks(); err != nil || n != 1 {
		t.Fatalf("purge = %d, %v (want the one task that ended)", n, err)
	}
	if err := s.CreateTask(newTask("local", "owner", owner), 2); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	for _, id := range []string{"", "t-00", "../x", NewTaskID()} {
		if _, err := s.Task(id); !errors.Is(err, ErrTaskNotFound) {
			t.Errorf("Task(%q) = %v", id, err)
		}
	}
}

func TestRecoverTasksOfGoneOwners(t *testing.T) {
	s := testStore(t)
	live, release, err := s.BecomeTaskOwner()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	gone := TaskOwner{ID: NewTaskID()[2:], PID: 1 << 30} // nobody holds it
	a, b := newTask("local", "owner", live), newTask("local", "owner", gone)
	for _, tk := range []Task{a, b} {
		if err := s.CreateTask(tk, 16); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.RecoverTasks(""); err != nil || n != 1 {
		t.Fatalf("RecoverTasks = %d, %v", n, err)
	}
	if got, _ := s.Task(a.ID); got.State != TaskWorking {
		t.Errorf("a live owner's task became %s", got.State)
	}
	if got, _ := s.Task(b.ID); got.State != TaskCancelled || got.Reason != ReasonOwnerGone {
		t.Errorf("a gone owner's task is %+v", got)
	}
	// Once the live owner ends, its task is recovered too; a cancel of a
	// task whose owner is gone is recorded at once.
	c := newTask("local", "owner", live)
	if err := s.CreateTask(c, 16); err != nil {
		t.Fatal(err)
	}
	release()
	if got, err := s.RequestTaskCancel(c.ID); err != nil || got.State != TaskCancelled {
		t.Fatalf("cancel of an orphan = %+v, %v", got, err)
	}
	if n, err := s.RecoverTasks(""); err != nil || n != 1 {
		t.Fatalf("RecoverTasks after the owner ended = %d, %v", n, err)
	}
}

// Task writes go to their own file: the store's stamp stays as it was.
func TestTaskWritesLeaveTheStampAlone(t *testing.T) {
	s := testStore(t)
	if _, err := s.Secret(); err != nil { // the store file exists
		t.Fatal(err)
	}
	before, ok := s.Stamp()
	if !ok {
		t.Fatal("no stamp of the store file")
	}
	tk := newTask("local", "owner", TaskOwner{ID: "x"})
	if err := s.CreateTask(tk, 4); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateTask(tk.ID, func(r *Task) bool { r.StatusMessage = "step 2"; return true }); err != nil {
		t.Fatal(err)
	}
	if after, _ := s.Stamp(); after != before {
		t.Errorf("a task write changed the store's stamp")
	}
	if got, err := s.Task(tk.ID); err != nil || got.StatusMessage != "step 2" {
		t.Errorf("Task = %+v, %v", got, err)
	}
}

// A task's ttl counts from its end: a working task is never purged, counts
// against maxTasks however long it runs, and its result is kept ttl after
// it reached its final state.
func TestTaskTTLCountsFromTheEnd(t *testing.T) {
	s := testStore(t)
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := start
	setClock(t, &now)
	owner, release, err := s.BecomeTaskOwner()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	tk := newTask("local", "owner", owner) // ttl one minute
	if err := s.CreateTask(tk, 1); err != nil {
		t.Fatal(err)
	}
	now = start.Add(10 * time.Minute) // still running, long past createdAt+ttl
	if got, err := s.Task(tk.ID); err != nil || got.State != TaskWorking {
		t.Fatalf("a working task past its ttl: %+v, %v", got, err)
	}
	if ts, err := s.Tasks("local"); err != nil || len(ts) != 1 {
		t.Fatalf("Tasks = %v, %v", ts, err)
	}
	if n, err := s.PurgeTasks(); err != nil || n != 0 {
		t.Fatalf("purge of a working task = %d, %v", n, err)
	}
	if err := s.CreateTask(newTask("local", "owner", owner), 1); !errors.Is(err, ErrTaskLimit) {
		t.Fatalf("a second task while the first runs, maxTasks 1: %v", err)
	}
	if _, err := s.UpdateTask(tk.ID, func(r *Task) bool { r.StatusMessage = "step 9"; return true }); err != nil {
		t.Fatalf("a status write past the ttl: %v", err)
	}
	ended := start.Add(20 * time.Minute)
	now = ended
	got, err := s.UpdateTask(tk.ID, func(r *Task) bool {
		r.State, r.Outcome = TaskCompleted, "succeeded"
		return true
	})
	if err != nil || !got.EndedAt.Equal(ended) || !got.ExpiresAt().Equal(ended.Add(time.Minute)) {
		t.Fatalf("completed = %+v (expires %v), %v", got, got.ExpiresAt(), err)
	}
	now = ended.Add(time.Minute - time.Millisecond)
	if got, err := s.Task(tk.ID); err != nil || got.Outcome != "succeeded" {
		t.Fatalf("the result just before ttl after the end: %+v, %v", got, err)
	}
	now = ended.Add(time.Minute)
	if _, err := s.Task(tk.ID); !errors.Is(err, ErrTaskNotFound) {
		t.Fatalf("ttl after the end: %v", err)
	}
	if n, err := s.PurgeTasks(); err != nil || n != 1 {
		t.Fatalf("purge = %d, %v", n, err)
	}
}
