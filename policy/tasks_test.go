package policy

import (
	"errors"
	"strings"
	"testing"

	"github.com/rukh-dev/rukh/kernel"
)

func TestParseProfileTasks(t *testing.T) {
	p, err := ParseProfile([]byte(`{"endpoints":{"local":{"namespace":"n","publish":{"commands":["site.build"]},
		"tasks":{"commands":["site.build"],"ttlMs":5000,"jobTools":true}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got := p.Endpoints["local"].Tasks
	if got == nil || got.MaxTasks != DefaultMaxTasks || got.TTLMs != 5000 || got.TimeoutMs != DefaultTaskTimeoutMs || !got.JobTools {
		t.Fatalf("tasks = %+v", got)
	}
	if !got.Allows("site.build") || got.Allows("site.other") {
		t.Errorf("Allows is wrong: %+v", got)
	}
	l, _ := p.launchOf("local")
	if l == nil || !l.Tasks.Allows("site.build") {
		t.Errorf("launch binding lost the task policy: %+v", l)
	}
	if c := string(p.Canonical()); !strings.Contains(c, `"tasks":{"commands":["site.build"],"maxTasks":16,"ttlMs":5000,"timeoutMs":3600000,"jobTools":true}`) {
		t.Errorf("canonical form: %s", c)
	}
	// required: sorted, each also a task command; absent, the canonical
	// form says nothing of it.
	p, err = ParseProfile([]byte(`{"endpoints":{"local":{"namespace":"n","tasks":{"commands":["z.z","a.b","m.m"],"required":["z.z","a.b"]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got = p.Endpoints["local"].Tasks
	if !got.Requires("a.b") || !got.Requires("z.z") || got.Requires("m.m") || !got.Allows("m.m") {
		t.Errorf("Requires is wrong: %+v", got)
	}
	if c := string(p.Canonical()); !strings.Contains(c, `"tasks":{"commands":["a.b","m.m","z.z"],"required":["a.b","z.z"],"maxTasks":16`) {
		t.Errorf("canonical form: %s", c)
	}
	if (*Tasks)(nil).Requires("a.b") {
		t.Error("a nil policy requires a task")
	}
	// No tasks member: no background work, and the canonical form says nothing.
	p, err = ParseProfile([]byte(`{"endpoints":{"local":{"namespace":"n"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Endpoints["local"].Tasks != nil || strings.Contains(string(p.Canonical()), "tasks") {
		t.Errorf("tasks appeared from nowhere: %s", p.Canonical())
	}
}

func TestParseProfileTasksInvalid(t *testing.T) {
	ep := func(tasks string) string { return `{"endpoints":{"local":{"namespace":"n","tasks":` + tasks + `}}}` }
	for _, tt := range []struct{ name, in, path, msg string }{
		{"no commands", ep(`{}`), "/endpoints/local/tasks", `missing member "commands"`},
		{"unknown member", ep(`{"commands":[],"max":1}`), "/endpoints/local/tasks/max", `unknown member "max"`},
		{"zero maxTasks", ep(`{"commands":[],"maxTasks":0}`), "/endpoints/local/tasks/maxTasks", "at least 1"},
		{"huge maxTasks", ep(`{"commands":[],"maxTasks":5000}`), "/endpoints/local/tasks/maxTasks", "over the maximum of 1024"},
		{"short ttl", ep(`{"commands":[],"ttlMs":10}`), "/endpoints/local/tasks/ttlMs", "at least 1000"},
		{"long timeout", ep(`{"commands":[],"timeoutMs":86400001}`), "/endpoints/local/tasks/timeoutMs", "over the maximum"},
		{"bad command", ep(`{"commands":["Site"]}`), "/endpoints/local/tasks/commands/0", `invalid command "Site"`},
		{"duplicate command", ep(`{"commands":["a.b","a.b"]}`), "/endpoints/local/tasks/commands/1", `duplicate command "a.b"`},
		{"builtin", ep(`{"commands":["rukh.x"]}`), "/endpoints/local/tasks/commands/0", "built-in rukh namespace"},
		{"jobTools type", ep(`{"commands":[],"jobTools":1}`), "/endpoints/local/tasks/jobTools", "cannot"},
		{"null", ep(`{"commands":[],"ttlMs":null}`), "/endpoints/local/tasks/ttlMs", "null is not allowed"},
		{"required not a task command", ep(`{"commands":["a.b","c.d"],"required":["c.d","e.f"]}`), "/endpoints/local/tasks/required/1", `command "e.f" may only run as a task, but tasks.commands does not name it`},
		{"required bad id", ep(`{"commands":["a.b"],"required":["A"]}`), "/endpoints/local/tasks/required/0", `invalid command "A"`},
		{"required duplicate", ep(`{"commands":["a.b"],"required":["a.b","a.b"]}`), "/endpoints/local/tasks/required/1", `duplicate command "a.b"`},
		{"required builtin", ep(`{"commands":["a.b"],"required":["rukh.x"]}`), "/endpoints/local/tasks/required/0", "built-in rukh namespace"},
		{"required type", ep(`{"commands":["a.b"],"required":"a.b"}`), "/endpoints/local/tasks/required", "cannot"},
		{"required null", ep(`{"commands":["a.b"],"required":null}`), "/endpoints/local/tasks/required", "null is not allowed"},
		// Positions are those written, not those of the sorted lists.
		{"commands unsorted", ep(`{"commands":["z.z","a.b","a.b"]}`), "/endpoints/local/tasks/commands/2", `duplicate command "a.b"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseProfile([]byte(tt.in))
			var ke *kernel.Error
			if !errors.As(err, &ke) {
				t.Fatalf("err = %v", err)
			}
			if ke.Code != kernel.CodeInvalid || ke.Path != tt.path || !strings.Contains(ke.Message, tt.msg) {
				t.Errorf("got %s %q %q, want path %q message containing %q", ke.Code, ke.Path, ke.Message, tt.path, tt.msg)
			}
			if strings.Contains(tt.msg, "does not name it") && ke.Hint != `add "e.f" to tasks.commands too, or remove it from tasks.required` {
				t.Errorf("hint %q", ke.Hint)
			}
		})
	}
}

// A ttl shorter than the tasks' deadline is allowed, with a warning.
func TestTaskWarningsShortTTL(t *testing.T) {
	for _, tc := range []struct {
		tasks string
		want  string // "": no warning
	}{
		{`{"commands":[]}`, ""},                                   // both an hour
		{`{"commands":[],"ttlMs":120000,"timeoutMs":120000}`, ""}, // equal
		{`{"commands":[],"timeoutMs":120000}`, ""},                // an hour's ttl, two minutes' run
		{`{"commands":[],"ttlMs":6000,"timeoutMs":120000}`, `endpoint "local": tasks.ttlMs 6000 is shorter than tasks.timeoutMs 120000: `},
		{`{"commands":[],"ttlMs":5000}`, `endpoint "local": tasks.ttlMs 5000 is shorter than tasks.timeoutMs 3600000: `},
	} {
		p, err := ParseProfile([]byte(`{"endpoints":{"local":{"namespace":"n","tasks":` + tc.tasks + `},"plain":{"namespace":"p"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		got := p.TaskWarnings()
		switch {
		case tc.want == "" && len(got) != 0:
			t.Errorf("%s: warnings %q", tc.tasks, got)
		case tc.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], tc.want)):
			t.Errorf("%s: warnings %q, want one starting %q", tc.tasks, got, tc.want)
		}
	}
}
