//go:build linux && !rukh_portable

package kernel

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// slotInits are the pids of the slots' inits, idle or serving.
func slotInits() map[int]bool {
	procs.mu.Lock()
	defer procs.mu.Unlock()
	m := map[int]bool{}
	for pid, t := range procs.live {
		if t.id == "" {
			m[pid] = true
		}
	}
	return m
}

// slotServerArg runs this test binary as a serving rukh: one call in a
// slot, escape-hang, its stdout on ours.
const slotServerArg = "rukh-test-slot-server"

func init() {
	if len(os.Args) < 2 || os.Args[1] != slotServerArg {
		return
	}
	exe, _ := os.Executable()
	r := NewRunner()
	r.Slots = true
	res := r.Invoke(context.Background(), &Invocation{
		Command: &Command{ID: "fake.escape-hang", Path: []string{"fake", "escape-hang"},
			Execute: Execute{Program: filepath.Base(exe), Args: []string{fakeArg, "escape-hang"}, Result: textDecl}},
		Dir:     filepath.Dir(exe),
		Request: Request{Command: "fake.escape-hang"},
		Limits:  Limits{Timeout: time.Minute},
		Stdout:  os.Stdout,
	})
	fmt.Fprintln(os.Stderr, res.Outcome, res.Reason)
	os.Exit(3)
}

// resetSlots ends every idle slot, so a test knows which it gets.
func resetSlots(t *testing.T) {
	t.Helper()
	if !slotsUsable() {
		t.Skip("no containment slots on this host")
	}
	slots.mu.Lock()
	idle := slots.idle
	slots.idle = nil
	slots.mu.Unlock()
	for _, sl := range idle {
		sl.drop(false, "")
	}
}

// idleSlotPids are the inits of the idle slots.
func idleSlotPids() []int {
	slots.mu.Lock()
	defer slots.mu.Unlock()
	var pids []int
	for _, sl := range slots.idle {
		pids = append(pids, sl.init.Process.Pid)
	}
	return pids
}

// TestSlotReusedAndEmptied: two calls in a row run in the same slot (one
// init, one PID namespace), and what the first left running (a process
// in a session of its own, a double-forked one) is gone before its Invoke
// returns, so nothing of it is there when the second starts.
func TestSlotReusedAndEmptied(t *testing.T) {
	resetSlots(t)
	r := NewRunner()
	r.Slots = true
	var ns []string
	var inits [][]int
	for i := range 2 {
		res := r.Invoke(context.Background(), fakeInvocation(t, "escape", textDecl))
		if res.Outcome != Succeeded {
			t.Fatalf("call %d: outcome %s: %s", i, res.Outcome, res.Reason)
		}
		var cr struct{ Text string }
		json.Unmarshal(res.CommandResult, &cr)
		f := strings.Fields(cr.Text)
		if len(f) != 3 {
			t.Fatalf("escape reported %q", cr.Text)
		}
		if left := inNamespace(f[0]); len(left) > 0 {
			t.Errorf("call %d: processes %v of namespace %s still exist after Invoke returned", i, left, f[0])
		}
		ns = append(ns, f[0])
		inits = append(inits, idleSlotPids())
	}
	if ns[0] != ns[1] || len(inits[0]) != 1 || fmt.Sprint(inits[0]) != fmt.Sprint(inits[1]) {
		t.Errorf("the second call ran in namespace %s with idle inits %v, the first in %s with %v: want one slot, reused", ns[1], inits[1], ns[0], inits[0])
	}
	self, _ := os.Readlink("/proc/self/ns/pid")
	if ns[0] == self {
		t.Errorf("the program ran in rukh's PID namespace %s", self)
	}
}

