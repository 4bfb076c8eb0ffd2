package kernel

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultTimeout is the invocation deadline when Limits.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// Runner defaults for the stop sequence.
const (
	DefaultTermGrace    = 2 * time.Second
	DefaultKillGrace    = 3 * time.Second
	DefaultDrainTimeout = 2 * time.Second
)

// Runner runs managed commands as child processes speaking rukh.invoke/1
// (SPEC §5). The zero value is usable; fields are seams for tests and
// owners. A Runner is safe for concurrent use.
type Runner struct {
	// Env is the parent environment the child's PATH, HOME and LANG are
	// taken from; nil means os.Environ.
	Env func() []string
	// NewID makes an invocation id when Invocation.ID is empty; nil means
	// NewInvocationID.
	NewID func() string
	// TermGrace is the time from the cancel message to SIGTERM of the
	// process group; zero means DefaultTermGrace.
	TermGrace time.Duration
	// KillGrace is the time from SIGTERM to SIGKILL of the group; the stop
	// deadline (cancel + TermGrace + KillGrace) is fixed when the stop
	// begins and never renewed. Zero means DefaultKillGrace.
	KillGrace time.Duration
	// DrainTimeout bounds how long, after the program exited and its group
	// was killed, stdout, stderr and the channel may take to reach EOF (a
	// process that left the group may hold them). Zero means
	// DefaultDrainTimeout.
	DrainTimeout time.Duration
}

// NewRunner returns a Runner with the default environment and grace periods.
func NewRunner() *Runner {
	return &Runner{
		Env:          os.Environ,
		NewID:        NewInvocationID,
		TermGrace:    DefaultTermGrace,
		KillGrace:    DefaultKillGrace,
		DrainTimeout: DefaultDrainTimeout,
	}
}

var _ Invoker = (*Runner)(nil)

