// Package bench holds Rukh's performance helpers: rukhbench (the SPEC §9
// driver run by scripts/bench.sh), trivial and trivialsdk (the trivial
// extensions it calls), bindingprobe (where a revision's bytes and memory
// go), and these Go benchmarks, which split a tools/call into its parts. It
// is not part of the product and nothing in the product imports it.
package bench

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/rukh-dev/rukh/kernel"
)

var (
	buildOnce sync.Once
	trivial   string
	buildErr  error
)

// trivialBinary builds bench/trivial statically, once per test binary.
func trivialBinary(tb testing.TB) string {
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "rukh-bench-")
		if err != nil {
			buildErr = err
			return
		}
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

// BenchmarkDirectExec is the SPEC §9 baseline in-process.
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
