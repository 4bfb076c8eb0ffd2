// Package tasks owns running invocations in the background of a serving
// process (docs/tasks.md): a task is the same invocation as a direct call (the
// caller has already checked its input and the invoker pins, limits and
// cleans up as for any call) with the endpoint's longer deadline. The
// runner records each task in the store before it starts, writes the
// child's progress messages into it as its statusMessage, and its outcome
// and checked result when it ends (or, when the store refuses them, the
// task as failed). A cancel from any process reaches the
// child within PollInterval; when the runner closes, its running tasks are
// stopped and recorded cancelled.
//
// tasks imports kernel and store (for the task records) only; it never
// imports mcpcore, a transport or serve, which host it.
package tasks

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
)

// PollInterval is how often the runner looks at its running tasks' records
// for cancel requests from other processes and saves new status messages.
const PollInterval = 250 * time.Millisecond

// Reasons a task's envelope carries when the task did not run to its end.
const (
	ReasonCancelled = "the task was cancelled"
	ReasonShutdown  = "the server stopped before the task finished"
)

// ReasonUnrecorded is the statusMessage of a failed task: its invocation
// ended but its outcome and result could not be stored, so nobody can
// fetch them. This is the one way a task fails (the Tasks extension keeps
// failed for protocol errors; every outcome of an invocation, an error
// outcome too, completes the task with the tool result a direct call gives).
const ReasonUnrecorded = "internal error: the task ended but its result could not be recorded"

var (
	errCancel   = errors.New(ReasonCancelled)
	errShutdown = errors.New(ReasonShutdown)
)

// Store is what the runner needs of the store.
type Store interface {
	store.TaskStore
	RequestTaskCancel(id string) (store.Task, error)
}

// Runner runs the tasks of one serving process.
type Runner struct {
	st      Store
	owner   store.TaskOwner
	invoker kernel.Invoker
	logf    func(format string, args ...any)
	// Done, when set, receives each task's invocation and result once it
	// is recorded (owner diagnostics and audit).
	Done func(inv *kernel.Invocation, res kernel.Result)

	base context.Context
	stop context.CancelFunc

	mu      sync.Mutex
	running map[string]*run
	closed  bool
	wg      sync.WaitGroup
	pollWG  sync.WaitGroup
}

type run struct {
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	msg    string // the child's latest progress message
	saved  string // the statusMessage last written
}

// New returns a runner whose tasks are owned by owner (store.BecomeTaskOwner)
// and run through invoker.
func New(st Store, owner store.TaskOwner, invoker kernel.Invoker, logf func(string, ...any)) *Runner {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	ctx, stop := context.WithCancel(context.Background())
	r := &Runner{st: st, owner: owner, invoker: invoker, logf: logf, base: ctx, stop: stop, running: map[string]*run{}}
	r.pollWG.Add(1)
	go r.poll()
	return r
}

// Owner is the owner the runner records.
func (r *Runner) Owner() store.TaskOwner { return r.owner }

// Start records t (its ID, Endpoint, Agent, Command, Tool and TTLMs set by
// the caller) and runs inv in the background with timeout in place of the
// call's own. ctx carries the call's values (what it pinned), not its
// lifetime: the task outlives the request. The record is durable when
// Start returns; a full endpoint (maxTasks) is refused at once.
func (r *Runner) Start(ctx context.Context, t store.Task, maxTasks int, timeout time.Duration, inv *kernel.Invocation) (store.Task, error) {
	t.Owner = r.owner
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return store.Task{}, kernel.Errorf(kernel.CodeUnavailable, "the server is stopping")
	}
	r.wg.Add(1)
	r.mu.Unlock()
	if err := r.st.CreateTask(t, maxTasks); err != nil {
		r.wg.Done()
		return store.Task{}, err
	}
	rec, err := r.st.Task(t.ID)
	if err != nil {
		r.wg.Done()
		return store.Task{}, err
	}
	rctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stopOnClose := context.AfterFunc(r.base, func() { cancel(errShutdown) })
	ru := &run{cancel: cancel}
	r.mu.Lock()
	r.running[t.ID] = ru
	r.mu.Unlock()
	inv.Limits.Timeout = timeout
	inner := inv.OnProgress
	inv.OnProgress = func(p kernel.Progress) {
		if inner != nil {
			inner(p)
		}
		if p.Message != "" {
			ru.mu.Lock()
			ru.msg = p.Message
			ru.mu.Unlock()
		}
	}
	go func() {
		defer r.wg.Done()
		defer stopOnClose()
		res := r.invoke(rctx, inv)
		cause := context.Cause(rctx)
		cancel(nil)
		r.mu.Lock()
		delete(r.running, t.ID)
		r.mu.Unlock()
		r.finish(t.ID, ru, &res, cause)
		if r.Done != nil {
			r.Done(inv, res)
		}
	}()
	return rec, nil
}

