//go:build linux && amd64 && !rukh_portable

package kernel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// resetWarm ends every idle warm init, so that a test counts its own.
func resetWarm(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		warmPool.mu.Lock()
		var idle []*warmInit
		filling := false
		for k := range warmKinds {
			idle = append(idle, warmPool.idle[k]...)
			warmPool.idle[k] = nil
			filling = filling || warmPool.filling[k]
		}
		warmPool.mu.Unlock()
		for _, w := range idle {
			w.timer.Stop()
			w.drop()
		}
		if !filling || time.Now().After(deadline) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitWarm waits until n warm inits of kind are idle.
func waitWarm(t *testing.T, kind, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		warmPool.mu.Lock()
		got := len(warmPool.idle[kind])
		warmPool.mu.Unlock()
		if got >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("fewer than %d warm confining inits became idle", n)
}

// TestWarmInitConfinesAsAFreshOne: a confined call of a serve process,
// run by a warm init made ahead, reaches exactly what the same call under
// a fresh init reaches: no network but its loopback, no read outside its
// grants, no write outside its scratch directory, no descriptor beyond
// stdio and the channel, PID 2 of a namespace of its own, the protocol's
// environment, rukh's working directory; and the warm init it took is
// gone with the call.
func TestWarmInitConfinesAsAFreshOne(t *testing.T) {
	if !warmConfines() {
		t.Skip("no warm confining inits here")
	}
	kind := warmKind(benchTemplate)
	resetWarm(t)
	t.Cleanup(func() { resetWarm(t) })
	probe := func(serve bool) (map[string]any, string) {
		t.Helper()
		inv := confinedFake(t, "confined-probe", benchTemplate)
		diag := NewDiagnostics(4096)
		inv.Stdout, inv.Stderr = diag, diag
		inv.Stdin = strings.NewReader("in")
		r := fastRunner()
		r.Slots = serve
		res := r.Invoke(context.Background(), inv)
		if res.Outcome != Succeeded {
			t.Fatalf("confined probe (serve %v): %s %s\n%s", serve, res.Outcome, res.Reason, diag.String())
		}
		var out struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(res.CommandResult, &out); err != nil {
			t.Fatalf("%s: %v", res.CommandResult, err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out.Text), &m); err != nil {
			t.Fatalf("%s: %v", out.Text, err)
		}
		return m, out.Text
	}
	fresh, freshText := probe(false)
	want := map[string]any{"ifaces": []any{"lo"}, "readEtc": "refused", "writeOutside": "refused", "writeScratch": "ok", "pid": 2.0, "ppid": 1.0, "fds": nil}
	for k, v := range want {
		if b, _ := json.Marshal(fresh[k]); string(b) != func() string { w, _ := json.Marshal(v); return string(w) }() {
			t.Fatalf("fresh init: %s is %s, want %v (%s)", k, b, v, freshText)
		}
	}
	probe(true) // the first call of a serve process makes its own
	waitWarm(t, kind, warmSpares)
	pids := warmInitPids(kind)
	warm, warmText := probe(true)
	// The call took one (and its end started another).
	if after := warmInitPids(kind); slices.ContainsFunc(pids, func(p int) bool { return !slices.Contains(after, p) }) == false {
		t.Fatalf("the call took none of the warm inits %v (idle after: %v)", pids, after)
	}
	fresh["args"], warm["args"] = nil, nil // the fake's path differs per test dir
	fb, _ := json.Marshal(fresh)
	wb, _ := json.Marshal(warm)
	if string(fb) != string(wb) {
		t.Fatalf("a warm init's call reaches what a fresh one's does not:\nfresh %s\nwarm  %s\n(%s)", fb, wb, warmText)
	}
	wd, _ := os.Getwd()
	if warm["cwd"] != wd {
		t.Fatalf("warm init's program runs in %v, want rukh's %s", warm["cwd"], wd)
	}
	if warm["stdin"] != "[105 110] <nil>" {
		t.Fatalf("warm init's program read stdin %v", warm["stdin"])
	}
}

// warmInitPids are the pids of the idle warm inits of kind.
func warmInitPids(kind int) []int {
	warmPool.mu.Lock()
	defer warmPool.mu.Unlock()
	var ps []int
	for _, w := range warmPool.idle[kind] {
		ps = append(ps, w.cmd.Process.Pid)
	}
	return ps
}

// TestWarmInitHealthy: an idle warm init is healthy while it lives, and
// not once it died.
func TestWarmInitHealthy(t *testing.T) {
	if !warmConfines() {
		t.Skip("no warm confining inits here")
	}
	confinedFake(t, "text", benchTemplate) // skips where the host cannot confine
	w, err := spawnWarm(warmKind(benchTemplate))
	if err != nil {
		t.Fatal(err)
	}
	defer w.drop()
	if !w.healthy() {
		t.Fatal("a live idle warm init is not healthy")
	}
	syscall.Kill(w.cmd.Process.Pid, syscall.SIGKILL)
	waitGone(t, w.cmd.Process.Pid)
	if w.healthy() {
		t.Fatal("a killed idle warm init is healthy")
	}
}

// TestWarmInitDroppedIdleIsNotUsed: a warm init that died while idle is
// not sent a call (no send fails); the call gets another, started on its
// path, and succeeds.
func TestWarmInitDroppedIdleIsNotUsed(t *testing.T) {
	if !warmConfines() {
		t.Skip("no warm confining inits here")
	}
	kind := warmKind(benchTemplate)
	resetWarm(t)
	t.Cleanup(func() { resetWarm(t) })
	for i := range 2 {
		refillWarm(kind)
		waitWarm(t, kind, warmSpares)
		for _, pid := range warmInitPids(kind) {
			syscall.Kill(pid, syscall.SIGKILL)
			waitGone(t, pid)
		}
		inv := confinedFake(t, "text", benchTemplate)
		diag := NewDiagnostics(4096)
		inv.Stdout, inv.Stderr = diag, diag
		r := fastRunner()
		r.Slots = true
		failed := warmPool.sendFailed.Load()
		res := r.Invoke(context.Background(), inv)
		if res.Outcome != Succeeded || !strings.Contains(string(res.CommandResult), "hello milk") {
			t.Fatalf("round %d: %s %s %s\n%s", i, res.Outcome, res.Reason, res.CommandResult, diag.String())
		}
		if n := warmPool.sendFailed.Load() - failed; n != 0 {
			t.Fatalf("round %d: %d dead warm inits were sent the call", i, n)
		}
		resetWarm(t) // the call's refill, before the next round's
	}
}

// TestWarmInitMessageRefusedKeepsTheInits: a call whose message the
// socket refuses for the message's own sake (here its size, over what a
// lowered send buffer takes) starts a fresh init and succeeds, and the
// live warm inits are neither killed nor given up.
func TestWarmInitMessageRefusedKeepsTheInits(t *testing.T) {
	if !warmConfines() {
		t.Skip("no warm confining inits here")
	}
	kind := warmKind(benchTemplate)
	resetWarm(t)
	t.Cleanup(func() { resetWarm(t) })
	refillWarm(kind)
	waitWarm(t, kind, warmSpares)
	warmPool.mu.Lock()
	for _, w := range warmPool.idle[kind] {
		rc, _ := w.conn.SyscallConn()
		rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, 1) })
	}
	warmPool.mu.Unlock()
	pids := warmInitPids(kind)
	inv := confinedFake(t, "text", benchTemplate)
	// Over the smallest send buffer, under what a warm init takes.
	inv.Command.Execute.Args = append(inv.Command.Execute.Args, strings.Repeat("x", 16<<10))
	diag := NewDiagnostics(4096)
	inv.Stdout, inv.Stderr = diag, diag
	r := fastRunner()
	r.Slots = true
	failed := warmPool.sendFailed.Load()
	res := r.Invoke(context.Background(), inv)
	if res.Outcome != Succeeded || !strings.Contains(string(res.CommandResult), "hello milk") {
		t.Fatalf("%s %s %s\n%s", res.Outcome, res.Reason, res.CommandResult, diag.String())
	}
	if n := warmPool.sendFailed.Load() - failed; n != 1 {
		t.Fatalf("%d sends failed, want the one refused", n)
	}
	time.Sleep(50 * time.Millisecond) // past the spares' delay
	for _, pid := range pids {
		if syscall.Kill(pid, 0) != nil || !slices.Contains(warmInitPids(kind), pid) {
			t.Fatalf("the live warm init %d was ended or given up for a message it refused (idle now: %v)", pid, warmInitPids(kind))
		}
	}
}

