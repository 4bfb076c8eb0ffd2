//go:build linux && amd64 && !rukh_portable

package kernel

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchTemplate is the confined template of the bench: no network, its
// release, a scratch directory.
var benchTemplate = Confine{Network: NetworkNone, Read: []string{PathRelease}, Write: []string{PathScratch}}

// confinedFake is a fake invocation under conf; the system's libraries are
// added to what it reads where the test binary needs them.
func confinedFake(t *testing.T, behaviour string, conf Confine) *Invocation {
	t.Helper()
	if ProbeHost().Unavailable(&Confine{}) != "confinement needs rukh's init: "+ProbeHost().NoSelfInit {
		t.Skipf("this host cannot confine: %s", ProbeHost().Unavailable(&Confine{}))
	}
	inv := fakeInvocation(t, behaviour, textDecl)
	exe, _ := os.Executable()
	if f, err := elf.Open(exe); err == nil {
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				for _, d := range []string{"/lib", "/lib64", "/usr"} {
					if _, err := os.Stat(d); err == nil {
						conf.Read = append(conf.Read, d)
					}
				}
			}
		}
		f.Close()
	}
	inv.Limits.Confine, inv.Limits.Template = &conf, "t"
	return inv
}

// TestMachineInitConfinesTheBenchTemplate: the bench's template runs
// under the machine-code init. This test binary is not rukh (ProbeHost
// says it cannot be the Go init), so a confined call that succeeds here
// ran under the machine-code one.
func TestMachineInitConfinesTheBenchTemplate(t *testing.T) {
	u, refuse := initFor(&benchTemplate, "bench", false)
	if refuse != "" {
		t.Skip(refuse)
	}
	if err := u.confineSpec(&benchTemplate, "bench", t.TempDir(), t.TempDir(), false); err != nil {
		t.Fatal(err)
	}
	want, _ := confiningInitPath()
	if u.machine == nil || u.path != want || !bytes.HasPrefix(u.spec, []byte("RKC1")) {
		t.Fatalf("the bench's template runs under %q (steps %v), not the machine-code init %q", u.path, u.machine != nil, want)
	}
	u.machine.close()
	if ProbeHost().NoSelfInit == "" {
		t.Fatal("this test binary says it can be rukh's Go init: a confined call proves nothing")
	}
	inv := confinedFake(t, "text", benchTemplate)
	diag := NewDiagnostics(4096)
	inv.Stdout, inv.Stderr = diag, diag
	res := fastRunner().Invoke(context.Background(), inv)
	if res.Outcome != Succeeded || !strings.Contains(string(res.CommandResult), "hello milk") {
		t.Fatalf("confined call: %s %s %s\n%s", res.Outcome, res.Reason, res.CommandResult, diag.String())
	}
}

// TestMachineInitStepFailure: a step that fails stops the call before
// the program starts and names what it did. A grant beneath /proc names
// the call's own /proc, which the init opens once it has mounted it:
// this test's pid is in the host's, not in the call's.
func TestMachineInitStepFailure(t *testing.T) {
	gone := fmt.Sprintf("/proc/%d", os.Getpid())
	inv := confinedFake(t, "text", Confine{Read: []string{PathRelease, gone}})
	diag := NewDiagnostics(4096)
	inv.Stdout, inv.Stderr = diag, diag
	res := fastRunner().Invoke(context.Background(), inv)
	want := fmt.Sprintf(`cannot confine the program under template "t": the template grants %s, which cannot be reached: no such file or directory`, gone)
	if res.Outcome != ExecutionFailed || res.Reason != want {
		t.Fatalf("got %s %q\nwant %q\n%s", res.Outcome, res.Reason, want, diag.String())
	}
}

