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
		sl.close()
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
	if res := r.Invoke(context.Background(), inv); res.Outcome != Succeeded {
		t.Errorf("a call over a slot's bound: outcome %s %q, want it run under an init of its own", res.Outcome, res.Reason)
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
	for _, tt := range []struct {
		name    string
		payload []byte
		files   bool
	}{
		{"no descriptors", good, false},
		{"no argv", []byte("\x00\x00\x00\x00\x00\x00\x00\x00\x00/p\x00"), true},
		{"counts past the strings", []byte("\x05\x00\x00\x00\x00\x00\x00\x00\x00/p\x00x\x00"), true},
		{"no final NUL", []byte("\x01\x00\x00\x00\x00\x00\x00\x00\x00/p\x00x"), true},
		{"bytes after the strings", []byte("\x01\x00\x00\x00\x00\x00\x00\x00\x00/p\x00x\x00y\x00"), true},
		{"short", []byte("\x01\x00"), true},
	} {
		sl, err := spawnSlot()
		if err != nil {
			t.Fatal(err)
		}
		if tt.files {
			err = sl.send(tt.payload, four)
		} else {
			err = sl.raw.Write(func(fd uintptr) bool {
				_, err = syscall.Write(int(fd), tt.payload)
				return true
			})
		}
		if err != nil {
			t.Fatalf("%s: send: %v", tt.name, err)
		}
		kind, v, _, err := sl.recv()
		sl.close()
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
	defer sl.close()
	if err := sl.send(good, four); err != nil {
		t.Fatal(err)
	}
	var kinds []uint32
	for range 3 {
		kind, v, _, err := sl.recv()
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
