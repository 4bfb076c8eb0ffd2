package commands

import (
	"context"
	"errors"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/mcphttp"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
	"github.com/rukh-dev/rukh/tasks"
)

// startTasks makes a serving process the owner of the tasks it will run,
// when its endpoint lets any command run as one: it records as cancelled
// the tasks of owners that died without recording them (SIGKILL), and
// returns the runner; stop stops its running tasks and records them
// cancelled. No task policy: nil and a no-op.
func (a *app) startTasks(launch *policy.Launch, inv kernel.Invoker, done func(*kernel.Invocation, kernel.Result), logf func(string, ...any)) (*tasks.Runner, func(), error) {
	if launch == nil || launch.Tasks == nil {
		return nil, func() {}, nil
	}
	owner, release, err := a.becomeTaskOwner(logf)
	if err != nil {
		return nil, nil, err
	}
	r := tasks.New(a.h.Store, owner, inv, logf)
	r.Done = done
	return r, func() {
		r.Close()
		release()
	}, nil
}

// becomeTaskOwner makes this process an owner of tasks and records as
// cancelled the tasks of owners that died without recording them.
func (a *app) becomeTaskOwner(logf func(string, ...any)) (store.TaskOwner, func(), error) {
	owner, release, err := a.h.Store.BecomeTaskOwner()
	if err != nil {
		return store.TaskOwner{}, nil, err
	}
	if n, err := a.h.Store.RecoverTasks(owner.ID); errors.Is(err, store.ErrDamaged) {
		release() // no task could be recorded: refuse to serve them
		return store.TaskOwner{}, nil, err
	} else if err != nil {
		logf("tasks: cannot look for the tasks of ended servers: %v", err)
	} else if n > 0 {
		logf("tasks: recorded %d task(s) cancelled: the server that ran them ended without a chance to", n)
	}
	return owner, release, nil
}

// startHTTPTasks gives each HTTP endpoint with a task policy its runner
// (one owner for the process); stop stops them all.
func (a *app) startHTTPTasks(eps []mcphttp.Endpoint, logf func(string, ...any)) (stop func(), err error) {
	var runners []*tasks.Runner
	var owner store.TaskOwner
	release := func() {}
	for i := range eps {
		core := &eps[i].Core
		if core.Launch == nil || core.Launch.Tasks == nil {
			continue
		}
		if runners == nil {
			if owner, release, err = a.becomeTaskOwner(logf); err != nil {
				return nil, err
			}
		}
		r := tasks.New(a.h.Store, owner, core.Invoker, logf)
		r.Done = core.Diagnostics
		runners = append(runners, r)
		core.Tasks = &taskHost{r: r, st: a.h.Store}
	}
	return func() {
		for _, r := range runners {
			r.Close()
		}
		release()
	}, nil
}

// taskHost is mcpcore.TaskHost over the runner and the store: a task is
// visible only to the endpoint and agent that started it.
type taskHost struct {
	r  *tasks.Runner
	st *store.Store
}

func (h *taskHost) Start(ctx context.Context, t mcpcore.TaskStart, inv *kernel.Invocation) (mcpcore.TaskInfo, error) {
	rec, err := h.r.Start(ctx, store.Task{ID: store.NewTaskID(), Endpoint: t.Caller.Endpoint, Agent: t.Caller.Agent,
		Command: t.Command, Tool: t.Tool, TTLMs: t.TTLMs}, t.MaxTasks, t.Timeout, inv)
	if err != nil {
		return mcpcore.TaskInfo{}, err
	}
	return taskInfo(rec), nil
}

// Get serves tasks/get and the job family. The store's Task records a
// task whose process is gone as cancelled, as 'rukh tasks' does.
func (h *taskHost) Get(id string, who mcpcore.TaskCaller) (mcpcore.TaskInfo, error) {
	t, err := h.st.Task(id)
	if err != nil {
		return mcpcore.TaskInfo{}, err
	}
	if t.Endpoint != who.Endpoint || t.Agent != who.Agent {
		return mcpcore.TaskInfo{}, kernel.Errorf(kernel.CodeNotFound, "no task %q", id) // foreign: the same answer as unknown
	}
	return taskInfo(t), nil
}

// Cancel stops the task and waits briefly for it to be recorded, so that
// the answer can say cancelled.
func (h *taskHost) Cancel(id string, who mcpcore.TaskCaller) (mcpcore.TaskInfo, error) {
	if _, err := h.Get(id, who); err != nil {
		return mcpcore.TaskInfo{}, err
	}
	t, err := h.r.Cancel(id)
	for deadline := time.Now().Add(500 * time.Millisecond); err == nil && !t.Final() && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		t, err = h.st.Task(id)
	}
	if err != nil {
		return mcpcore.TaskInfo{}, err
	}
	return taskInfo(t), nil
}

func taskInfo(t store.Task) mcpcore.TaskInfo {
	info := mcpcore.TaskInfo{ID: t.ID, Status: t.State, StatusMessage: t.StatusMessage, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt,
		TTLMs: t.RetentionMs()} // the extension counts ttlMs from createdAt
	if t.Final() && t.Outcome != "" {
		info.Result = &kernel.Result{InvocationID: t.InvocationID, Outcome: kernel.Outcome(t.Outcome), Reason: t.Reason, CommandResult: t.CommandResult}
	}
	return info
}