// warmServerArg runs this test binary as a serving rukh: warm
// confining inits made ahead, then one confined call under one of them,
// escape-hang, its stdout on ours.
const warmServerArg = "rukh-test-warm-server"

func init() {
	if len(os.Args) < 2 || os.Args[1] != warmServerArg {
		return
	}
	exe, _ := os.Executable()
	// No scratch directory: the killed server would leave it for a sweep.
	conf := Confine{Network: NetworkNone, Read: []string{PathRelease}}
	// /proc for os.Executable (and the call's own /proc, mounted by its
	// init in a mount namespace of its own).
	conf.Read = append(conf.Read, "/proc")
	conf.Write = append(conf.Write, "/dev/null") // the escapees' stdin
	for _, d := range []string{"/lib", "/lib64", "/usr"} {
		if _, err := os.Stat(d); err == nil {
			conf.Read = append(conf.Read, d)
		}
	}
	kind := warmKind(conf)
	refillWarm(kind)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		warmPool.mu.Lock()
		n := len(warmPool.idle[kind])
		warmPool.mu.Unlock()
		if n == warmSpares {
			break
		}
	}
	r := NewRunner()
	r.Slots = true
	res := r.Invoke(context.Background(), &Invocation{
		Command: &Command{ID: "fake.escape-hang", Path: []string{"fake", "escape-hang"},
			Execute: Execute{Program: filepath.Base(exe), Args: []string{fakeArg, "escape-hang"}, Result: textDecl}},
		Dir:     filepath.Dir(exe),
		Request: Request{Command: "fake.escape-hang"},
		Limits:  Limits{Timeout: time.Minute, Confine: &conf, Template: "t"},
		Stdout:  os.Stdout,
		Stderr:  os.Stderr,
	})
	fmt.Fprintln(os.Stderr, res.Outcome, res.Reason)
	os.Exit(3)
}