// NewInvocationID returns a fresh random invocation id: "inv_" and 26
// lowercase base32 characters (128 random bits).
func NewInvocationID() string {
	return "inv_" + strings.ToLower(rand.Text())
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Invoke runs inv.Command once and returns its one final outcome. The
// program is Dir + execute.program, argv is the program plus execute.args
// (never user input), the working directory is the caller's, the process
// gets its own process group and a minimal environment, and input travels
// only on the channel. Invoke returns after the program exited, its whole
// process group was killed and reaped, and its streams were drained (or
// DrainTimeout passed); only then is checked data handed out.
// inv.OnProgress runs on the goroutine driving the invocation and must not
// block; it is not called once the stop sequence began.
func (r *Runner) Invoke(ctx context.Context, inv *Invocation) Result {
	id := inv.ID
	if id == "" {
		if r.NewID != nil {
			id = r.NewID()
		} else {
			id = NewInvocationID()
		}
	}
	res := Result{InvocationID: id}
	end := func(o Outcome, format string, args ...any) Result {
		res.Outcome, res.Reason = o, fmt.Sprintf(format, args...)
		return res
	}
	c := inv.Command
	if c == nil {
		return end(Rejected, "no command to invoke")
	}
	if m := c.Execute.Mode; m != "" && m != ModeManaged {
		return end(Rejected, "command %q runs in %s mode and cannot be invoked as managed", c.ID, m)
	}
	if l := c.Execute.Lifetime; l != "" && l != LifetimeForeground {
		return end(Rejected, "command %q has lifetime %q, only %q is supported", c.ID, l, LifetimeForeground)
	}
	lim := inv.Limits
	if lim.Timeout <= 0 {
		lim.Timeout = DefaultTimeout
	}
	if lim.ResultBytes <= 0 || lim.ResultBytes > MaxResultBytes {
		lim.ResultBytes = MaxResultBytes // owners may only lower it
	}
	rc, err := newResultChecker(c.Execute.Result, lim.ResultBytes)
	if err != nil {
		return end(ExecutionFailed, "invalid result declaration: %v", err)
	}
	prog, err := programPath(inv.Dir, c.Execute.Program)
	if err != nil {
		return end(ExecutionFailed, "%v", err)
	}
	if ctx.Err() != nil {
		return end(Cancelled, "%s", cancelReason(ctx))
	}
	deadlineMs := lim.Timeout.Milliseconds()
	if d, ok := ctx.Deadline(); ok {
		if left := time.Until(d).Milliseconds(); left < deadlineMs {
			deadlineMs = max(left, 0)
		}
	}
	line := inv.Request.Encode(id, inv.Interactive, deadlineMs, inv.Caller)
	s := &session{
		r: r, inv: inv, id: id, lim: lim, rc: rc, prog: prog, invokeLine: line,
		termGrace: orDefault(r.TermGrace, DefaultTermGrace),
		killGrace: orDefault(r.KillGrace, DefaultKillGrace),
		drain:     orDefault(r.DrainTimeout, DefaultDrainTimeout),
	}
	o, reason, result := s.run(ctx)
	res.Outcome, res.Reason = o, reason
	if o == Succeeded || o == CommandFailed {
		res.CommandResult = result
	}
	return res
}

// programPath joins the release directory and execute.program, refusing a
// program outside the directory (install checks this too).
func programPath(dir, program string) (string, error) {
	if program == "" {
		return "", Errorf(CodeInvalid, "command declares no program")
	}
	if !filepath.IsAbs(dir) {
		// never resolve a program against the working directory
		return "", Errorf(CodeInternal, "release directory %q is not absolute", dir)
	}
	rel := filepath.FromSlash(program)
	if !filepath.IsLocal(rel) {
		return "", Errorf(CodeInvalid, "program %q is not inside the release directory", program)
	}
	p, err := filepath.Abs(filepath.Join(dir, rel))
	if err != nil {
		return "", &Error{Code: CodeInternal, Message: "cannot resolve the program path", Err: err}
	}
	return p, nil
}

// cancelReason is the stable reason for a done ctx.
func cancelReason(ctx context.Context) string {
	cause := context.Cause(ctx)
	switch {
	case cause == nil, cause == context.Canceled:
		return "cancelled"
	case errors.Is(cause, context.DeadlineExceeded):
		return "deadline exceeded"
	}
	return "cancelled: " + cause.Error()
}

// childEnv is the minimal environment: the protocol variables plus PATH,
// HOME and LANG from the parent when set.
func (r *Runner) childEnv(id string) []string {
	env := []string{
		"RUKH_PROTOCOL=" + InvokeProtocol,
		fmt.Sprintf("RUKH_CHANNEL_FD=%d", ChannelFD),
		"RUKH_INVOCATION_ID=" + id,
	}
	parent := os.Environ
	if r.Env != nil {
		parent = r.Env
	}
	keep := map[string]bool{"PATH": true, "HOME": true, "LANG": true}
	for _, kv := range parent() {
		k, _, ok := strings.Cut(kv, "=")
		if ok && keep[k] {
			env = append(env, kv)
			delete(keep, k) // first one wins, as getenv does
		}
	}
	return env
}

// session is one running invocation.
type session struct {
	r          *Runner
	inv        *Invocation
	id         string
	lim        Limits
	rc         *resultChecker
	prog       string
	invokeLine []byte

	termGrace, killGrace, drain time.Duration
}

// closers collects file descriptors to close once.
type closers []io.Closer

func (c *closers) add(f io.Closer) { *c = append(*c, f) }
func (c closers) close() {
	for _, f := range c {
		f.Close()
	}
}

// run starts the child and drives it to its one outcome.
func (s *session) run(ctx context.Context) (Outcome, string, []byte) {
	var parentSide, childSide closers
	defer parentSide.close()
	defer childSide.close() // no-op after the explicit close below

	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return ExecutionFailed, fmt.Sprintf("cannot create the channel: %v", err), nil
	}
	// A nonblocking parent end makes the *os.File pollable, so Close
	// unblocks a pending Read or Write.
	if err := syscall.SetNonblock(fds[0], true); err != nil {
		syscall.Close(fds[0])
		syscall.Close(fds[1])
		return ExecutionFailed, fmt.Sprintf("cannot create the channel: %v", err), nil
	}
	conn := os.NewFile(uintptr(fds[0]), "rukh-channel")
	childConn := os.NewFile(uintptr(fds[1]), "rukh-channel-child")
	parentSide.add(conn)
	childSide.add(childConn)

	cmd := &exec.Cmd{
		Path:        s.prog,
		Args:        append([]string{s.prog}, s.inv.Command.Execute.Args...),
		Env:         s.r.childEnv(s.id),
		ExtraFiles:  []*os.File{childConn},
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}

	// Streams: an *os.File goes to the child as is (the CLI's terminal);
	// any other writer gets a pipe drained by a goroutine to EOF.
	var copies sync.WaitGroup
	var readEnds []*os.File
	output := func(w io.Writer) (io.Writer, error) {
		if w == nil {
			return nil, nil // exec connects the null device
		}
		if f, ok := w.(*os.File); ok {
			return f, nil
		}
		pr, pw, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		parentSide.add(pr)
		childSide.add(pw)
		readEnds = append(readEnds, pr)
		copies.Add(1)
		go func() {
			defer copies.Done()
			drainTo(w, pr)
		}()
		return pw, nil
	}
	if cmd.Stdout, err = output(s.inv.Stdout); err == nil {
		cmd.Stderr, err = output(s.inv.Stderr)
	}
	if err != nil {
		childSide.close()
		childSide = nil
		parentSide.close()
		parentSide = nil
		copies.Wait()
		return ExecutionFailed, fmt.Sprintf("cannot create output pipes: %v", err), nil
	}
	var stdinW *os.File
	switch in := s.inv.Stdin.(type) {
	case nil:
		// exec connects the null device: a closed stdin.
	case *os.File:
		cmd.Stdin = in
	default:
		pr, pw, err := os.Pipe()
		if err != nil {
			childSide.close()
			childSide = nil
			return ExecutionFailed, fmt.Sprintf("cannot create the stdin pipe: %v", err), nil
		}
		childSide.add(pr)
		parentSide.add(pw)
		cmd.Stdin = pr
		stdinW = pw
	}

	err = cmd.Start()
	childSide.close() // the child holds its own copies now
	childSide = nil
	if err != nil {
		parentSide.close()
		parentSide = nil
		copies.Wait()
		return ExecutionFailed, fmt.Sprintf("cannot start program: %v", err), nil
	}
	pgid := cmd.Process.Pid
	if stdinW != nil {
		// Not waited for: it may block reading the caller's reader. Closing
		// stdinW at the end makes its next write fail.
		go func() {
			io.Copy(stdinW, s.inv.Stdin)
			stdinW.Close()
		}()
	}

	// Writer: the invoke line first, then at most one cancel.
	out := make(chan []byte, 2)
	out <- s.invokeLine
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		for b := range out {
			if _, err := conn.Write(b); err != nil {
				for range out {
				}
				return
			}
		}
	}()

	// Reader: checks each message as it arrives.
	events := make(chan channelEvent)
	quit := make(chan struct{})
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		s.readChannel(conn, events, quit)
	}()

	exited := make(chan error, 1)
	go func() { exited <- waitExited(pgid) }()

	var (
		report     *checkedReport
		violation  string
		stopReason string
		stopping   bool
		termC      <-chan time.Time
		killC      <-chan time.Time
		readerEnd  bool
	)
	deadline := time.NewTimer(s.lim.Timeout)
	defer deadline.Stop()
	ctxDone := ctx.Done()
	leaderExited := false

	signalGroup := func(sig syscall.Signal) { syscall.Kill(-pgid, sig) }
	stop := func(reason string) {
		if stopping {
			return // the stop deadline is fixed at the first stop
		}
		stopping = true
		stopReason = reason
		select {
		case out <- encodeCancel(reason):
		default:
		}
		termC = time.After(s.termGrace)
		killC = time.After(s.termGrace + s.killGrace)
	}
	handle := func(ev channelEvent, ok bool) {
		if !ok {
			readerEnd = true
			return
		}
		switch {
		case ev.violation != "":
			if violation == "" && stopReason == "" {
				violation = ev.violation
			}
			conn.Close() // the child's further writes fail
			if !leaderExited && !stopping {
				stopping = true
				signalGroup(syscall.SIGTERM)
				killC = time.After(s.killGrace)
			}
		case ev.report != nil:
			report = ev.report
		case ev.progress != nil:
			if s.inv.OnProgress != nil && !stopping {
				s.inv.OnProgress(*ev.progress)
			}
		}
	}

	for !leaderExited {
		select {
		case <-exited:
			leaderExited = true
		case ev, ok := <-events:
			if !ok {
				events = nil
			}
			handle(ev, ok)
		case <-ctxDone:
			ctxDone = nil
			stop(cancelReason(ctx))
		case <-deadline.C:
			stop("deadline exceeded")
		case <-termC:
			termC = nil
			signalGroup(syscall.SIGTERM)
		case <-killC:
			killC = nil
			signalGroup(syscall.SIGKILL)
		}
	}
	// The leader is a zombie, so its pid still names the group: kill every
	// process left in it, then reap the leader.
	signalGroup(syscall.SIGKILL)
	waitErr := cmd.Wait()

	// Drain the channel and the streams to EOF, bounded.
	drainC := time.After(s.drain)
	expired := false
	for !readerEnd {
		select {
		case ev, ok := <-events:
			if !ok {
				events = nil
			}
			handle(ev, ok)
		case <-drainC:
			expired = true
			close(quit)
			conn.Close()
			<-readerDone
			readerEnd = true
		}
	}
	copiesDone := make(chan struct{})
	go func() { copies.Wait(); close(copiesDone) }()
	if !expired {
		select {
		case <-copiesDone:
		case <-drainC:
			expired = true
		}
	}
	if expired {
		for _, f := range readEnds {
			f.Close()
		}
		<-copiesDone
	}
	close(out)
	conn.Close()
	<-writerDone

	return s.decide(cmd.ProcessState, waitErr, report, violation, stopReason)
}