// TestMachineInitSteps runs the machine-code init on steps made by hand
// (no namespaces: it needs none to run them): a failing step of its own
// or of the program's process names the step, and the program never
// runs; steps it cannot read fail the same way.
func TestMachineInitSteps(t *testing.T) {
	path, err := confiningInitPath()
	if err != nil {
		t.Skip(err)
	}
	closeBad := func(l *stepList) { l.add("a step that fails on purpose", syscall.SYS_CLOSE, fd(99)) }
	for _, tc := range []struct {
		name  string
		steps func(*stepList)
		raw   []byte // instead of steps
		want  string // the failure; "" the program ran
	}{
		{"ok", func(l *stepList) { l.add("a step that works", syscall.SYS_GETPID) }, nil, ""},
		{"init step", closeBad, nil, "a step that fails on purpose: bad file descriptor"},
		{"program step", func(l *stepList) {
			l.add("a step that works", syscall.SYS_GETPID)
			l.addChild("a step of the program that fails on purpose", syscall.SYS_CLOSE, fd(99))
		}, nil, "a step of the program that fails on purpose: bad file descriptor"},
		{"result of a later step", func(l *stepList) { l.add("a step that uses what comes later", syscall.SYS_CLOSE, result(0)) }, nil, "a step that uses what comes later: invalid argument"},
		{"init step takes a program step's result", func(l *stepList) {
			l.addChild("a step of the program", syscall.SYS_GETPID)
			l.add("a step of the init that uses it", syscall.SYS_CLOSE, result(0))
		}, nil, "a step of the init that uses it: invalid argument"},
		{"program step takes an init step's result", func(l *stepList) {
			d := l.add("a step of the init", syscall.SYS_DUP, fd(0))
			l.addChild("a step of the program that closes it", syscall.SYS_CLOSE, result(d))
		}, nil, ""},
		{"expected result", func(l *stepList) {
			pid := l.add("getpid", syscall.SYS_GETPID)
			l.add("not what the step expects", stepExpect, result(pid), result(pid))
		}, nil, ""},
		{"unexpected result", func(l *stepList) {
			pid := l.add("getpid", syscall.SYS_GETPID)
			l.add("not PID 1", stepExpect, result(pid), imm(1))
		}, nil, "not PID 1"},
		{"bad magic", nil, []byte("RKC2\x00\x00\x00\x00"), "rukh's init was given steps in a form it does not read"},
		{"cut short", nil, []byte("RKC1\x01\x00\x00\x00"), "rukh's init was given its steps cut short"},
		{"no count", nil, []byte("RKC1"), "rukh's init was given its steps cut short"},
		{"too many", nil, []byte("RKC1\x01\x01\x00\x00"), "rukh's init was given more than 256 steps"},
		{"too large", nil, append([]byte("RKC1\x01\x00\x00\x00"), make([]byte, maxStepsBytes)...), "rukh's init was given steps larger than the 65536 bytes it takes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &prepared{}
			if tc.raw != nil {
				p.steps = tc.raw
			} else {
				var l stepList
				tc.steps(&l)
				if p.steps, err = l.encode(); err != nil {
					t.Fatal(err)
				}
				p.words = l.words
			}
			recs, code, out := runSteps(t, path, p.steps)
			var msg string
			exited := false
			for _, r := range recs {
				switch r[0] {
				case ReportStep:
					msg = p.failed(r[1])
				case ReportStatus:
					exited = syscall.WaitStatus(r[1]).ExitStatus() == 0
				}
			}
			if msg != tc.want {
				t.Errorf("failure %q, want %q (records %v)", msg, tc.want, recs)
			}
			ran := out == "ran\n"
			if ran != (tc.want == "") || exited != (tc.want == "") {
				t.Errorf("the program ran %v (exited 0: %v; init exit %d, records %v)", ran, exited, code, recs)
			}
			if tc.want == "" && code != 0 {
				t.Errorf("the init exited %d", code)
			}
		})
	}
}

// runSteps runs the init at path on steps with "echo ran" as its program
// and returns its records, exit code and the program's output.
func runSteps(t *testing.T, path string, steps []byte) ([][2]uint32, int, string) {
	t.Helper()
	echo, err := exec.LookPath("echo")
	if err != nil {
		t.Skip(err)
	}
	reportR, reportW, _ := os.Pipe()
	specR, specW, _ := os.Pipe()
	devnull, _ := os.Open(os.DevNull)
	defer devnull.Close()
	var out bytes.Buffer
	cmd := &exec.Cmd{Path: path, Args: []string{InitMachineArgv0, echo, "ran"}, Stdout: &out, ExtraFiles: []*os.File{devnull, reportW, specR}}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	reportW.Close()
	specR.Close()
	specW.Write(steps)
	specW.Close()
	rep, _ := io.ReadAll(reportR)
	reportR.Close()
	_ = cmd.Wait()
	var recs [][2]uint32
	for ; len(rep) >= 8; rep = rep[8:] {
		recs = append(recs, [2]uint32{binary.LittleEndian.Uint32(rep), binary.LittleEndian.Uint32(rep[4:])})
	}
	return recs, cmd.ProcessState.ExitCode(), out.String()
}

// TestMachineInitFallsBack: steps the machine-code init cannot be given
// (here more than it takes) leave the call to rukh's own init where that
// one confines, and fail it, saying why, where it does not.
func TestMachineInitFallsBack(t *testing.T) {
	conf := Confine{Read: []string{PathRelease}}
	ents, _ := os.ReadDir("/proc/sys/kernel")
	for _, e := range ents {
		if !e.IsDir() && len(conf.Read) < 80 {
			conf.Read = append(conf.Read, "/proc/sys/kernel/"+e.Name())
		}
	}
	if len(conf.Read) < 80 {
		t.Skip("too few files in /proc/sys/kernel")
	}
	defer func(f func(*Confine) bool) { goInitConfines = f }(goInitConfines)
	for _, goInit := range []bool{true, false} {
		goInitConfines = func(*Confine) bool { return goInit }
		u, refuse := initFor(&conf, "many", false)
		if refuse != "" {
			t.Skip(refuse)
		}
		if !u.machineInit {
			t.Skip("the machine-code init does not confine here")
		}
		u.ownProc = true
		err := u.confineSpec(&conf, "many", t.TempDir(), "", false)
		u.closeMachine()
		switch {
		case goInit && (err != nil || u.machine != nil || u.path != "/proc/self/exe" || !bytes.HasPrefix(u.spec, []byte("{"))):
			t.Errorf("with rukh's own init at hand: %v, steps %v, init %q", err, u.machine != nil, u.path)
		case !goInit && (err == nil || !strings.Contains(err.Error(), "more than rukh's init takes")):
			t.Errorf("without rukh's own init: %v", err)
		}
	}
}

