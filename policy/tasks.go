package policy

import (
	"fmt"
	"maps"
	"slices"
)

// Background work of an endpoint (docs/tasks.md): which published commands may
// run as tasks, and the bounds every task of the endpoint runs under.
const (
	DefaultMaxTasks      = 16
	DefaultTaskTTLMs     = 60 * 60 * 1000
	DefaultTaskTimeoutMs = 60 * 60 * 1000

	MaxMaxTasks  = 1024
	MinTaskTTLMs = 1000
	MaxTaskTTLMs = 7 * 24 * 60 * 60 * 1000
)

// Tasks is an endpoint's task policy. Nil on an Endpoint: nothing runs in
// the background. Zero numbers take their defaults.
type Tasks struct {
	Commands []string `json:"commands"`
	// Required are the commands among Commands that may only run as
	// tasks: never as a direct call.
	Required  []string `json:"required,omitempty"`
	MaxTasks  int      `json:"maxTasks"`
	TTLMs     int64    `json:"ttlMs"`
	TimeoutMs int64    `json:"timeoutMs"`
	// JobTools publishes the explicit job family (status, result, cancel)
	// for clients without the Tasks extension.
	JobTools bool `json:"jobTools"`
}

type rawTasks struct {
	Commands  []string `json:"commands"`
	Required  []string `json:"required"`
	MaxTasks  *int     `json:"maxTasks"`
	TTLMs     *int64   `json:"ttlMs"`
	TimeoutMs *int64   `json:"timeoutMs"`
	JobTools  *bool    `json:"jobTools"`
}

// tasks checks the explicit members (an explicit zero is a mistake, not a
// request for the default) and returns the policy with defaults.
func (r *rawTasks) tasks(path string) (*Tasks, error) {
	if r == nil {
		return nil, nil
	}
	t := &Tasks{Commands: r.Commands, Required: r.Required, JobTools: r.JobTools != nil && *r.JobTools}
	for _, f := range []struct {
		member   string
		v        *int64
		min, max int64
		dst      *int64
	}{
		{"maxTasks", widenInt(r.MaxTasks), 1, MaxMaxTasks, nil},
		{"ttlMs", r.TTLMs, MinTaskTTLMs, MaxTaskTTLMs, &t.TTLMs},
		{"timeoutMs", r.TimeoutMs, 1, MaxTimeoutMs, &t.TimeoutMs},
	} {
		if f.v == nil {
			continue
		}
		if *f.v < f.min {
			return nil, invalidAt(path+"/"+f.member, fmt.Sprintf("%s must be at least %d", f.member, f.min))
		}
		if *f.v > f.max {
			return nil, invalidAt(path+"/"+f.member, fmt.Sprintf("%s %d is over the maximum of %d", f.member, *f.v, f.max))
		}
		if f.dst != nil {
			*f.dst = *f.v
		} else {
			t.MaxTasks = int(*f.v)
		}
	}
	if r.Commands == nil {
		return nil, invalidAt(path, "missing member \"commands\"")
	}
	// Checked here in the order written, so an error points at its element.
	if err := checkTaskLists(path, r.Commands, r.Required); err != nil {
		return nil, err
	}
	return t.withDefaults(), nil
}

// checkTaskLists checks the command lists of a task policy: ids, no
// duplicates, and every required command also among those that may run as
// tasks.
func checkTaskLists(path string, commands, required []string) error {
	if err := checkPublishList(path+"/commands", "command", commands, commandIDs, "[a-z0-9][a-z0-9._-]{0,127}"); err != nil {
		return err
	}
	if err := checkPublishList(path+"/required", "command", required, commandIDs, "[a-z0-9][a-z0-9._-]{0,127}"); err != nil {
		return err
	}
	for i, id := range required {
		if !slices.Contains(commands, id) {
			e := invalidAt(fmt.Sprintf("%s/required/%d", path, i), fmt.Sprintf("command %q may only run as a task, but tasks.commands does not name it", id))
			e.Hint = fmt.Sprintf("add %q to tasks.commands too, or remove it from tasks.required", id)
			return e
		}
	}
	return nil
}

