package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

func TestMain(m *testing.M) {
	if len(os.Args) >= 3 && os.Args[1] == fakeArg {
		os.Exit(runFake(os.Args[2]))
	}
	// The result check's time bound is proven on a clock of its own
	// (TestResultCheckTimeBound); every other check gets a bound no busy
	// host reaches, so a descheduled test process never reads as a slow check.
	resultCheckTime = time.Hour
	// RUKH_TEST_SLOTS=1 runs every call through warm containment slots.
	slotsAlways = os.Getenv("RUKH_TEST_SLOTS") != ""
	os.Exit(m.Run())
}

var (
	textDecl       = &ResultDecl{Kind: ResultText}
	structuredDecl = &ResultDecl{Kind: ResultStructured, Schema: jsontext.Value(`{"type":"object","properties":{"id":{"type":"integer"},"title":{"type":"string"},"nest":{"type":"array","items":{"type":"integer"},"maxItems":2},"list":{"type":"array","items":{"type":"integer"},"maxItems":5000}},"required":["id"],"additionalProperties":false}`)}
)

// fakeInvocation runs this test binary as the extension.
func fakeInvocation(t testing.TB, behaviour string, decl *ResultDecl) *Invocation {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &Invocation{
		ID: NewInvocationID(),
		Command: &Command{
			ID:      "fake." + behaviour,
			Path:    []string{"fake", behaviour},
			Execute: Execute{Program: filepath.Base(exe), Args: []string{fakeArg, behaviour}, Result: decl},
		},
		Dir:     filepath.Dir(exe),
		Request: Request{Command: "fake." + behaviour, Input: map[string]any{"title": "milk"}, Explicit: []string{"title"}},
		Limits:  Limits{Timeout: 10 * time.Second},
	}
}

// fastRunner has short grace periods so stop tests stay fast.
// stopBound is how long a stop may take before a test calls it stuck: a
// stop that waits for the child (an hour) or for a deadline it should not
// wait for, never a busy host's slowness.
const stopBound = 30 * time.Second

func fastRunner() *Runner {
	r := NewRunner()
	r.TermGrace = 150 * time.Millisecond
	r.KillGrace = 250 * time.Millisecond
	r.DrainTimeout = 500 * time.Millisecond
	return r
}