// TestFailedStartClosesWhatTheInitInherits: a confined call whose start
// fails before its init runs (here: no descriptor left for the channel)
// leaves no ruleset (or network namespace) open in rukh.
func TestFailedStartClosesWhatTheInitInherits(t *testing.T) {
	inv := confinedFake(t, "text", Confine{Read: []string{PathRelease}})
	r := fastRunner()
	openFDs := func() map[int]bool {
		ents, _ := os.ReadDir("/proc/self/fd")
		fds := map[int]bool{}
		for _, e := range ents {
			fd, _ := strconv.Atoi(e.Name())
			fds[fd] = true
		}
		return fds // and ReadDir's own, closed by now
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if _, err := confiningInitPath(); err != nil { // made once, with room
		t.Skip(err)
	}
	openFDs() // the runtime's descriptors for reading a directory
	before := openFDs()
	// Room for the ruleset and a rule's path, not for the channel too:
	// the lowest two free numbers, and none above.
	tight, free := lim, 0
	for fd := 0; free < 2; fd++ {
		if !before[fd] {
			free++
			tight.Cur = uint64(fd + 1)
		}
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &tight); err != nil {
		t.Fatal(err)
	}
	res := r.Invoke(context.Background(), inv)
	syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	if res.Outcome != ExecutionFailed || !strings.Contains(res.Reason, "too many open files") {
		t.Skipf("the call did not fail for want of descriptors: %s %s", res.Outcome, res.Reason)
	}
	if after := openFDs(); len(after) != len(before) {
		t.Errorf("%d descriptors open after the failed call (%s), %d before", len(after), res.Reason, len(before))
	}
}

// TestStepsCheck: rukh refuses to send a step that takes a result the
// init cannot have for it, as the init refuses to run one.
func TestStepsCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps func(*stepList)
		ok    bool
	}{
		{"earlier", func(l *stepList) { l.add("a", syscall.SYS_GETPID); l.add("b", syscall.SYS_CLOSE, result(0)) }, true},
		{"itself", func(l *stepList) { l.add("a", syscall.SYS_CLOSE, result(0)) }, false},
		{"later", func(l *stepList) { l.add("a", syscall.SYS_CLOSE, result(1)); l.add("b", syscall.SYS_GETPID) }, false},
		{"program's from the init", func(l *stepList) { l.addChild("a", syscall.SYS_GETPID); l.add("b", syscall.SYS_CLOSE, result(0)) }, false},
		{"init's from the program", func(l *stepList) { l.add("a", syscall.SYS_GETPID); l.addChild("b", syscall.SYS_CLOSE, result(0)) }, true},
	} {
		var l stepList
		tc.steps(&l)
		if err := l.check(); (err == nil) != tc.ok {
			t.Errorf("%s: check says %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

func TestUsageLimit(t *testing.T) {
	exit := func(code int) syscall.WaitStatus { return syscall.WaitStatus(code << 8) }
	sig := func(s syscall.Signal) syscall.WaitStatus { return syscall.WaitStatus(s) }
	c := Confine{CPUSeconds: 2, FileMiB: 1, MemoryMiB: 64}
	for _, tc := range []struct {
		ws   syscall.WaitStatus
		cpu  time.Duration
		peak int64
		want uint32
	}{
		{exit(0), 3 * time.Second, 1 << 20, 0}, // ran to its own end
		{sig(syscall.SIGXCPU), 1600 * time.Millisecond, 0, LimitCPU},
		{sig(syscall.SIGKILL), 2 * time.Second, 0, LimitCPU},
		{sig(syscall.SIGKILL), time.Second, 0, 0}, // short of three quarters
		{sig(syscall.SIGXFSZ), 0, 0, LimitFile},
		{exit(2), 0, 48 << 10, LimitMemory},
		{exit(2), 0, 47 << 10, 0},
	} {
		if got := UsageLimit(c, tc.ws, tc.cpu, tc.peak); got != tc.want {
			t.Errorf("UsageLimit(%#x, %v, %d KiB) = %d, want %d", uint32(tc.ws), tc.cpu, tc.peak, got, tc.want)
		}
	}
}

// TestFailedStartHandsBackTheNetNS: a confined call whose init cannot
// start hands its network namespace back to be closed; its end finds
// nothing left to do it with.
func TestFailedStartHandsBackTheNetNS(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rs, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	p := &prepared{ruleset: rs, netNS: r, pooled: true, steps: []byte("x")}
	u := underInit{path: "/nonexistent/init", spec: p.steps, machine: p}
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if _, _, err := startContained(&u, cmd, "inv_x", nil, nil); err == nil {
		t.Fatal("an init that does not exist started")
	}
	if p.pooled || p.netNS != nil {
		t.Error("a failed start kept the call's network namespace: nothing closes it")
	}
}