func widenInt(p *int) *int64 {
	if p == nil {
		return nil
	}
	v := int64(*p)
	return &v
}

func (t *Tasks) withDefaults() *Tasks {
	if t == nil {
		return nil
	}
	c := *t
	if c.MaxTasks == 0 {
		c.MaxTasks = DefaultMaxTasks
	}
	if c.TTLMs == 0 {
		c.TTLMs = DefaultTaskTTLMs
	}
	if c.TimeoutMs == 0 {
		c.TimeoutMs = DefaultTaskTimeoutMs
	}
	c.Commands = sortedCopy(c.Commands)
	if len(c.Required) > 0 {
		c.Required = sortedCopy(c.Required)
	} else {
		c.Required = nil
	}
	return &c
}

func (t *Tasks) validate(path string) error {
	if t == nil {
		return nil
	}
	if err := checkTaskLists(path, t.Commands, t.Required); err != nil {
		return err
	}
	t = t.withDefaults()
	for _, f := range []struct {
		member   string
		v        int64
		min, max int64
	}{
		{"maxTasks", int64(t.MaxTasks), 1, MaxMaxTasks},
		{"ttlMs", t.TTLMs, MinTaskTTLMs, MaxTaskTTLMs},
		{"timeoutMs", t.TimeoutMs, 1, MaxTimeoutMs},
	} {
		if f.v < f.min || f.v > f.max {
			return invalidAt(path+"/"+f.member, fmt.Sprintf("%s %d is out of range (%d to %d)", f.member, f.v, f.min, f.max))
		}
	}
	return nil
}

// Allows reports whether command may run as a task. A nil policy allows
// nothing.
func (t *Tasks) Allows(command string) bool {
	return t != nil && slices.Contains(t.Commands, command)
}

// Requires reports whether command may only run as a task: a call that
// cannot become one is refused, never run directly.
func (t *Tasks) Requires(command string) bool {
	return t != nil && slices.Contains(t.Required, command)
}

// TasksOf is the task policy of endpoint in a binding's profile (nil: none,
// or no such endpoint).
func (b *Binding) TasksOf(endpoint string) *Tasks {
	l, err := LaunchOf(b.Profile, endpoint)
	if err != nil || l == nil {
		return nil
	}
	return l.Tasks
}

// taskWarnings names the task commands the endpoint does not publish:
// they never run as tasks; and a ttl shorter than the tasks' deadline.
func taskWarnings(epName string, ep Endpoint, tools []Tool) []string {
	if ep.Tasks == nil {
		return nil
	}
	return append(shortTTLWarning(epName, ep.Tasks), unpublishedWarnings(epName, "tasks.commands", sortedCopy(ep.Tasks.Commands), tools)...)
}

// shortTTLWarning warns of a ttl shorter than the tasks' deadline: the
// result of a task that runs that long is kept for less time than it ran,
// which an agent that comes back for it late easily misses.
func shortTTLWarning(epName string, t *Tasks) []string {
	t = t.withDefaults()
	if t == nil || t.TTLMs >= t.TimeoutMs {
		return nil
	}
	return []string{fmt.Sprintf("endpoint %q: tasks.ttlMs %d is shorter than tasks.timeoutMs %d: a task's result is kept only ttlMs after it ends, "+
		"less than the task may run; raise tasks.ttlMs to at least tasks.timeoutMs", epName, t.TTLMs, t.TimeoutMs)}
}

// TaskWarnings are the warnings of the profile's task policies that need
// no publish to tell (a draft set with 'rukh policy set').
func (p *Profile) TaskWarnings() []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(p.Endpoints)) {
		if ep := p.Endpoints[name]; ep.Tasks != nil {
			out = append(out, shortTTLWarning(name, ep.Tasks)...)
		}
	}
	return out
}