// decide applies the outcome rules of docs/extension-protocol.md.
func (s *session) decide(ps *os.ProcessState, waitErr error, report *checkedReport, violation, stopReason string) (Outcome, string, []byte) {
	switch {
	case violation != "":
		return ExecutionFailed, violation, nil
	case stopReason != "":
		return Cancelled, stopReason, nil
	case ps == nil:
		return ExecutionFailed, fmt.Sprintf("cannot wait for the program: %v", waitErr), nil
	}
	ws, _ := ps.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		what := "without a report"
		if report != nil {
			what = "after reporting " + string(report.outcome)
		}
		return ExecutionFailed, fmt.Sprintf("program killed by signal %s %s", unix.SignalName(ws.Signal()), what), nil
	}
	code := ws.ExitStatus()
	switch {
	case report == nil:
		return ExecutionFailed, fmt.Sprintf("program exited with status %d without a report", code), nil
	case report.outcome == Succeeded && code != 0:
		return ExecutionFailed, fmt.Sprintf("report says succeeded but the program exited with status %d", code), nil
	case report.outcome == Succeeded:
		return Succeeded, "", report.result
	case code == 0:
		return ExecutionFailed, "report says command_failed but the program exited with status 0", nil
	}
	reason := report.reason
	if reason == "" {
		reason = "command failed"
	}
	return CommandFailed, reason, report.result
}

