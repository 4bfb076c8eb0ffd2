package commands

import (
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
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
	owner, release, err := a.store.BecomeTaskOwner()
	if err != nil {
		return nil, nil, err
	}
	if n, err := a.store.RecoverTasks(owner.ID); err != nil {
		logf("tasks: cannot look for the tasks of ended servers: %v", err)
	} else if n > 0 {
		logf("tasks: recorded %d task(s) cancelled: the server that ran them ended without a chance to", n)
	}
	r := tasks.New(a.store, owner, inv, logf)
	r.Done = done
	return r, func() {
		r.Close()
		release()
	}, nil
}
