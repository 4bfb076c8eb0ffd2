//go:build linux

// Package peerexec is the trivial tool of the bench's peer MCP servers
// (bench/peer-gosdk, bench/peer-mcpgo): it runs the bench/trivial program
// exactly as rukhbench's direct exec does (socket pair on fd 3, own process
// group, invoke line, report line, wait), so a peer's tools/call and rukh's
// do the same work behind the protocol.
package peerexec

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// Run runs prog once through the fd-3 exchange and returns its report line.
func Run(prog string) ([]byte, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
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
		return nil, err
	}
	child.Close()
	invoke := `{"type":"invoke","invocationId":"` + id + `","command":"trivial.ping","input":{},"explicit":[],"interactive":false,"deadlineMs":30000}` + "\n"
	if _, err := parent.Write([]byte(invoke)); err != nil {
		cmd.Wait()
		return nil, err
	}
	report, err := bufio.NewReader(parent).ReadBytes('\n')
	if err != nil || !bytes.Contains(report, []byte(`"outcome":"succeeded"`)) {
		cmd.Wait()
		return nil, fmt.Errorf("trivial: report %q: %v", report, err)
	}
	return report, cmd.Wait()
}