// TestWarmInitKill9: a kill -9 of a serving rukh takes its warm confining
// inits with it, idle or running a call, and the call's whole tree: the
// program and what it left in sessions of their own.
func TestWarmInitKill9(t *testing.T) {
	if !warmConfines() {
		t.Skip("no warm confining inits here")
	}
	confinedFake(t, "text", benchTemplate) // skips where the host cannot confine
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	srv := exec.Command(exe, warmServerArg)
	out, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	srv.Stderr = &stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Kill()
	if line, _ := bufio.NewReader(out).ReadString('\n'); line == "" {
		srv.Wait()
		t.Fatalf("the served call did not start its escapees: %s", stderr.String())
	}
	set := map[int]bool{}
	newTableIndex(plat.snapshot()).closure(set, srv.Process.Pid)
	delete(set, srv.Process.Pid)
	warmIdle := 0
	for pid := range set {
		if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); strings.HasPrefix(string(b), WarmArgv0+"\x00") {
			warmIdle++
		}
	}
	// The call's init, the program, its two escapees, and a warm init
	// idle (the one left of the two made ahead, or its refill).
	if len(set) < 5 || warmIdle < 1 {
		t.Fatalf("the server's tree is %v (%d warm inits idle), want the call's init, the program, two escapees and an idle warm init", set, warmIdle)
	}
	srv.Process.Signal(syscall.SIGKILL)
	srv.Wait()
	for pid := range set {
		waitGone(t, pid)
	}
}

// TestWarmInitTemplates: templates whose steps differ (a pids cgroup on
// its own descriptor, a /proc of the call's own in a mount namespace,
// network host) run under warm inits as under fresh ones.
func TestWarmInitTemplates(t *testing.T) {
	if !warmConfines() {
		t.Skip("no warm confining inits here")
	}
	resetWarm(t)
	t.Cleanup(func() { resetWarm(t) })
	for _, tt := range []struct {
		name string
		conf Confine
	}{
		{"processes", Confine{Network: NetworkNone, Read: []string{PathRelease}, Processes: 8}},
		{"own /proc", Confine{Network: NetworkNone, Read: []string{PathRelease, "/proc"}}},
		{"network host", Confine{Read: []string{PathRelease}, Write: []string{PathScratch}}},
	} {
		if tt.conf.Processes > 0 && os.Getuid() != 0 {
			continue // rukh's own init watches processes, without a pids cgroup
		}
		kind := warmKind(tt.conf)
		refillWarm(kind)
		waitWarm(t, kind, warmSpares)
		before := warmInitPids(kind)
		inv := confinedFake(t, "text", tt.conf)
		diag := NewDiagnostics(4096)
		inv.Stdout, inv.Stderr = diag, diag
		r := fastRunner()
		r.Slots = true
		res := r.Invoke(context.Background(), inv)
		if res.Outcome != Succeeded || !strings.Contains(string(res.CommandResult), "hello milk") {
			if tt.conf.Processes > 0 && strings.Contains(res.Reason, "pids cgroup") {
				t.Logf("%s: no pids cgroup here: %s", tt.name, res.Reason)
				continue
			}
			t.Fatalf("%s: %s %s %s\n%s", tt.name, res.Outcome, res.Reason, res.CommandResult, diag.String())
		}
		if after := warmInitPids(kind); len(before) > 0 && slices.Contains(after, before[len(before)-1]) {
			t.Fatalf("%s: the call did not take the warm init %d", tt.name, before[len(before)-1])
		}
		waitWarm(t, kind, warmSpares)
	}
}