func TestInvokeOutcomes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		behaviour string
		decl      *ResultDecl
		outcome   Outcome
		reason    string // substring; "" means the reason must be empty
		result    string // exact compact commandResult; "" means none
	}{
		{"text", textDecl, Succeeded, "", `{"kind":"text","text":"hello milk"}`},
		{"structured", structuredDecl, Succeeded, "", `{"data":{"id":42,"title":"milk"},"kind":"structured"}`},
		{"fail", textDecl, CommandFailed, "no such note", ""},
		{"fail-result-exit0", textDecl, ExecutionFailed, "report says command_failed but the program exited with status 0", ""},
		{"fail-result", textDecl, CommandFailed, "partly done", `{"kind":"text","text":"3 of 5"}`},
		{"fail-bad-result", textDecl, ExecutionFailed, `commandResult: missing "text"`, ""},
		{"succeed-exit1", textDecl, ExecutionFailed, "report says succeeded but the program exited with status 1", ""},
		{"crash", textDecl, ExecutionFailed, "program exited with status 2 without a report", ""},
		{"panic", textDecl, ExecutionFailed, "program exited with status 2 without a report", ""},
		{"signal", textDecl, ExecutionFailed, "program killed by signal SIGKILL without a report", ""},
		{"close-early", textDecl, ExecutionFailed, "program exited with status 0 without a report", ""},
		{"foreign-id", textDecl, ExecutionFailed, `report for invocation "inv_someoneelse"`, ""},
		{"bad-outcome", textDecl, ExecutionFailed, `report outcome "cancelled" is not`, ""},
		{"bad-schema", structuredDecl, ExecutionFailed, "commandResult: /data/id", ""},
		{"wrong-kind", structuredDecl, ExecutionFailed, `commandResult: kind "text", declared "structured"`, ""},
		{"structured", textDecl, ExecutionFailed, `commandResult: kind "structured", declared "text"`, ""},
		{"text", nil, ExecutionFailed, "commandResult: the command declares no result", ""},
		{"no-result", nil, Succeeded, "", ""},
		{"text-extra-member", textDecl, ExecutionFailed, `unknown member "html"`, ""},
		{"big-result", textDecl, ExecutionFailed, "over the limit of 131072", ""},
		{"deep", structuredDecl, ExecutionFailed, "nested deeper than 16", ""},
		{"many-members", structuredDecl, ExecutionFailed, "more than 2048 object members and array elements", ""},
		{"no-result", textDecl, ExecutionFailed, "succeeded report without commandResult", ""},
		{"invalid-json", textDecl, ExecutionFailed, "invalid channel message", ""},
		{"duplicate-key", textDecl, ExecutionFailed, `duplicate object member name "message"`, ""},
		{"unknown-type", textDecl, ExecutionFailed, `unknown message type "hello"`, ""},
		{"second-report", textDecl, ExecutionFailed, "second report", ""},
	}
	for _, tt := range tests {
		name := tt.behaviour
		if tt.decl == nil {
			name += "/undeclared"
		} else {
			name += "/" + tt.decl.Kind
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			inv := fakeInvocation(t, tt.behaviour, tt.decl)
			diag := NewDiagnostics(4096)
			inv.Stdout, inv.Stderr = diag, diag
			res := fastRunner().Invoke(context.Background(), inv)
			if res.InvocationID != inv.ID {
				t.Errorf("invocationId %q, want %q", res.InvocationID, inv.ID)
			}
			if res.Outcome != tt.outcome {
				t.Fatalf("outcome %s (%s), want %s; diagnostics: %s", res.Outcome, res.Reason, tt.outcome, diag)
			}
			if tt.reason == "" && res.Reason != "" || !strings.Contains(res.Reason, tt.reason) {
				t.Errorf("reason %q, want it to contain %q", res.Reason, tt.reason)
			}
			if string(res.CommandResult) != tt.result {
				t.Errorf("commandResult %s, want %s", res.CommandResult, tt.result)
			}
		})
	}
}

func TestInvokeInvokeMessage(t *testing.T) {
	t.Parallel()
	inv := fakeInvocation(t, "echo-invoke", textDecl)
	inv.Request = Request{
		Command: "fake.echo-invoke",
		Input: map[string]any{
			"title": "héllo \"q\"", "big": int64(1<<53 + 1), "amount": Decimal("1.5"),
			"ratio": 0.25, "force": true, "tags": []any{"a", "b"},
		},
		Explicit: []string{"title", "tags"},
	}
	inv.Limits.Timeout = 7 * time.Second
	res := NewRunner().Invoke(context.Background(), inv)
	if res.Outcome != Succeeded {
		t.Fatalf("outcome %s: %s", res.Outcome, res.Reason)
	}
	var cr struct{ Text string }
	if err := json.Unmarshal(res.CommandResult, &cr); err != nil {
		t.Fatal(err)
	}
	want := `{"type":"invoke","invocationId":"` + inv.ID + `","command":"fake.echo-invoke",` +
		`"input":{"amount":"1.5","big":9007199254740993,"force":true,"ratio":0.25,"tags":["a","b"],"title":"héllo \"q\""},` +
		`"explicit":["title","tags"],"interactive":false,"deadlineMs":7000}`
	if cr.Text != want {
		t.Errorf("invoke line\n got %s\nwant %s", cr.Text, want)
	}
}