// TestSlotInitKilled: a slot whose init is killed while its call runs
// ends that call as killed, with nothing of it left; an idle slot whose
// init was killed is never used; the calls after both run.
func TestSlotInitKilled(t *testing.T) {
	resetSlots(t)
	r := fastRunner()
	r.Slots = true
	if res := r.Invoke(context.Background(), fakeInvocation(t, "text", textDecl)); res.Outcome != Succeeded {
		t.Fatalf("outcome %s: %s", res.Outcome, res.Reason)
	}
	idle := idleSlotPids()
	if len(idle) != 1 {
		t.Fatalf("idle slots %v after one call, want one", idle)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	inv := fakeInvocation(t, "escape-hang", textDecl)
	inv.Stdout = pw
	done := make(chan Result)
	go func() { done <- r.Invoke(context.Background(), inv) }()
	line, _ := bufio.NewReader(pr).ReadString('\n')
	defer pw.Close()
	if line == "" {
		t.Fatal("escape-hang did not start its escapees")
	}
	ns, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", idle[0]))
	syscall.Kill(idle[0], syscall.SIGKILL)
	res := <-done
	if res.Outcome != ExecutionFailed || !strings.Contains(res.Reason, "killed by signal SIGKILL") {
		t.Errorf("outcome %s %q, want execution_failed, killed by SIGKILL", res.Outcome, res.Reason)
	}
	if left := inNamespace(ns); len(left) > 0 {
		t.Errorf("processes %v of the killed slot's namespace %s still exist after Invoke returned", left, ns)
	}
	for _, pid := range idleSlotPids() {
		if pid == idle[0] {
			t.Errorf("the killed slot %d went back to the idle slots", pid)
		}
	}
	// An idle slot killed: the next call does not use it, and runs.
	if res := r.Invoke(context.Background(), fakeInvocation(t, "text", textDecl)); res.Outcome != Succeeded {
		t.Fatalf("outcome %s: %s", res.Outcome, res.Reason)
	}
	idle = idleSlotPids()
	for _, pid := range idle {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	for _, pid := range idle {
		waitGone(t, pid)
	}
	if res := r.Invoke(context.Background(), fakeInvocation(t, "text", textDecl)); res.Outcome != Succeeded || string(res.CommandResult) != `{"kind":"text","text":"hello milk"}` {
		t.Fatalf("after the idle slot's init was killed: outcome %s %q %s", res.Outcome, res.Reason, res.CommandResult)
	}
}

// waitGone waits until pid is gone or a zombie.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if pi, ok := plat.lookup(pid); !ok || pi.zombie {
			return
		}
	}
	t.Fatalf("process %d still runs", pid)
}

// TestSlotKill9: a kill -9 of a serving rukh takes its running call's
// whole tree with it: the slot's init, the program and what the program
// left in sessions of their own.
func TestSlotKill9(t *testing.T) {
	resetSlots(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	srv := exec.Command(exe, slotServerArg)
	out, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Kill()
	if line, _ := bufio.NewReader(out).ReadString('\n'); line == "" {
		t.Fatal("the served call did not start its escapees")
	}
	set := map[int]bool{}
	all := plat.snapshot()
	newTableIndex(all).closure(set, srv.Process.Pid)
	delete(set, srv.Process.Pid)
	// The slot's init, the program, its escapee in a session of its own
	// and the double-forked one.
	if len(set) < 4 {
		t.Fatalf("the server's tree is %v, want the slot's init, the program and two escapees", set)
	}
	srv.Process.Signal(syscall.SIGKILL)
	srv.Wait()
	for pid := range set {
		waitGone(t, pid)
	}
}

// TestSlotPayload: a call's payload is bounded, and what is over the
// bound gets a clear error (and the call an init of its own).
func TestSlotPayload(t *testing.T) {
	big := strings.Repeat("x", SlotPayloadMax)
	many := make([]string, SlotStringsMax)
	for _, tt := range []struct {
		argv, env []string
		want      string
	}{
		{[]string{"/p"}, []string{"A=" + big}, fmt.Sprintf("over the %d a containment slot takes", SlotPayloadMax)},
		{[]string{"/p"}, many, fmt.Sprintf("over the %d a containment slot takes", SlotStringsMax-2)},
		{[]string{"/p", "a\x00b"}, nil, "holds a NUL byte"},
		{nil, nil, "no arguments"},
	} {
		_, err := encodeSlotCall("", "/p", tt.argv, tt.env)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("encodeSlotCall(%d arguments, %d env): %v, want %q", len(tt.argv), len(tt.env), err, tt.want)
		}
	}
	b, err := encodeSlotCall("", "/bin/p", []string{"p", "a"}, []string{"X=1"})
	if want := "\x02\x00\x00\x00\x01\x00\x00\x00\x00/bin/p\x00p\x00a\x00X=1\x00"; err != nil || string(b) != want {
		t.Errorf("encodeSlotCall: %q %v, want %q", b, err, want)
	}
	resetSlots(t)
	r := NewRunner()
	r.Slots = true
	inv := fakeInvocation(t, "text", textDecl)
	half := strings.Repeat("y", SlotPayloadMax/2)
	inv.Command.Execute.Args = append(inv.Command.Execute.Args, half, half)
	log := logged(t)
	if res := r.Invoke(context.Background(), inv); res.Outcome != Succeeded {
		t.Errorf("a call over a slot's bound: outcome %s %q, want it run under an init of its own", res.Outcome, res.Reason)
	}
	if l := log(); !strings.Contains(l, "starts under an init of its own") || strings.Contains(l, "yyyy") {
		t.Errorf("log %q, want the call that did not use a slot, and none of its arguments", l)
	}
}

