//go:build linux

// Package bench holds Rukh's performance helpers: rukhbench (the
// docs/performance.md driver run by scripts/bench.sh), trivial and trivialsdk
// (the trivial extensions it calls), bindingprobe (where a revision's bytes
// and memory go), and these Go benchmarks, which split a tools/call into its
// parts. It is not part of the product and nothing in the product imports it.
package bench

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"golang.org/x/sys/unix"
)

var (
	buildOnce sync.Once
	buildDir  string
	trivial   string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// trivialBinary builds bench/trivial statically, once per test binary.
func trivialBinary(tb testing.TB) string {
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "rukh-bench-")
		if err != nil {
			buildErr = err
			return
		}
		buildDir = dir
		trivial = filepath.Join(dir, "bin", "prog")
		cmd := exec.Command("go", "build", "-trimpath", "-o", trivial, "./trivial")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = &buildError{out: out, err: err}
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return trivial
}

type buildError struct {
	out []byte
	err error
}

func (e *buildError) Error() string { return e.err.Error() + ": " + string(e.out) }

func trivialCommand() *kernel.Command {
	return &kernel.Command{
		ID: "trivial.ping",
		Execute: kernel.Execute{Program: "bin/prog", Mode: kernel.ModeManaged, Lifetime: kernel.LifetimeForeground,
			Result: &kernel.ResultDecl{Kind: "text"}},
	}
}

// direct is the driver's baseline (rukhbench directExec): socket pair on
// fd 3, own process group, invoke line, report line, wait.
func direct(tb testing.TB, prog string) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		tb.Fatal(err)
	}
	parent := os.NewFile(uintptr(fds[0]), "channel")
	child := os.NewFile(uintptr(fds[1]), "channel-child")
	defer parent.Close()
	const id = "inv_benchbenchbenchbenchbenc"
	cmd := &exec.Cmd{Path: prog, Args: []string{prog},
		Env:         []string{"RUKH_PROTOCOL=rukh.invoke/1", "RUKH_CHANNEL_FD=3", "RUKH_INVOCATION_ID=" + id},
		ExtraFiles:  []*os.File{child},
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	child.Close()
	parent.Write([]byte(`{"type":"invoke","invocationId":"` + id + `","command":"trivial.ping","input":{},"explicit":[],"interactive":false,"deadlineMs":30000}` + "\n"))
	line, _ := bufio.NewReader(parent).ReadBytes('\n')
	if err := cmd.Wait(); err != nil || !bytes.Contains(line, []byte("succeeded")) {
		tb.Fatalf("direct: %v %q", err, line)
	}
}

// BenchmarkDirectExec is the direct-exec baseline of docs/performance.md,
// in-process.
func BenchmarkDirectExec(b *testing.B) {
	prog := trivialBinary(b)
	for b.Loop() {
		direct(b, prog)
	}
}

// BenchmarkKernelInvoke is kernel.Runner.Invoke as tools/call uses it
// (stdout and stderr drained into bounded diagnostics through pipes), with
// no MCP framing and no store read.
func BenchmarkKernelInvoke(b *testing.B) {
	benchInvoke(b, true)
}

// BenchmarkKernelInvokeNoPipes is the same with stdout/stderr on /dev/null,
// to show what the two drained pipes cost.
func BenchmarkKernelInvokeNoPipes(b *testing.B) {
	benchInvoke(b, false)
}

func benchInvoke(b *testing.B, pipes bool) {
	prog := trivialBinary(b)
	r := kernel.NewRunner()
	cmd := trivialCommand()
	dir := filepath.Dir(filepath.Dir(prog))
	for b.Loop() {
		inv := &kernel.Invocation{Command: cmd, Dir: dir, Request: kernel.Request{Command: cmd.ID, Input: map[string]any{}}}
		if pipes {
			inv.Stdout, inv.Stderr = kernel.NewDiagnostics(65536), kernel.NewDiagnostics(65536)
		}
		res := r.Invoke(context.Background(), inv)
		if res.Outcome != kernel.Succeeded {
			b.Fatalf("%s: %s", res.Outcome, res.Reason)
		}
	}
}

// TestTrivialSpeaksTheProtocol keeps the benchmarks honest: the trivial
// program must succeed through the real kernel, and directly.
func TestTrivialSpeaksTheProtocol(t *testing.T) {
	prog := trivialBinary(t)
	direct(t, prog)
	cmd := trivialCommand()
	res := kernel.NewRunner().Invoke(context.Background(), &kernel.Invocation{Command: cmd, Dir: filepath.Dir(filepath.Dir(prog)),
		Request: kernel.Request{Command: cmd.ID, Input: map[string]any{}}})
	if res.Outcome != kernel.Succeeded || string(res.CommandResult) != `{"kind":"text","text":"ok"}` {
		t.Fatalf("got %s %q %s", res.Outcome, res.Reason, res.CommandResult)
	}
}