// An invoke line larger than the channel's socket takes at once reaches
// the program whole: the rest goes through the writer.
func TestInvokeLargeInvokeLine(t *testing.T) {
	t.Parallel()
	const n = 4 << 20
	inv := fakeInvocation(t, "invoke-size", textDecl)
	inv.Request.Input = map[string]any{"title": strings.Repeat("x", n)}
	res := NewRunner().Invoke(context.Background(), inv)
	if res.Outcome != Succeeded {
		t.Fatalf("outcome %s: %s", res.Outcome, res.Reason)
	}
	var cr struct{ Text string }
	if err := json.Unmarshal(res.CommandResult, &cr); err != nil {
		t.Fatal(err)
	}
	var size, xs int
	if _, err := fmt.Sscanf(cr.Text, "%d %d", &size, &xs); err != nil || xs != n || size < n {
		t.Errorf("the program read an invoke line of %q (size, x's), want all %d x's", cr.Text, n)
	}
}

func TestInvokeProcessSetup(t *testing.T) {
	t.Parallel()
	inv := fakeInvocation(t, "env", textDecl)
	r := NewRunner()
	r.Env = func() []string {
		return []string{"PATH=/usr/bin:/bin", "HOME=/home/x", "SECRET=1", "LANG=C.UTF-8", "RUKH_PROTOCOL=evil", "GOFLAGS=-x"}
	}
	res := r.Invoke(context.Background(), inv)
	if res.Outcome != Succeeded {
		t.Fatalf("outcome %s: %s", res.Outcome, res.Reason)
	}
	var cr struct{ Text string }
	json.Unmarshal(res.CommandResult, &cr)
	var got struct {
		Env       []string
		Args      []string
		Cwd       string
		OwnGroup  bool
		InitGroup bool
		ID        string
	}
	if err := json.Unmarshal([]byte(cr.Text), &got); err != nil {
		t.Fatal(err)
	}
	if want := "HOME LANG PATH RUKH_CHANNEL_FD RUKH_INVOCATION_ID RUKH_PROTOCOL"; strings.Join(got.Env, " ") != want {
		t.Errorf("environment %v, want %s", got.Env, want)
	}
	exe, _ := os.Executable()
	if want := []string{exe, fakeArg, "env"}; strings.Join(got.Args, " ") != strings.Join(want, " ") {
		t.Errorf("argv %q, want %q", got.Args, want)
	}
	wd, _ := os.Getwd()
	if got.Cwd != wd {
		t.Errorf("cwd %q, want the caller's %q", got.Cwd, wd)
	}
	// Under rukh's init (PID 1 of the invocation's namespace) the group is
	// the init's; without namespaces, or in a warm slot, the program leads
	// its own.
	contained, _ := namespaced()
	if own := !contained || slotsAlways; got.OwnGroup != own || got.InitGroup == own {
		t.Errorf("own group %v, init's group %v; with namespaces %v", got.OwnGroup, got.InitGroup, contained)
	}
	if got.ID != inv.ID {
		t.Errorf("RUKH_INVOCATION_ID %q, want %q", got.ID, inv.ID)
	}
}

func TestInvokeStdin(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		stdin *strings.Reader
		want  string
	}{{"nil is closed", nil, ""}, {"reader", strings.NewReader("line one\nline two\n"), "line one\nline two\n"}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			inv := fakeInvocation(t, "stdin", textDecl)
			if tt.stdin != nil {
				inv.Stdin = tt.stdin
			}
			res := NewRunner().Invoke(context.Background(), inv)
			want := `{"kind":"text","text":` + strconv.Quote(tt.want) + `}`
			if res.Outcome != Succeeded || string(res.CommandResult) != want {
				t.Errorf("got %s %q %s, want succeeded %s", res.Outcome, res.Reason, res.CommandResult, want)
			}
		})
	}
}

func TestInvokeProgress(t *testing.T) {
	t.Parallel()
	inv := fakeInvocation(t, "progress", textDecl)
	var got []string
	inv.OnProgress = func(p Progress) {
		got = append(got, fmt.Sprintf("%s %v/%v", p.Message, *p.Progress, *p.Total))
	}
	res := NewRunner().Invoke(context.Background(), inv)
	if res.Outcome != Succeeded {
		t.Fatalf("outcome %s: %s", res.Outcome, res.Reason)
	}
	if want := "step 1 1/3|step 2 2/3|step 3 3/3"; strings.Join(got, "|") != want {
		t.Errorf("progress %q, want %q", got, want)
	}
}