// TestSlotInitRefusesOtherMessages: a message that is not a call (no
// descriptors, or a payload that does not parse) ends the slot's init
// before it forks anything; rukh hears EOF, and the call that sent it
// would start under an init of its own.
func TestSlotInitRefusesOtherMessages(t *testing.T) {
	if !slotsUsable() {
		t.Skip("no containment slots on this host")
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	four := [4]*os.File{null, null, null, null}
	good, _ := encodeSlotCall("", "/nonexistent", []string{"x"}, nil)
	bigPayload := append([]byte("\x01\x00\x00\x00\x00\x00\x00\x00"), strings.Repeat("x", SlotPayloadMax)...)
	manyStrings := append([]byte("\xff\x0f\x00\x00\x00\x00\x00\x00\x00/p\x00"), strings.Repeat("x\x00", SlotStringsMax)...)
	for _, tt := range []struct {
		name    string
		payload []byte
		files   int
	}{
		{"no descriptors", good, 0},
		{"3 descriptors", good, 3},
		{"5 descriptors", good, 5},
		{"40 descriptors", good, 40},
		{"payload over the bound", bigPayload, 4},
		{"strings over the bound", manyStrings, 4},
		{"no argv", []byte("\x00\x00\x00\x00\x00\x00\x00\x00\x00/p\x00"), 4},
		{"counts past the strings", []byte("\x05\x00\x00\x00\x00\x00\x00\x00\x00/p\x00x\x00"), 4},
		{"no final NUL", []byte("\x01\x00\x00\x00\x00\x00\x00\x00\x00/p\x00x"), 4},
		{"bytes after the strings", []byte("\x01\x00\x00\x00\x00\x00\x00\x00\x00/p\x00x\x00y\x00"), 4},
		{"short", []byte("\x01\x00"), 4},
	} {
		sl, err := spawnSlot()
		if err != nil {
			t.Fatal(err)
		}
		fds := make([]int, tt.files)
		for i := range fds {
			fds[i] = int(null.Fd())
		}
		err = sl.raw.Write(func(fd uintptr) bool {
			var oob []byte
			if len(fds) > 0 {
				oob = syscall.UnixRights(fds...)
			}
			err = syscall.Sendmsg(int(fd), tt.payload, oob, nil, 0)
			return true
		})
		if err != nil {
			t.Fatalf("%s: send: %v", tt.name, err)
		}
		kind, v, _, _, err := sl.recv(true)
		sl.drop(false, "")
		ws, _ := sl.init.ProcessState.Sys().(syscall.WaitStatus)
		if err != io.EOF || ws.ExitStatus() != 1 {
			t.Errorf("%s: the slot answered %d %d %v and exited with %v, want EOF and exit status 1", tt.name, kind, v, err, ws)
		}
	}
	// A well-formed call with a program that cannot be executed: the
	// program never starts, and the slot lives on.
	sl, err := spawnSlot()
	if err != nil {
		t.Fatal(err)
	}
	defer sl.drop(false, "")
	if err := sl.send(good, four); err != nil {
		t.Fatal(err)
	}
	var kinds []uint32
	for range 3 {
		kind, v, _, fd, err := sl.recv(true)
		if fd >= 0 {
			syscall.Close(fd)
		}
		if err != nil {
			t.Fatalf("after %v: %v", kinds, err)
		}
		kinds = append(kinds, kind)
		if kind == ReportExec && syscall.Errno(v) != syscall.ENOENT {
			t.Errorf("ReportExec %v, want ENOENT", syscall.Errno(v))
		}
	}
	if fmt.Sprint(kinds) != fmt.Sprint([]uint32{ReportStarted, ReportExec, ReportStatus}) {
		t.Errorf("records %v, want started, exec, status", kinds)
	}
}

// TestSlotBoundsMatchTheInit: the init reserves what rukh may send.
func TestSlotBoundsMatchTheInit(t *testing.T) {
	src, err := os.ReadFile("../scripts/init/init_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{fmt.Sprintf(".equ\tPAYLOAD_MAX, %d\t", SlotPayloadMax), fmt.Sprintf(".equ\tSTRINGS_MAX, %d\t", SlotStringsMax)} {
		if !strings.Contains(string(src), want) {
			t.Errorf("scripts/init/init_amd64.s has no %q", want)
		}
	}
}

// setSlotVar sets one of the slots' tunables for the test.
func setSlotVar(t *testing.T, v *time.Duration, d time.Duration) {
	slots.mu.Lock()
	prev := *v
	*v = d
	slots.mu.Unlock()
	t.Cleanup(func() {
		slots.mu.Lock()
		*v = prev
		slots.mu.Unlock()
	})
}

// logged captures what slots tell the serve process's log.
func logged(t *testing.T) func() string {
	t.Helper()
	var mu sync.Mutex
	var b strings.Builder
	slots.mu.Lock()
	prev := slots.logf
	slots.logf = func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(&b, format+"\n", args...)
	}
	slots.mu.Unlock()
	t.Cleanup(func() {
		slots.mu.Lock()
		slots.logf = prev
		slots.mu.Unlock()
	})
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return b.String()
	}
}

