package serve

import (
	"context"
	"errors"
	"time"

	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/store"
	"github.com/rukh-dev/rukh/tasks"
)

// startTasks makes the serving process the owner of the tasks it will run,
// when one of its endpoints lets any command run as one: it records as
// cancelled the tasks of owners that died without recording them
// (SIGKILL), and gives each such endpoint a runner over its invoker and
// its diagnostics hook (one owner for the process); stop stops their
// running tasks and records them cancelled. No task policy: a no-op.
func (p *process) startTasks(cores []*mcpcore.Config) (stop func(), err error) {
	var runners []*tasks.Runner
	var owner store.TaskOwner
	release := func() {}
	for _, core := range cores {
		if core.Launch == nil || core.Launch.Tasks == nil {
			continue
		}
		if runners == nil {
			if owner, release, err = p.becomeTaskOwner(); err != nil {
				return nil, err
			}
		}
		r := tasks.New(p.h.Store, owner, core.Invoker, p.logf)
		r.Done = core.Diagnostics
		runners = append(runners, r)
		core.Tasks = &taskHost{r: r, st: p.h.Store}
	}
	return func() {
		for _, r := range runners {
			r.Close()
		}
		release()
	}, nil
}

// becomeTaskOwner makes this process an owner of tasks and records as
// cancelled the tasks of owners that died without recording them.
func (p *process) becomeTaskOwner() (store.TaskOwner, func(), error) {
	owner, release, err := p.h.Store.BecomeTaskOwner()
	if err != nil {
		return store.TaskOwner{}, nil, err
	}
	if n, err := p.h.Store.RecoverTasks(owner.ID); errors.Is(err, store.ErrDamaged) {
		release() // no task could be recorded: refuse to serve them
		return store.TaskOwner{}, nil, err
	} else if err != nil {
		p.logf("tasks: cannot look for the tasks of ended servers: %v", err)
	} else if n > 0 {
		p.logf("tasks: recorded %d task(s) cancelled: the server that ran them ended without a chance to", n)
	}
	return owner, release, nil
}

// taskHost is mcpcore.TaskHost over the runner and the store: a task is
// visible only to the endpoint and agent (and identity provider) that
// started it.
type taskHost struct {
	r  *tasks.Runner
	st *store.Store
}

func (h *taskHost) Start(ctx context.Context, t mcpcore.TaskStart, inv *kernel.Invocation) (mcpcore.TaskInfo, error) {
	rec, err := h.r.Start(ctx, store.Task{ID: store.NewTaskID(), Endpoint: t.Caller.Endpoint, Agent: t.Caller.Agent, Issuer: t.Caller.Issuer,
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
	if !ownedBy(t, who) {
		return mcpcore.TaskInfo{}, kernel.Errorf(kernel.CodeNotFound, "no task %q", id) // foreign: the same answer as unknown
	}
	return taskInfo(t), nil
}

// ownedBy reports whether who started t: the same endpoint, agent and
// identity provider (none for a Rukh agent).
func ownedBy(t store.Task, who mcpcore.TaskCaller) bool {
	return t.Endpoint == who.Endpoint && t.Agent == who.Agent && t.Issuer == who.Issuer
}

// Cancel stops the task and waits briefly for it to be recorded, so that
// the answer can say cancelled.
func (h *taskHost) Cancel(id string, who mcpcore.TaskCaller) (mcpcore.TaskInfo, error) {
	if _, err := h.Get(id, who); err != nil {
		return mcpcore.TaskInfo{}, err
	}
	t, err := h.r.Cancel(id)
	if err == nil {
		t, err = home.AwaitFinal(context.Background(), h.st, t, 500*time.Millisecond)
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