func TestInvokeStop(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		behaviour string
		timeout   time.Duration
		cancel    time.Duration // cancel ctx after; 0 means never
		cause     error
		reason    string
	}{
		{"deadline", "hang", 300 * time.Millisecond, 0, nil, "deadline exceeded"},
		{"ctx cancel", "hang", 10 * time.Second, 200 * time.Millisecond, nil, "cancelled"},
		{"ctx cause", "hang", 10 * time.Second, 200 * time.Millisecond, errors.New("client went away"), "cancelled: client went away"},
		{"cancel message honoured", "cancel-aware", 10 * time.Second, 200 * time.Millisecond, nil, "cancelled"},
		{"SIGTERM ignored", "ignore-term", 300 * time.Millisecond, 0, nil, "deadline exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			inv := fakeInvocation(t, tt.behaviour, textDecl)
			inv.Limits.Timeout = tt.timeout
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			if tt.cancel > 0 {
				time.AfterFunc(tt.cancel, func() { cancel(tt.cause) })
			}
			var progress int
			inv.OnProgress = func(Progress) { progress++ }
			start := time.Now()
			res := fastRunner().Invoke(ctx, inv)
			took := time.Since(start)
			if res.Outcome != Cancelled || res.Reason != tt.reason {
				t.Errorf("got %s %q, want cancelled %q", res.Outcome, res.Reason, tt.reason)
			}
			if res.CommandResult != nil {
				t.Errorf("commandResult %s on a cancelled invocation", res.CommandResult)
			}
			if took > stopBound {
				t.Errorf("took %v, want under %v", took, stopBound)
			}
		})
	}
}

// TestInvokeStopTimeline checks the stop sequence: a program ignoring the
// cancel message and SIGTERM gets the cancel, then SIGTERM no earlier than
// the term grace, and dies at the fixed stop deadline, not earlier. Timers
// never fire early, so lower bounds are exact; upper bounds are generous for
// -race and a loaded machine.
func TestInvokeStopTimeline(t *testing.T) {
	t.Parallel()
	inv := fakeInvocation(t, "record-stop", textDecl)
	log := filepath.Join(t.TempDir(), "log")
	inv.Request.Input["title"] = log
	// A deadline the program outlives to be stopped, but long enough for a
	// busy host to start it and install its handler before SIGTERM comes.
	inv.Limits.Timeout = 2 * time.Second
	r := fastRunner() // 150 ms to SIGTERM, then 250 ms to SIGKILL
	start := time.Now()
	res := r.Invoke(context.Background(), inv)
	took := time.Since(start)
	if res.Outcome != Cancelled || res.Reason != "deadline exceeded" {
		t.Fatalf("got %s %q, want cancelled: deadline exceeded", res.Outcome, res.Reason)
	}
	if lo := inv.Limits.Timeout + r.TermGrace + r.KillGrace; took < lo || took > lo+10*time.Second {
		t.Errorf("took %v, want at least %v (and not far more)", took, lo)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	at := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		what, us, _ := strings.Cut(line, " ")
		events = append(events, what)
		at[what], _ = strconv.ParseInt(us, 10, 64)
	}
	if strings.Join(events, " ") != "cancel term" {
		t.Fatalf("the program saw %q, want the cancel message, then SIGTERM", events)
	}
	// The cancel is sent at the deadline and SIGTERM the term grace after
	// it, so SIGTERM reaches the program no earlier than both from the
	// start. (When the program read the cancel says nothing: a busy host
	// may run it late.)
	if term, lo := time.UnixMicro(at["term"]), start.Add(inv.Limits.Timeout+r.TermGrace); term.Before(lo.Add(-time.Millisecond)) {
		t.Errorf("SIGTERM came %v after the start, want at least the deadline and the term grace, %v", term.Sub(start), lo.Sub(start))
	}
}

func TestInvokeCancelledBeforeStart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := NewRunner().Invoke(ctx, fakeInvocation(t, "text", textDecl))
	if res.Outcome != Cancelled || res.Reason != "cancelled" {
		t.Errorf("got %s %q, want cancelled", res.Outcome, res.Reason)
	}
}