// BenchmarkInvokeSideBySide interleaves the three (direct exec, kernel
// invoke with drained pipes, kernel invoke without) in one loop and reports
// each one's median, and the kernel's median ratio to the direct exec, so
// that machine noise hits all three alike.
func BenchmarkInvokeSideBySide(b *testing.B) {
	prog := trivialBinary(b)
	r := kernel.NewRunner()
	cmd := trivialCommand()
	dir := filepath.Dir(filepath.Dir(prog))
	var d, kp, kn []time.Duration
	for b.Loop() {
		t := time.Now()
		direct(b, prog)
		d = append(d, time.Since(t))
		for _, pipes := range []bool{true, false} {
			inv := &kernel.Invocation{Command: cmd, Dir: dir, Request: kernel.Request{Command: cmd.ID, Input: map[string]any{}}}
			if pipes {
				inv.Stdout, inv.Stderr = kernel.NewDiagnostics(65536), kernel.NewDiagnostics(65536)
			}
			t = time.Now()
			res := r.Invoke(context.Background(), inv)
			if res.Outcome != kernel.Succeeded {
				b.Fatalf("%s: %s", res.Outcome, res.Reason)
			}
			if pipes {
				kp = append(kp, time.Since(t))
			} else {
				kn = append(kn, time.Since(t))
			}
		}
	}
	md, mp, mn := median(d), median(kp), median(kn)
	b.ReportMetric(float64(md.Microseconds()), "direct-µs")
	b.ReportMetric(float64(mp.Microseconds()), "kernel-µs")
	b.ReportMetric(float64(mn.Microseconds()), "kernel-nopipes-µs")
	b.ReportMetric(float64(mp)/float64(md), "kernel/direct")
	b.ReportMetric(0, "ns/op") // the mixed per-op time means nothing here
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// directVariant is direct with one of the kernel's extra steps added, to
// price each: drained stdout/stderr pipes, or the WNOWAIT waitid goroutine
// plus the group kill before the reap.
func directVariant(tb testing.TB, prog string, pipes bool, wait waitMode) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		tb.Fatal(err)
	}
	parent := os.NewFile(uintptr(fds[0]), "channel")
	child := os.NewFile(uintptr(fds[1]), "channel-child")
	defer parent.Close()
	const id = "inv_benchbenchbenchbenchbenc"
	cmd := &exec.Cmd{Path: prog, Args: []string{prog},
		Env:         []string{"RUKH_PROTOCOL=rukh.invoke/1", "RUKH_CHANNEL_FD=3", "RUKH_INVOCATION_ID=" + id},
		ExtraFiles:  []*os.File{child},
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
	var wg sync.WaitGroup
	var closeAfter []*os.File
	if pipes {
		for _, set := range []func(*os.File){func(f *os.File) { cmd.Stdout = f }, func(f *os.File) { cmd.Stderr = f }} {
			pr, pw, err := os.Pipe()
			if err != nil {
				tb.Fatal(err)
			}
			set(pw)
			closeAfter = append(closeAfter, pw)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer pr.Close()
				io.Copy(kernel.NewDiagnostics(65536), pr)
			}()
		}
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	child.Close()
	for _, f := range closeAfter {
		f.Close()
	}
	var exited chan error
	if wait != waitNone {
		exited = make(chan error, 1)
		pid := cmd.Process.Pid
		if wait == waitBlocking {
			go func() {
				var info unix.Siginfo
				exited <- unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			}()
		} else {
			go func() { exited <- waitPidfd(pid) }()
		}
	}
	parent.Write([]byte(`{"type":"invoke","invocationId":"` + id + `","command":"trivial.ping","input":{},"explicit":[],"interactive":false,"deadlineMs":30000}` + "\n"))
	line, _ := bufio.NewReader(parent).ReadBytes('\n')
	if wait != waitNone {
		if err := <-exited; err != nil {
			tb.Fatal(err)
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if err := cmd.Wait(); err != nil || !bytes.Contains(line, []byte("succeeded")) {
		tb.Fatalf("direct: %v %q", err, line)
	}
	wg.Wait()
}

type waitMode int

const (
	waitNone     waitMode = iota
	waitBlocking          // kernel/invoke.go waitExited: a goroutine blocked in waitid(WNOWAIT)
	waitPoll              // a pidfd in the netpoller, then waitid(P_PIDFD, WNOWAIT|WNOHANG)
)

// waitPidfd waits for pid to exit without reaping it and without parking
// an OS thread in a blocking syscall: the pidfd becomes readable at exit.
func waitPidfd(pid int) error {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var werr error
	err = rc.Read(func(fd uintptr) bool {
		var info unix.Siginfo
		werr = unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOWAIT|unix.WNOHANG, nil)
		if werr != nil {
			return true
		}
		return info.Signo != 0 // 0: not exited yet; wait for readability
	})
	if err != nil {
		return err
	}
	return werr
}

// BenchmarkDirectVariants prices the kernel's extra steps over the bare
// direct exec, interleaved, as medians: the drained stdout/stderr pipes,
// the blocking WNOWAIT waitid goroutine, both (what the kernel does), and
// both with the wait through a polled pidfd instead.
func BenchmarkDirectVariants(b *testing.B) {
	prog := trivialBinary(b)
	type variant struct {
		name  string
		pipes bool
		wait  waitMode
	}
	vs := []variant{{"direct", false, waitNone}, {"pipes", true, waitNone}, {"waitid", false, waitBlocking},
		{"pipes+waitid", true, waitBlocking}, {"pipes+pidfd", true, waitPoll}}
	d := make([][]time.Duration, len(vs))
	for b.Loop() {
		for i, v := range vs {
			t := time.Now()
			directVariant(b, prog, v.pipes, v.wait)
			d[i] = append(d[i], time.Since(t))
		}
	}
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.name
	}
	for i, n := range names {
		b.ReportMetric(float64(median(d[i]).Microseconds()), n+"-µs")
	}
	b.ReportMetric(0, "ns/op")
}