// readChannel reads and checks lines until EOF, an error, a violation or
// quit. Everything after the first report is a violation.
func (s *session) readChannel(conn io.Reader, events chan<- channelEvent, quit <-chan struct{}) {
	defer close(events)
	send := func(ev channelEvent) bool {
		select {
		case events <- ev:
			return true
		case <-quit:
			return false
		}
	}
	lr := newLineReader(conn, s.lim.ResultBytes+channelOverhead)
	reported := false
	for {
		line, err := lr.next()
		if errors.Is(err, errLineTooLong) {
			send(channelEvent{violation: fmt.Sprintf("channel message over %d bytes", lr.max)})
			return
		}
		if err != nil {
			return // EOF, or the channel was closed
		}
		ev := parseChannelLine(line, s.id, s.rc)
		if ev.violation == "" && reported {
			if ev.report != nil {
				ev = channelEvent{violation: "second report"}
			} else {
				ev = channelEvent{violation: "progress after the report"}
			}
		}
		if ev.report != nil {
			reported = true
		}
		if !send(ev) || ev.violation != "" {
			return
		}
	}
}

// drainTo copies r to w until EOF; after a write error it keeps reading and
// discarding so the child never blocks on a full pipe.
func drainTo(w io.Writer, r io.Reader) {
	if _, err := io.Copy(w, r); err != nil {
		io.Copy(io.Discard, r)
	}
}

// waitExited blocks until process pid has exited, without reaping it, so
// its pid (and process group id) cannot be reused before the group is
// killed.
func waitExited(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return err
		}
	}
}