func TestInvokeRejects(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		mutate  func(*Invocation)
		outcome Outcome
		reason  string
	}{
		{"passthrough", func(i *Invocation) { i.Command.Execute.Mode = ModePassthrough }, Rejected, "passthrough mode"},
		{"lifetime", func(i *Invocation) { i.Command.Execute.Lifetime = "background" }, Rejected, `lifetime "background"`},
		{"no command", func(i *Invocation) { i.Command = nil }, Rejected, "no command"},
		{"escaping program", func(i *Invocation) { i.Command.Execute.Program = "../x" }, ExecutionFailed, "not inside the release directory"},
		{"missing program", func(i *Invocation) { i.Command.Execute.Program = "no-such-program" }, ExecutionFailed, "cannot start program"},
		{"bad schema", func(i *Invocation) {
			i.Command.Execute.Result = &ResultDecl{Kind: ResultStructured, Schema: jsontext.Value(`{"type":"object"}`)}
		}, ExecutionFailed, "invalid result declaration"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			inv := fakeInvocation(t, "text", textDecl)
			tt.mutate(inv)
			res := NewRunner().Invoke(context.Background(), inv)
			if res.Outcome != tt.outcome || !strings.Contains(res.Reason, tt.reason) {
				t.Errorf("got %s %q, want %s containing %q", res.Outcome, res.Reason, tt.outcome, tt.reason)
			}
		})
	}
}

// gone reports whether no process pid exists any more (not even a zombie:
// rukh reaps what it kills).
func gone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

// TestInvokeKillsGrandchildren: grandchildren holding stdout are killed when
// the leader exits, so the drain ends long before its timeout.
func TestInvokeKillsGrandchildren(t *testing.T) {
	t.Parallel()
	inv := fakeInvocation(t, "grandchildren", textDecl)
	diag := NewDiagnostics(0)
	inv.Stdout = diag
	r := NewRunner()
	r.DrainTimeout = 60 * time.Second // the grandchildren sleep a minute
	start := time.Now()
	res := r.Invoke(context.Background(), inv)
	if res.Outcome != Succeeded {
		t.Fatalf("outcome %s: %s", res.Outcome, res.Reason)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("took %v: the grandchildren kept stdout open", took)
	}
	var cr struct{ Text string }
	json.Unmarshal(res.CommandResult, &cr)
	pgid, err := strconv.Atoi(cr.Text)
	if err != nil {
		t.Fatal(err)
	}
	// In a PID namespace the group id is the namespace's, and the
	// namespace is gone; without one it names the group on the host.
	if contained, _ := namespaced(); contained {
		return
	}
	if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d still exists after Invoke returned (kill: %v)", pgid, err)
	}
}

