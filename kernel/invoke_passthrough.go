package kernel

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// passthroughKillGrace is the time from SIGTERM (ctx done) to SIGKILL.
const passthroughKillGrace = 5 * time.Second

// RunPassthrough runs a passthrough command (CLI only): the program from
// dir with argv = program + execute.args + args, the caller's working
// directory and full environment, and its own process group. When stdin is
// a terminal the group becomes the terminal's foreground group for the run
// (so Ctrl-C and job control reach it directly) and the caller's group is
// restored afterwards; otherwise SIGINT, SIGTERM, SIGHUP and SIGQUIT the
// caller receives are forwarded to the group. When ctx is done the group
// gets SIGTERM, then SIGKILL 5 s later. After the program exits every
// process it left behind, in its group or not, is killed (see procs.go);
// the program gets SIGKILL if rukh dies. Where the host has PID
// namespaces it runs, as a managed program does, under rukh's init in a
// namespace of its own (contain.go). exitCode is the program's exit
// status, or 128+signal when a signal ended it; err is set only when the
// program could not be started or waited for.
func RunPassthrough(ctx context.Context, dir string, c *Command, args []string, stdin io.Reader, stdout, stderr io.Writer) (exitCode int, err error) {
	return (&Runner{}).RunPassthrough(ctx, dir, c, args, stdin, stdout, stderr)
}

// RunPassthrough is the package's RunPassthrough with r's Recorder.
func (r *Runner) RunPassthrough(ctx context.Context, dir string, c *Command, args []string, stdin io.Reader, stdout, stderr io.Writer) (exitCode int, err error) {
	if c == nil {
		return -1, Errorf(CodeInvalid, "no command to run")
	}
	prog, err := programPath(dir, c.Execute.Program)
	if err != nil {
		return -1, err
	}
	argv := append([]string{prog}, c.Execute.Args...)
	argv = append(argv, args...)
	cmd := &exec.Cmd{
		Path:        prog,
		Args:        argv,
		Stdin:       stdin,
		Stdout:      stdout,
		Stderr:      stderr,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
		// An escaped grandchild holding a copied stream must not hang Wait.
		WaitDelay: time.Second,
	}
	plat.procAttr(cmd.SysProcAttr)
	tty := -1
	if f, ok := stdin.(*os.File); ok && IsTerminal(f) {
		tty = int(f.Fd())
		cmd.SysProcAttr.Foreground = true
		cmd.SysProcAttr.Ctty = 0 // the child's stdin
	}

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)

	u, _ := initFor(nil, "", r.NoNamespaces)
	proc, cmd, err := startContained(&u, cmd, "", nil, r.Recorder)
	if err != nil {
		return -1, Errorf(CodeUnavailable, "cannot start program %q", c.Execute.Program).Wrap(err)
	}
	pgid := proc.leader
	if tty >= 0 {
		defer restoreForeground(tty)
	}

	exited := make(chan error, 1)
	go func() { exited <- plat.waitExited(pgid) }()
	ctxDone := ctx.Done()
	var killC <-chan time.Time
	for done := false; !done; {
		select {
		case <-exited:
			done = true
		case sig := <-sigs:
			syscall.Kill(-pgid, sig.(syscall.Signal))
		case <-ctxDone:
			ctxDone = nil
			syscall.Kill(-pgid, syscall.SIGTERM)
			killC = time.After(passthroughKillGrace)
		case <-killC:
			killC = nil
			syscall.Kill(-pgid, syscall.SIGKILL)
		}
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
	if !u.contains() {
		cleanup(proc)
	}
	waitErr := cmd.Wait()
	untrack(proc)
	ps := cmd.ProcessState
	if ps == nil {
		if u.report != nil {
			u.report.Close()
		}
		return -1, Errorf(CodeInternal, "cannot wait for the program").Wrap(waitErr)
	}
	ws, _ := ps.Sys().(syscall.WaitStatus)
	if ended := u.readReport(prog, ""); ended.startErr != "" {
		return -1, Errorf(CodeUnavailable, "cannot start program %q", c.Execute.Program).Wrap(errors.New(strings.TrimPrefix(ended.startErr, "cannot start program: ")))
	} else if ended.exited {
		ws = ended.ws
	}
	if ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return ws.ExitStatus(), nil
}

// restoreForeground makes the caller's process group the terminal's
// foreground group again. A background group changing it would get
// SIGTTOU, so the signal is ignored for the moment of the call.
func restoreForeground(tty int) {
	signal.Ignore(syscall.SIGTTOU)
	defer signal.Reset(syscall.SIGTTOU)
	unix.IoctlSetPointerInt(tty, unix.TIOCSPGRP, syscall.Getpgrp())
}