// TestSlotStopsAProgramThatLeftItsGroup: a program that ignores SIGTERM
// and leaves its process group (for its init's) is still stopped by the
// deadline: the stop's SIGKILL kills its slot's init with it, and the
// slot is dropped.
func TestSlotStopsAProgramThatLeftItsGroup(t *testing.T) {
	for _, inSlot := range []bool{false, true} {
		if inSlot {
			resetSlots(t)
		}
		log := logged(t)
		r := fastRunner()
		r.Slots = inSlot
		inv := fakeInvocation(t, "leave-group", textDecl)
		inv.Limits.Timeout = 300 * time.Millisecond
		done := make(chan Result, 1)
		go func() { done <- r.Invoke(context.Background(), inv) }()
		select {
		case res := <-done:
			if res.Outcome != Cancelled || res.Reason != "deadline exceeded" {
				t.Errorf("slots %v: outcome %s %q, want cancelled, deadline exceeded", inSlot, res.Outcome, res.Reason)
			}
		case <-time.After(stopBound):
			t.Fatalf("slots %v: the call still runs %v after its deadline", inSlot, stopBound)
		}
		if !inSlot {
			continue
		}
		if idle, inits := idleSlotPids(), slotInits(); len(idle) > 0 || len(inits) > 0 {
			t.Errorf("idle slots %v, slot inits %v after the killed call: want its slot dropped", idle, inits)
		}
		if l := log(); !strings.Contains(l, "containment slot dropped") || !strings.Contains(l, "its call was killed") {
			t.Errorf("log %q, want the dropped slot", l)
		}
	}
}

// TestSlotStartFallback: a slot that does not start the program in time
// (its init stopped) is killed, and the call runs under an init of its
// own, which reads the invoke line rukh already wrote to the channel.
func TestSlotStartFallback(t *testing.T) {
	resetSlots(t)
	setSlotVar(t, &slotStartBound, 200*time.Millisecond)
	log := logged(t)
	r := NewRunner()
	r.Slots = true
	if res := r.Invoke(context.Background(), fakeInvocation(t, "text", textDecl)); res.Outcome != Succeeded {
		t.Fatalf("outcome %s: %s", res.Outcome, res.Reason)
	}
	idle := idleSlotPids()
	if len(idle) != 1 {
		t.Fatalf("idle slots %v after one call, want one", idle)
	}
	syscall.Kill(idle[0], syscall.SIGSTOP)
	res := r.Invoke(context.Background(), fakeInvocation(t, "text", textDecl))
	if res.Outcome != Succeeded || string(res.CommandResult) != `{"kind":"text","text":"hello milk"}` {
		t.Errorf("after a stopped slot: outcome %s %q %s, want the call run under an init of its own", res.Outcome, res.Reason, res.CommandResult)
	}
	if slotInits()[idle[0]] {
		t.Errorf("the stopped slot %d is still rukh's", idle[0])
	}
	if l := log(); !strings.Contains(l, "did not start its program in time") {
		t.Errorf("log %q, want the dropped slot", l)
	}
}