// invoke runs inv; a panicking invoker ends it as execution_failed, as a
// direct call's would, instead of ending the serving process.
func (r *Runner) invoke(ctx context.Context, inv *kernel.Invocation) (res kernel.Result) {
	defer func() {
		if p := recover(); p != nil {
			r.logf("task of invocation %s: invoker panicked: %v", inv.ID, p)
			res = kernel.Result{InvocationID: inv.ID, Outcome: kernel.ExecutionFailed, Reason: "internal error"}
		}
	}()
	return r.invoker.Invoke(ctx, inv)
}

// finish records the task's end. A task stopped by a cancel or by the
// server's end is cancelled; every other end (a deadline too) completes it
// with the invocation's own outcome, as a direct call would report it.
func (r *Runner) finish(id string, ru *run, res *kernel.Result, cause error) {
	state := store.TaskCompleted
	if res.Outcome == kernel.Cancelled {
		switch {
		case errors.Is(cause, errCancel):
			state, res.Reason = store.TaskCancelled, ReasonCancelled
		case errors.Is(cause, errShutdown):
			state, res.Reason = store.TaskCancelled, ReasonShutdown
		}
	}
	ru.mu.Lock()
	msg := ru.msg
	ru.mu.Unlock()
	record := func(t *store.Task) bool {
		if t.Final() {
			return false
		}
		t.State = state
		t.InvocationID, t.Outcome, t.Reason, t.CommandResult = res.InvocationID, string(res.Outcome), res.Reason, res.CommandResult
		if msg != "" {
			t.StatusMessage = msg
		}
		return true
	}
	_, err := r.st.UpdateTask(id, record)
	if err != nil && !errors.Is(err, store.ErrTaskNotFound) {
		time.Sleep(PollInterval) // a busy store may take it a moment later
		_, err = r.st.UpdateTask(id, record)
	}
	if err == nil || errors.Is(err, store.ErrTaskNotFound) {
		return // recorded, or removed: nobody can ask for it
	}
	r.logf("task %s: its outcome %s was not recorded: %v", id, res.Outcome, err)
	// Without its result (a store may refuse a large record): failed, so
	// that it does not stay working until it expires.
	if _, err := r.st.UpdateTask(id, func(t *store.Task) bool {
		if t.Final() {
			return false
		}
		t.State, t.StatusMessage = store.TaskFailed, ReasonUnrecorded
		t.InvocationID, t.Outcome, t.Reason, t.CommandResult = res.InvocationID, "", "", nil
		return true
	}); err != nil {
		r.logf("task %s: not recorded as failed either: %v", id, err)
	}
}

// Cancel stops task id: at once when this runner runs it, else through the
// record's cancel flag, which its owner notices (RequestTaskCancel).
func (r *Runner) Cancel(id string) (store.Task, error) {
	t, err := r.st.RequestTaskCancel(id)
	if err != nil {
		return t, err
	}
	r.mu.Lock()
	ru := r.running[id]
	r.mu.Unlock()
	if ru != nil {
		ru.cancel(errCancel)
	}
	return t, nil
}

// poll saves new status messages and acts on cancel requests of the
// running tasks, until Close.
func (r *Runner) poll() {
	defer r.pollWG.Done()
	tick := time.NewTicker(PollInterval)
	defer tick.Stop()
	for {
		select {
		case <-r.base.Done():
			return
		case <-tick.C:
		}
		r.mu.Lock()
		ids := make(map[string]*run, len(r.running))
		for id, ru := range r.running {
			ids[id] = ru
		}
		r.mu.Unlock()
		if len(ids) == 0 {
			continue
		}
		// One read for all of them; a write only where a message is new.
		all, err := r.st.Tasks("")
		if err != nil {
			continue
		}
		recs := make(map[string]store.Task, len(all))
		for _, t := range all {
			recs[t.ID] = t
		}
		for id, ru := range ids {
			ru.mu.Lock()
			msg, changed := ru.msg, ru.msg != ru.saved
			ru.mu.Unlock()
			t, ok := recs[id]
			err = nil
			if !ok {
				err = store.ErrTaskNotFound
			}
			if changed && ok {
				t, err = r.st.UpdateTask(id, func(t *store.Task) bool {
					if t.Final() {
						return false
					}
					t.StatusMessage = msg
					return true
				})
				if err == nil {
					ru.mu.Lock()
					ru.saved = msg
					ru.mu.Unlock()
				}
			}
			if err != nil {
				if errors.Is(err, store.ErrTaskNotFound) {
					ru.cancel(errCancel) // removed (a working task is never purged): nobody can fetch its result
				}
				continue
			}
			if t.CancelRequested {
				ru.cancel(errCancel)
			}
		}
	}
}

// Close stops every running task, waits until each is recorded cancelled
// and its child is gone, and stops polling.
func (r *Runner) Close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.stop()
	r.wg.Wait()
	r.pollWG.Wait()
}
