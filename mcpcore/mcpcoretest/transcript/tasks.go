package transcript

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/tasks"
)

// Tasks is an in-memory mcpcore.TaskHost for harnesses: counter ids,
// the bubble's clock, the harness's invoker. The real host (the tasks
// package over the store) is tested against the real binary.
type Tasks struct {
	inv kernel.Invoker
	mu  sync.Mutex
	n   int
	all map[string]*fakeTask
	wg  sync.WaitGroup
}

type fakeTask struct {
	info   mcpcore.TaskInfo
	who    mcpcore.TaskCaller
	cancel context.CancelFunc
	done   chan struct{}
}

// NewTasks is a task host that runs its tasks through inv.
func NewTasks(inv kernel.Invoker) *Tasks {
	return &Tasks{inv: inv, all: map[string]*fakeTask{}}
}

// Start starts a task, unless the caller keeps MaxTasks already.
func (f *Tasks) Start(ctx context.Context, t mcpcore.TaskStart, inv *kernel.Invocation) (mcpcore.TaskInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	kept := 0
	for _, o := range f.all {
		if o.who.Endpoint == t.Caller.Endpoint && !f.expired(o) {
			kept++
		}
	}
	if kept >= t.MaxTasks {
		return mcpcore.TaskInfo{}, kernel.Errorf(kernel.CodeUnavailable, "maxTasks")
	}
	f.n++
	now := time.Now()
	ft := &fakeTask{who: t.Caller, done: make(chan struct{}),
		info: mcpcore.TaskInfo{ID: fmt.Sprintf("t-%032x", f.n), Status: "working", CreatedAt: now, UpdatedAt: now, TTLMs: t.TTLMs}}
	var rctx context.Context
	rctx, ft.cancel = context.WithCancel(context.WithoutCancel(ctx))
	inv.Limits.Timeout = t.Timeout
	inv.OnProgress = func(p kernel.Progress) {
		if p.Message != "" {
			f.mu.Lock()
			ft.info.StatusMessage, ft.info.UpdatedAt = p.Message, time.Now()
			f.mu.Unlock()
		}
	}
	f.all[ft.info.ID] = ft
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		defer close(ft.done)
		res := f.inv.Invoke(rctx, inv)
		cancelled := rctx.Err() != nil
		ft.cancel()
		f.mu.Lock()
		defer f.mu.Unlock()
		ft.info.Status = "completed"
		if cancelled && res.Outcome == kernel.Cancelled {
			ft.info.Status = "cancelled"
		}
		ft.info.UpdatedAt, ft.info.Result = time.Now(), &res
		if len(res.CommandResult) > fakeRecordLimit {
			// What the runner records when its store refuses the result.
			ft.info.Status, ft.info.StatusMessage, ft.info.Result = "failed", tasks.ReasonUnrecorded, nil
		}
	}()
	return ft.info, nil
}

// fakeRecordLimit is the largest command result the fake keeps, as a
// store backend with a value limit would.
const fakeRecordLimit = 1 << 20

func (f *Tasks) expired(t *fakeTask) bool {
	return !time.Now().Before(t.info.CreatedAt.Add(time.Duration(t.info.TTLMs) * time.Millisecond))
}

func (f *Tasks) get(id string, who mcpcore.TaskCaller) (*fakeTask, error) {
	t := f.all[id]
	if t == nil || t.who != who || f.expired(t) {
		return nil, kernel.Errorf(kernel.CodeNotFound, "no task %q", id)
	}
	return t, nil
}

// Get is task id, when who owns it and it has not expired.
func (f *Tasks) Get(id string, who mcpcore.TaskCaller) (mcpcore.TaskInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, err := f.get(id, who)
	if err != nil {
		return mcpcore.TaskInfo{}, err
	}
	return t.info, nil
}

// Cancel stops task id and waits for it to end.
func (f *Tasks) Cancel(id string, who mcpcore.TaskCaller) (mcpcore.TaskInfo, error) {
	f.mu.Lock()
	t, err := f.get(id, who)
	f.mu.Unlock()
	if err != nil {
		return mcpcore.TaskInfo{}, err
	}
	t.cancel()
	<-t.done
	return f.Get(id, who)
}

// Close stops every task and waits for them.
func (f *Tasks) Close() {
	f.mu.Lock()
	for _, t := range f.all {
		t.cancel()
	}
	f.mu.Unlock()
	f.wg.Wait()
}

// setTaskProfile gives endpoint "local" of b a task policy: test.slow,
// test.ok, test.progress and test.big may become tasks, at most maxTasks of them,
// with the job family when jobs is set; required adds test.echo, and makes
// it and test.ok task-only (tasks.required).
func setTaskProfile(b *policy.Binding, maxTasks int, jobs, required bool) {
	var p map[string]map[string]map[string]any
	if err := json.Unmarshal(b.Profile, &p); err != nil {
		panic(err)
	}
	if p["endpoints"]["local"] == nil {
		return // a revision without the endpoint
	}
	tp := map[string]any{"commands": []string{"test.big", "test.ok", "test.progress", "test.slow"},
		"maxTasks": maxTasks, "ttlMs": 60000, "timeoutMs": 5000, "jobTools": jobs}
	if required {
		tp["commands"] = []string{"test.big", "test.echo", "test.ok", "test.progress", "test.slow"}
		tp["required"] = []string{"test.echo", "test.ok"}
	}
	p["endpoints"]["local"]["tasks"] = tp
	data, err := json.Marshal(p, json.Deterministic(true))
	if err != nil {
		panic(err)
	}
	b.Profile = data
}