// TestSlotIdleSweep: idle slots no call took for a while end (a serve
// process keeps its newest), and an idle slot whose init died is reaped
// without a call taking it.
func TestSlotIdleSweep(t *testing.T) {
	resetSlots(t)
	setSlotVar(t, &slotSweepEvery, 20*time.Millisecond)
	setSlotVar(t, &slotIdleTimeout, time.Hour)
	slots.mu.Lock()
	warm := slots.warm
	slots.mu.Unlock()
	defer func() {
		slots.mu.Lock()
		slots.warm = warm
		slots.mu.Unlock()
	}()
	var all []*slot
	spawn := func(n int) {
		for range n {
			sl, err := spawnSlot()
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, sl)
			putSlot(sl)
		}
	}
	idleGone := func(want int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if len(idleSlotPids()) == want {
				return
			}
		}
		t.Fatalf("idle slots %v, want %d", idleSlotPids(), want)
	}
	// An init that died while idle.
	spawn(2)
	all[0].init.Process.Kill()
	idleGone(1)
	reaped(t, all[0].init.Process.Pid)
	// Idle too long, in a process that keeps none warm.
	slots.mu.Lock()
	slots.warm = false
	slots.mu.Unlock()
	setSlotVar(t, &slotIdleTimeout, 50*time.Millisecond)
	idleGone(0)
	// In a serve process the newest stays.
	setSlotVar(t, &slotIdleTimeout, time.Hour)
	slots.mu.Lock()
	slots.warm = true
	slots.mu.Unlock()
	spawn(3)
	setSlotVar(t, &slotIdleTimeout, 50*time.Millisecond)
	idleGone(1)
	if got, want := idleSlotPids(), all[len(all)-1].init.Process.Pid; got[0] != want {
		t.Errorf("the idle slot kept is %d, want the newest, %d", got[0], want)
	}
	resetSlots(t)
	for _, sl := range all {
		reaped(t, sl.init.Process.Pid)
	}
}

// reaped waits until pid is gone, not even a zombie.
func reaped(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, ok := plat.lookup(pid); !ok {
			return
		}
	}
	t.Errorf("slot init %d was not reaped", pid)
}

// TestFreeSlotNamespaces: a fresh init the kernel refused for want of
// namespaces closes the idle slots and tries again; other errors do not.
func TestFreeSlotNamespaces(t *testing.T) {
	resetSlots(t)
	for range 2 {
		sl, err := spawnSlot()
		if err != nil {
			t.Fatal(err)
		}
		putSlot(sl)
	}
	if freeSlotNamespaces(&os.SyscallError{Syscall: "clone", Err: syscall.EPERM}) || len(idleSlotPids()) != 2 {
		t.Errorf("EPERM closed idle slots: %v left", idleSlotPids())
	}
	if !freeSlotNamespaces(&os.SyscallError{Syscall: "clone", Err: syscall.ENOSPC}) || len(idleSlotPids()) != 0 {
		t.Errorf("ENOSPC did not close the idle slots: %v left", idleSlotPids())
	}
	if freeSlotNamespaces(syscall.ENOSPC) {
		t.Error("with no idle slot, ENOSPC asked for another try")
	}
}