// TestInvokeLeavesNoProcesses: a grandchild in a session of its own and a
// double-forked one without the invocation's environment are both killed
// and reaped before Invoke returns, with or without the terminal, in the
// invocation's PID namespace (nothing of it is left: no process of the
// host is in it) and without one (each pid is gone).
func TestInvokeLeavesNoProcesses(t *testing.T) {
	t.Parallel()
	for _, noNS := range []bool{false, true} {
		for _, terminal := range []bool{false, true} {
			t.Run(fmt.Sprint("terminal=", terminal, ",namespaces=", !noNS), func(t *testing.T) {
				t.Parallel()
				inv := fakeInvocation(t, "escape", textDecl)
				inv.Terminal = terminal
				r := NewRunner()
				r.NoNamespaces = noNS
				res := r.Invoke(context.Background(), inv)
				if res.Outcome != Succeeded {
					t.Fatalf("outcome %s: %s", res.Outcome, res.Reason)
				}
				var cr struct{ Text string }
				json.Unmarshal(res.CommandResult, &cr)
				f := strings.Fields(cr.Text)
				if len(f) != 3 {
					t.Fatalf("escape reported %q", cr.Text)
				}
				self, _ := os.Readlink("/proc/self/ns/pid")
				if contained, _ := namespaced(); contained && !noNS {
					if f[0] == self {
						t.Fatalf("the program ran in rukh's PID namespace %s", self)
					}
					if left := inNamespace(f[0]); len(left) > 0 {
						t.Errorf("processes %v of the invocation's namespace %s still exist after Invoke returned", left, f[0])
					}
					return
				}
				for _, f := range f[1:] {
					pid, _ := strconv.Atoi(f)
					if pid <= 0 || !gone(pid) {
						t.Errorf("escaped process %q still exists after Invoke returned", f)
						syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			})
		}
	}
}

// inNamespace lists the host's processes in PID namespace ns (as
// /proc/PID/ns/pid names it), but for the init of a warm slot, which
// outlives its calls.
func inNamespace(ns string) []int {
	inits := slotInits()
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if l, _ := os.Readlink("/proc/" + e.Name() + "/ns/pid"); l == ns && !inits[pid] {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestInvokeSession: without the terminal the program has no controlling
// terminal: where rukh has one it is in a new session (led by the program,
// or by its init under namespaces), where rukh has none it stays in rukh's
// session; with the terminal, it stays in the caller's session. Not
// parallel: it sets what rukh knows of its own terminal.
func TestInvokeSession(t *testing.T) {
	contained, _ := namespaced()
	newSession := fmt.Sprintf("leader=%v init=%v tty_nr=0", !contained, contained)
	for _, rukhTTY := range []string{"kept", "checked"} {
		cttyState.mu.Lock()
		cttyState.checked, cttyState.none = rukhTTY == "kept", false
		cttyState.mu.Unlock()
		own := !noControllingTerminal()
		for _, tt := range []struct {
			terminal, noNS bool
			want           string
		}{
			{false, true, map[bool]string{true: "leader=true init=false tty_nr=0", false: "leader=false init=false tty_nr=0"}[own]},
			{true, true, "leader=false init=false"},
			{false, false, map[bool]string{true: newSession, false: "leader=false init=false tty_nr=0"}[own]},
			{true, false, "leader=false init=false"},
		} {
			inv := fakeInvocation(t, "session", textDecl)
			inv.Terminal = tt.terminal
			r := NewRunner()
			r.NoNamespaces = tt.noNS
			res := r.Invoke(context.Background(), inv)
			var cr struct{ Text string }
			json.Unmarshal(res.CommandResult, &cr)
			if res.Outcome != Succeeded || !strings.HasPrefix(cr.Text, tt.want) {
				t.Errorf("rukh's terminal %s (own session %v), terminal %v, namespaces %v: got %s %q %q, want %q", rukhTTY, own, tt.terminal, !tt.noNS, res.Outcome, res.Reason, cr.Text, tt.want)
			}
		}
	}
	cttyState.mu.Lock()
	cttyState.checked = false
	cttyState.mu.Unlock()
}

func TestInvokeFloodOutput(t *testing.T) {
	t.Parallel()
	inv := fakeInvocation(t, "flood-output", textDecl)
	diag := NewDiagnostics(64 << 10)
	inv.Stdout, inv.Stderr = diag, diag
	res := NewRunner().Invoke(context.Background(), inv)
	if res.Outcome != Succeeded || string(res.CommandResult) != `{"kind":"text","text":"flooded"}` {
		t.Fatalf("got %s %q %s", res.Outcome, res.Reason, res.CommandResult)
	}
	if n := len(diag.Bytes()); n != 64<<10 {
		t.Errorf("kept %d bytes, want %d", n, 64<<10)
	}
	if got, want := diag.Dropped(), int64(16<<20-64<<10); got != want {
		t.Errorf("dropped %d bytes, want %d (drained to the end)", got, want)
	}
}

func TestInvokeFloodChannel(t *testing.T) {
	t.Parallel()
	inv := fakeInvocation(t, "flood-channel", textDecl)
	start := time.Now()
	res := fastRunner().Invoke(context.Background(), inv)
	if res.Outcome != ExecutionFailed || !strings.Contains(res.Reason, fmt.Sprintf("channel message over %d bytes", MaxResultBytes+channelOverhead)) {
		t.Errorf("got %s %q, want execution_failed for an oversized line", res.Outcome, res.Reason)
	}
	if took := time.Since(start); took > stopBound {
		t.Errorf("took %v", took)
	}
}

func TestInvokeConcurrent(t *testing.T) {
	t.Parallel()
	r := NewRunner()
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for i := range 16 {
		wg.Go(func() {
			inv := fakeInvocation(t, "text", textDecl)
			inv.Request.Input["title"] = strconv.Itoa(i)
			res := r.Invoke(context.Background(), inv)
			if want := fmt.Sprintf(`{"kind":"text","text":"hello %d"}`, i); res.Outcome != Succeeded || string(res.CommandResult) != want || res.InvocationID != inv.ID {
				errs <- fmt.Sprintf("%d: %s %q %s", i, res.Outcome, res.Reason, res.CommandResult)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestNewInvocationID(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 100 {
		id := NewInvocationID()
		rest, ok := strings.CutPrefix(id, "inv_")
		if !ok || len(rest) != 26 || strings.Trim(rest, "abcdefghijklmnopqrstuvwxyz234567") != "" {
			t.Fatalf("id %q is not inv_ + 26 base32 characters", id)
		}
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
	}
	inv := fakeInvocation(t, "text", textDecl)
	inv.ID = ""
	r := NewRunner()
	r.NewID = func() string { return "inv_fixed" }
	if res := r.Invoke(context.Background(), inv); res.InvocationID != "inv_fixed" || res.Outcome != Succeeded {
		t.Errorf("got %s %s %q, want inv_fixed succeeded", res.InvocationID, res.Outcome, res.Reason)
	}
}

func TestRunPassthrough(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	c := &Command{ID: "fake.pt", Execute: Execute{Program: filepath.Base(exe), Mode: ModePassthrough, Args: []string{fakeArg, "passthrough"}}}
	var out strings.Builder
	code, err := RunPassthrough(context.Background(), filepath.Dir(exe), c, []string{"--raw", "a b", "$HOME"}, nil, &out, nil)
	if err != nil || code != 7 {
		t.Fatalf("exit %d, err %v; want 7", code, err)
	}
	if got := out.String(); got != "args=--raw,a b,$HOME\n" {
		t.Errorf("output %q", got)
	}

	t.Run("cancel", func(t *testing.T) {
		t.Parallel()
		c := &Command{ID: "fake.pt", Execute: Execute{Program: filepath.Base(exe), Mode: ModePassthrough, Args: []string{fakeArg, "passthrough-hang"}}}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		code, err := RunPassthrough(ctx, filepath.Dir(exe), c, nil, nil, nil, nil)
		if err != nil || code != 128+int(syscall.SIGTERM) {
			t.Errorf("exit %d, err %v; want %d", code, err, 128+int(syscall.SIGTERM))
		}
	})
	t.Run("missing program", func(t *testing.T) {
		t.Parallel()
		c := &Command{ID: "fake.pt", Execute: Execute{Program: "nope"}}
		if _, err := RunPassthrough(context.Background(), t.TempDir(), c, nil, nil, nil, nil); ErrorCode(err) != CodeUnavailable {
			t.Errorf("err %v, want unavailable", err)
		}
	})
}

// TestInvokeFileStreams: an *os.File (the CLI's terminal) is handed to the
// child as is, with no copying goroutine.
func TestInvokeFileStreams(t *testing.T) {
	t.Parallel()
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	inv := fakeInvocation(t, "crash", textDecl)
	inv.Stderr = f
	res := NewRunner().Invoke(context.Background(), inv)
	if res.Outcome != ExecutionFailed {
		t.Fatalf("outcome %s: %s", res.Outcome, res.Reason)
	}
	got, _ := os.ReadFile(f.Name())
	if string(got) != "fatal: something broke\n" {
		t.Errorf("stderr file %q", got)
	}
}
