package tasks

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
)

// slow reports progress, then runs until release is closed or ctx ends.
type slow struct {
	release chan struct{}
	timeout chan time.Duration
}

func (s *slow) Invoke(ctx context.Context, inv *kernel.Invocation) kernel.Result {
	s.timeout <- inv.Limits.Timeout
	inv.OnProgress(kernel.Progress{Message: "building page 3 of 9"})
	select {
	case <-s.release:
		return kernel.Result{InvocationID: inv.ID, Outcome: kernel.Succeeded, CommandResult: jsontext.Value(`{"pages":9}`)}
	case <-ctx.Done():
		return kernel.Result{InvocationID: inv.ID, Outcome: kernel.Cancelled, Reason: "cancelled"}
	}
}

func setup(t *testing.T) (*store.Store, *Runner, *slow) {
	t.Helper()
	st := store.New(filepath.Join(t.TempDir(), "home"))
	owner, release, err := st.BecomeTaskOwner()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	inv := &slow{release: make(chan struct{}), timeout: make(chan time.Duration, 8)}
	r := New(st, owner, inv, t.Logf)
	t.Cleanup(r.Close)
	return st, r, inv
}

func start(t *testing.T, r *Runner, max int) (store.Task, error) {
	return r.Start(context.Background(), store.Task{ID: store.NewTaskID(), Endpoint: "local", Agent: "owner", Command: "site.build", Tool: "build", TTLMs: 60_000},
		max, 5*time.Second, &kernel.Invocation{ID: kernel.NewInvocationID()})
}

func waitFor(t *testing.T, st *store.Store, id string, ok func(store.Task) bool) store.Task {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := st.Task(id)
		if err == nil && ok(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s never got there: %+v, %v", id, got, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestTaskCompletesWithProgressAndResult(t *testing.T) {
	st, r, inv := setup(t)
	tk, err := start(t, r, 4)
	if err != nil || tk.State != store.TaskWorking || tk.Owner != r.Owner() {
		t.Fatalf("Start = %+v, %v", tk, err)
	}
	if d := <-inv.timeout; d != 5*time.Second {
		t.Errorf("the invocation ran with timeout %v, not the task's", d)
	}
	waitFor(t, st, tk.ID, func(t store.Task) bool { return t.StatusMessage == "building page 3 of 9" })
	close(inv.release)
	got := waitFor(t, st, tk.ID, store.Task.Final)
	if got.State != store.TaskCompleted || got.Outcome != "succeeded" || string(got.CommandResult) != `{"pages":9}` {
		t.Fatalf("final record = %+v", got)
	}
}

func TestTaskCancelFromAnotherProcessAndLimit(t *testing.T) {
	st, r, inv := setup(t)
	a, err := start(t, r, 2)
	if err != nil {
		t.Fatal(err)
	}
	<-inv.timeout
	if _, err := start(t, r, 2); err != nil {
		t.Fatal(err)
	}
	<-inv.timeout
	if _, err := start(t, r, 2); !errors.Is(err, store.ErrTaskLimit) {
		t.Fatalf("third task over maxTasks 2: %v", err)
	}
	// As 'rukh tasks cancel' does it: only the record's flag.
	began := time.Now()
	if _, err := st.RequestTaskCancel(a.ID); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, st, a.ID, store.Task.Final)
	if got.State != store.TaskCancelled || got.Reason != ReasonCancelled {
		t.Fatalf("cancelled record = %+v", got)
	}
	// A runner that does not poll never cancels; a busy host delays a
	// poll, so the bound is generous.
	if d := time.Since(began); d > 40*PollInterval {
		t.Errorf("the cancel took %v, over forty poll intervals", d)
	}
}

func TestCloseCancelsRunningTasks(t *testing.T) {
	st, r, inv := setup(t)
	a, err := start(t, r, 4)
	if err != nil {
		t.Fatal(err)
	}
	<-inv.timeout
	r.Close()
	got, err := st.Task(a.ID)
	if err != nil || got.State != store.TaskCancelled || got.Reason != ReasonShutdown {
		t.Fatalf("after Close = %+v, %v", got, err)
	}
	if _, err := start(t, r, 4); err == nil {
		t.Fatal("a closed runner started a task")
	}
}

// refusing is a store that refuses every record holding a command result,
// as a backend with a smaller value limit than the result limit would.
type refusing struct {
	*store.Store
	refused atomic.Int32
}

func (f *refusing) UpdateTask(id string, fn func(*store.Task) bool) (store.Task, error) {
	cur, err := f.Store.Task(id)
	if err != nil {
		return cur, err
	}
	if fn(&cur) && len(cur.CommandResult) > 0 {
		f.refused.Add(1)
		return store.Task{}, errors.New("value too large")
	}
	return f.Store.UpdateTask(id, fn)
}

func TestUnrecordableResultFailsTheTask(t *testing.T) {
	st := store.New(filepath.Join(t.TempDir(), "home"))
	owner, release, err := st.BecomeTaskOwner()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	inv := &slow{release: make(chan struct{}), timeout: make(chan time.Duration, 8)}
	f := &refusing{Store: st}
	r := New(f, owner, inv, t.Logf)
	t.Cleanup(r.Close)
	tk, err := start(t, r, 4)
	if err != nil {
		t.Fatal(err)
	}
	<-inv.timeout
	close(inv.release)
	got := waitFor(t, st, tk.ID, store.Task.Final)
	if got.State != store.TaskFailed || got.StatusMessage != ReasonUnrecorded || got.Outcome != "" || len(got.CommandResult) != 0 {
		t.Fatalf("final record = %+v", got)
	}
	if n := f.refused.Load(); n != 2 {
		t.Errorf("the result was offered %d times, want 2 (once more after a poll interval)", n)
	}
}

// panicking is an invoker that panics.
type panicking struct{}

func (panicking) Invoke(context.Context, *kernel.Invocation) kernel.Result { panic("boom") }

func TestPanickingInvokerCompletesAsExecutionFailed(t *testing.T) {
	st := store.New(filepath.Join(t.TempDir(), "home"))
	owner, release, err := st.BecomeTaskOwner()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	r := New(st, owner, panicking{}, t.Logf)
	t.Cleanup(r.Close)
	tk, err := start(t, r, 4)
	if err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, st, tk.ID, store.Task.Final)
	if got.State != store.TaskCompleted || got.Outcome != string(kernel.ExecutionFailed) || got.Reason != "internal error" {
		t.Fatalf("final record = %+v", got)
	}
}