// TestSlotSpawnBackoff: after a failed spawn, calls go to inits of their
// own for a while without trying to spawn again.
func TestSlotSpawnBackoff(t *testing.T) {
	resetSlots(t)
	slots.mu.Lock()
	slots.retryAt = time.Now().Add(time.Hour)
	slots.mu.Unlock()
	defer func() {
		slots.mu.Lock()
		slots.retryAt = time.Time{}
		slots.mu.Unlock()
	}()
	if sl := takeSlot(); sl != nil {
		sl.drop(false, "")
		t.Error("a slot was spawned during the back-off")
	}
	r := NewRunner()
	r.Slots = true
	if res := r.Invoke(context.Background(), fakeInvocation(t, "text", textDecl)); res.Outcome != Succeeded {
		t.Errorf("during the back-off: outcome %s %q", res.Outcome, res.Reason)
	}
	if inits := slotInits(); len(inits) > 0 {
		t.Errorf("slot inits %v during the back-off", inits)
	}
}

// TestSlotDir: a call's directory is the program's working directory; one
// that cannot be entered fails the program's start, and the slot lives on.
func TestSlotDir(t *testing.T) {
	if !slotsUsable() {
		t.Skip("no containment slots on this host")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	sl, err := spawnSlot()
	if err != nil {
		t.Fatal(err)
	}
	defer sl.drop(false, "")
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	for _, tt := range []struct {
		dir, out string
		exec     syscall.Errno
	}{
		{dir, dir + "\n", 0},
		{filepath.Join(dir, "missing"), "", syscall.ENOENT},
	} {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		payload, err := encodeSlotCall(tt.dir, sh, []string{"sh", "-c", "pwd"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := sl.send(payload, [4]*os.File{null, pw, null, null}); err != nil {
			t.Fatal(err)
		}
		pw.Close()
		var errno syscall.Errno
		for {
			kind, v, _, fd, err := sl.recv(true)
			if fd >= 0 {
				syscall.Close(fd)
			}
			if err != nil {
				t.Fatalf("dir %s: %v", tt.dir, err)
			}
			if kind == ReportExec {
				errno = syscall.Errno(v)
			}
			if kind == ReportStatus {
				break
			}
		}
		out, _ := io.ReadAll(pr)
		pr.Close()
		if string(out) != tt.out || errno != tt.exec {
			t.Errorf("dir %s: output %q, exec error %v; want %q, %v", tt.dir, out, errno, tt.out, tt.exec)
		}
	}
}

// TestContainmentThroughSlots runs the kernel's containment and stop tests
// again with every call in a slot (RUKH_TEST_SLOTS), so that the suite
// checks both ways a call is contained.
func TestContainmentThroughSlots(t *testing.T) {
	if slotsAlways {
		t.Skip("this run is through slots already")
	}
	if !slotsUsable() {
		t.Skip("no containment slots on this host")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.count=1", "-test.run", "^(TestInvokeOutcomes|TestInvokeStop|TestInvokeStopTimeline|TestInvokeProcessSetup|TestInvokeKillsGrandchildren|TestInvokeLeavesNoProcesses|TestInvokeSession|TestInvokeConcurrent|TestInvokeStdin)$")
	cmd.Env = append(os.Environ(), "RUKH_TEST_SLOTS=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the containment tests through slots: %v\n%s", err, out)
	}
}

// TestSlotsKeptForCallsAtOnce: the slots of more calls at once than the
// old bound of 16 all go back to the idle stack.
func TestSlotsKeptForCallsAtOnce(t *testing.T) {
	resetSlots(t)
	t.Cleanup(func() { resetSlots(t) })
	const n = 24
	if n > maxIdleSlots {
		t.Fatalf("the test wants %d idle slots, over the bound of %d", n, maxIdleSlots)
	}
	r := NewRunner()
	r.Slots = true
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	// Every call reads its stdin to the end: all run at once until pw closes.
	res := make(chan Result, n)
	for range n {
		inv := fakeInvocation(t, "stdin", textDecl)
		inv.Stdin = pr
		go func() { res <- r.Invoke(context.Background(), inv) }()
	}
	// Each call gives up after its own timeout, so this waits less.
	deadline := time.Now().Add(8 * time.Second)
	for len(slotInits()) < n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	started := len(slotInits())
	pw.Close()
	if started < n {
		t.Fatalf("%d of %d calls at once had a slot", started, n)
	}
	for range n {
		if got := <-res; got.Outcome != Succeeded {
			t.Fatalf("outcome %s: %s", got.Outcome, got.Reason)
		}
	}
	if idle := idleSlotPids(); len(idle) < n {
		t.Errorf("%d idle slots after %d calls at once, want %d", len(idle), n, n)
	}
}