// TestWarmInitStop: a confined call under a warm init is stopped as under
// a fresh one: past its deadline, the program that ignores SIGTERM is
// killed with its init, and the call ends cancelled in time.
func TestWarmInitStop(t *testing.T) {
	if !warmConfines() {
		t.Skip("no warm confining inits here")
	}
	kind := warmKind(benchTemplate)
	resetWarm(t)
	t.Cleanup(func() { resetWarm(t) })
	refillWarm(kind)
	waitWarm(t, kind, warmSpares)
	for _, behaviour := range []string{"hang", "ignore-term"} {
		before := warmInitPids(kind)
		inv := confinedFake(t, behaviour, benchTemplate)
		inv.Limits.Timeout = 300 * time.Millisecond
		r := fastRunner()
		r.Slots = true
		start := time.Now()
		res := r.Invoke(context.Background(), inv)
		took := time.Since(start)
		if res.Outcome != Cancelled || res.Reason != "deadline exceeded" || took > stopBound {
			t.Errorf("%s: got %s %q after %v, want cancelled %q within %v", behaviour, res.Outcome, res.Reason, took, "deadline exceeded", stopBound)
		}
		if after := warmInitPids(kind); slices.Contains(after, before[len(before)-1]) {
			t.Fatalf("%s: the call did not take the warm init %d", behaviour, before[len(before)-1])
		} else {
			waitGone(t, before[len(before)-1])
		}
		waitWarm(t, kind, warmSpares)
	}
}

// TestWarmInitBackoff: while warm inits cannot be started, a confined
// call starts a fresh init (and succeeds), and none is tried meanwhile.
func TestWarmInitBackoff(t *testing.T) {
	if !warmConfines() {
		t.Skip("no warm confining inits here")
	}
	kind := warmKind(benchTemplate)
	resetWarm(t)
	t.Cleanup(func() {
		warmPool.mu.Lock()
		warmPool.retryAt = time.Time{}
		warmPool.mu.Unlock()
		resetWarm(t)
	})
	warmPool.mu.Lock()
	warmPool.retryAt = time.Now().Add(time.Minute)
	warmPool.mu.Unlock()
	spawned := warmPool.spawned.Load()
	inv := confinedFake(t, "text", benchTemplate)
	diag := NewDiagnostics(4096)
	inv.Stdout, inv.Stderr = diag, diag
	r := fastRunner()
	r.Slots = true
	if res := r.Invoke(context.Background(), inv); res.Outcome != Succeeded || !strings.Contains(string(res.CommandResult), "hello milk") {
		t.Fatalf("%s %s %s\n%s", res.Outcome, res.Reason, res.CommandResult, diag.String())
	}
	time.Sleep(50 * time.Millisecond) // past the spares' delay
	if n := warmPool.spawned.Load() - spawned; n > 0 || len(warmInitPids(kind)) > 0 {
		t.Fatalf("%d warm inits started while starting them was backed off", n)
	}
}

