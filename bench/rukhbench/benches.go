//go:build linux

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// directExec runs prog the way the kernel runs a managed command, minus Rukh:
// a socket pair on fd 3, its own process group, the minimal environment,
// stdin/stdout/stderr on /dev/null; it writes the invoke line, reads the
// report line and waits for the exit. This is the "exec a trivial static
// program directly" baseline of docs/performance.md with the same tiny
// channel exchange the program needs to do its job.
func directExec(prog, command string) (time.Duration, error) {
	t := time.Now()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	parent := os.NewFile(uintptr(fds[0]), "channel")
	child := os.NewFile(uintptr(fds[1]), "channel-child")
	defer parent.Close()
	const id = "inv_benchbenchbenchbenchbenc"
	cmd := &exec.Cmd{
		Path:        prog,
		Args:        []string{prog},
		Env:         []string{"RUKH_PROTOCOL=rukh.invoke/1", "RUKH_CHANNEL_FD=3", "RUKH_INVOCATION_ID=" + id, "PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LANG=C.UTF-8"},
		ExtraFiles:  []*os.File{child},
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if err := cmd.Start(); err != nil {
		child.Close()
		return 0, err
	}
	child.Close()
	invoke := `{"type":"invoke","invocationId":"` + id + `","command":"` + command + `","input":{},"explicit":[],"interactive":false,"deadlineMs":30000}` + "\n"
	if _, err := parent.Write([]byte(invoke)); err != nil {
		cmd.Wait()
		return 0, err
	}
	report, err := bufio.NewReader(parent).ReadBytes('\n')
	if err != nil || !bytes.Contains(report, []byte(`"outcome":"succeeded"`)) {
		cmd.Wait()
		return 0, fmt.Errorf("direct exec of %s: report %q: %v", prog, report, err)
	}
	if err := cmd.Wait(); err != nil {
		return 0, fmt.Errorf("direct exec of %s: %v", prog, err)
	}
	return time.Since(t), nil
}