// TestWarmInitBackoffPreparesOnce: a serve process's call prepared while
// starting warm inits is backed off, and none is idle, is prepared for a
// fresh init alone (one Landlock ruleset, one network namespace taken),
// and for a warm one otherwise.
func TestWarmInitBackoffPreparesOnce(t *testing.T) {
	if !warmConfines() {
		t.Skip("no warm confining inits here")
	}
	resetWarm(t)
	t.Cleanup(func() {
		warmPool.mu.Lock()
		warmPool.retryAt = time.Time{}
		warmPool.mu.Unlock()
		resetWarm(t)
	})
	for _, backoff := range []bool{false, true} {
		warmPool.mu.Lock()
		warmPool.retryAt = time.Time{}
		if backoff {
			warmPool.retryAt = time.Now().Add(time.Minute)
		}
		warmPool.mu.Unlock()
		u, refuse := initFor(&benchTemplate, "bench", false)
		if refuse != "" || !u.machineInit {
			t.Skip("the machine-code init does not confine here", refuse)
		}
		u.serve = true
		if err := u.confineSpec(&benchTemplate, "bench", t.TempDir(), t.TempDir(), false); err != nil {
			t.Fatal(err)
		}
		warm := u.machine != nil && u.machine.warm
		u.machine.close()
		resetWarm(t) // the spares its close asks for
		if warm == backoff {
			t.Fatalf("backed off %v: the call was prepared for a warm init %v", backoff, warm)
		}
	}
}

// TestWarmInitStartFails: a warm init that cannot be started leaves the
// call to a fresh init, which succeeds; no other is tried until the pause
// is over, each failure in a row pauses longer, and the log is told once.
func TestWarmInitStartFails(t *testing.T) {
	if !warmConfines() {
		t.Skip("no warm confining inits here")
	}
	confinedFake(t, "text", benchTemplate) // skips where the host cannot confine
	resetWarm(t)
	log := logged(t)
	var tries atomic.Int64
	spawnWarm = func(int) (*warmInit, error) {
		tries.Add(1)
		return nil, errors.New("no room for a warm init")
	}
	t.Cleanup(func() {
		spawnWarm = spawnWarmInit
		warmPool.mu.Lock()
		warmPool.retryAt, warmPool.backoff = time.Time{}, 0
		warmPool.mu.Unlock()
		resetWarm(t)
	})
	var pauses []time.Duration
	for i := range 3 {
		warmPool.mu.Lock()
		warmPool.retryAt = time.Time{} // as if the last pause were over
		warmPool.mu.Unlock()
		before := tries.Load()
		inv := confinedFake(t, "text", benchTemplate)
		diag := NewDiagnostics(4096)
		inv.Stdout, inv.Stderr = diag, diag
		r := fastRunner()
		r.Slots = true
		if res := r.Invoke(context.Background(), inv); res.Outcome != Succeeded || !strings.Contains(string(res.CommandResult), "hello milk") {
			t.Fatalf("call %d: %s %s %s\n%s", i, res.Outcome, res.Reason, res.CommandResult, diag.String())
		}
		time.Sleep(50 * time.Millisecond) // past the spares' delay
		if n := tries.Load() - before; n != 1 {
			t.Fatalf("call %d: %d warm inits tried, want the call's one", i, n)
		}
		warmPool.mu.Lock()
		pauses = append(pauses, time.Until(warmPool.retryAt))
		warmPool.mu.Unlock()
	}
	for i := 1; i < len(pauses); i++ {
		if pauses[i] < pauses[i-1]*3/2 {
			t.Fatalf("the pauses after failures in a row do not grow: %v", pauses)
		}
	}
	if n := strings.Count(log(), "cannot start a warm confining init"); n != 1 {
		t.Fatalf("the log was told %d times of failures in a row:\n%s", n, log())
	}
}

// TestWarmArgv0MatchesTheInit: the machine-code init knows it was started
// warm by four bytes of its argv[0], at the offset its source compares.
func TestWarmArgv0MatchesTheInit(t *testing.T) {
	src, err := os.ReadFile("../scripts/init/confine_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	const off = 13
	word := uint32(WarmArgv0[off]) | uint32(WarmArgv0[off+1])<<8 | uint32(WarmArgv0[off+2])<<16 | uint32(WarmArgv0[off+3])<<24
	want := fmt.Sprintf("cmpl\t$0x%x, %d(%%rax)", word, off)
	if !strings.Contains(string(src), want) {
		t.Fatalf("confine_amd64.s does not compare %q of %s (%s)", WarmArgv0[off:off+4], WarmArgv0, want)
	}
	if strings.HasPrefix(InitMachineArgv0[off:], WarmArgv0[off:off+4]) {
		t.Fatalf("%s and %s do not differ where the init looks", InitMachineArgv0, WarmArgv0)
	}
}
