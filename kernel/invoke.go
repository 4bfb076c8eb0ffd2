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

	"github.com/go-json-experiment/json/jsontext"
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
// (docs/extension-protocol.md). The zero value is usable; fields are seams
// for tests and owners. A Runner is safe for concurrent use.
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
	// NoNamespaces starts programs without namespaces, as on a host that
	// has none: the recorded sweep then contains them (and a confined
	// template is refused).
	NoNamespaces bool
	// Recorder, when set, is given every process an invocation has beyond
	// its leader while it runs, so that the next rukh process can kill what
	// survives a SIGKILL of this one (procs.go); nil records nothing.
	Recorder ProcessRecorder
	// Settings gives a call the owner's values of its package's settings;
	// nil gives none (a required setting then rejects the call).
	Settings SettingsSource
	// Slots runs unconfined calls in warm containment slots, reused from
	// call to call, instead of a fresh init each (initproto.go, Slots):
	// for serve processes (WarmSlots); the one-shot CLI keeps a fresh one.
	Slots bool
}

// WarmSlots sets r.Slots and starts a first slot in the background, so
// the first call does not wait for one; logf, when not nil, is told of
// every slot dropped and why, and of a call that could not use one (never
// an argument or environment value). Call it before r's first call.
func (r *Runner) WarmSlots(logf func(format string, args ...any)) {
	r.Slots = true
	warmSlots(logf)
	keepSpareCallEnds()
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
// gets its own process group (and, unless inv.Terminal, no controlling
// terminal: a session of its own where rukh has one) and a minimal
// environment, and input
// travels only on the channel. Invoke returns after the program exited,
// every process it left behind, in its group or not, was killed and reaped
// (procs.go), and its streams were drained (or DrainTimeout passed); only
// then is checked data handed out.
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
	if lim.Refuse != "" {
		return end(ExecutionFailed, "%s", lim.Refuse)
	}
	settings, o, reason := r.settings(inv)
	if o != "" {
		return end(o, "%s", reason)
	}
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
	u, refuse := initFor(lim.Confine, lim.Template, r.NoNamespaces)
	if refuse != "" {
		return end(ExecutionFailed, "%s", refuse)
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
	line := inv.Request.Encode(id, inv.Interactive, deadlineMs, inv.Caller, settings)
	s := &session{
		r: r, inv: inv, id: id, lim: lim, rc: rc, prog: prog, invokeLine: line, init: u,
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

// settings resolves the values a call delivers. A required setting the
// owner has not set rejects the call; values the source cannot give (its
// key is missing, say) fail it. A package that declares none gets nil.
func (r *Runner) settings(inv *Invocation) (map[string]any, Outcome, string) {
	if len(inv.Settings) == 0 {
		return nil, "", ""
	}
	var stored map[string]jsontext.Value
	if r.Settings != nil {
		ids := make([]string, len(inv.Settings))
		for i := range inv.Settings {
			ids[i] = inv.Settings[i].ID
		}
		var err error
		if stored, err = r.Settings.SettingValues(inv.Package, inv.Caller.Endpoint, ids); err != nil {
			return nil, ExecutionFailed, sourceReason(err)
		}
	}
	vals, err := ResolveSettings(inv.Package, inv.Settings, stored)
	if err != nil {
		return nil, Rejected, err.Error()
	}
	return vals, "", ""
}

// sourceReason is what a caller is told of a settings source's failure:
// its message and the owner's next step, never the paths and causes the
// error carries for the owner's own log.
func sourceReason(err error) string {
	var ke *Error
	if !errors.As(err, &ke) {
		return err.Error()
	}
	if ke.Hint != "" {
		return ke.Message + " (" + ke.Hint + ")"
	}
	return ke.Message
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
		return "", Errorf(CodeInternal, "cannot resolve the program path").Wrap(err)
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
// HOME and LANG from the parent when set. A confined program gets the
// protocol variables only, and its scratch directory (when the template
// grants one) as RUKH_SCRATCH and TMPDIR.
func (r *Runner) childEnv(id string, confined bool, scratch string) []string {
	env := []string{
		"RUKH_PROTOCOL=" + InvokeProtocol,
		fmt.Sprintf("RUKH_CHANNEL_FD=%d", ChannelFD),
		"RUKH_INVOCATION_ID=" + id,
	}
	if confined {
		if scratch != "" {
			env = append(env, "RUKH_SCRATCH="+scratch, "TMPDIR="+scratch)
		}
		return env
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
	init       underInit // the init the program runs under, if any
	slot       *slotCall // the slot the program runs in, if any
	scratch    string    // the confined program's scratch directory, if any
	cgroup     *pidsCgroup

	termGrace, killGrace, drain time.Duration

	// set by start
	cmd         *exec.Cmd
	proc        *tracked
	conn        *channelEnd   // the parent end of the channel
	parentSide  closers       // conn, pipe read ends, the stdin write end
	readEnds    []*os.File    // stdout/stderr pipes being drained
	copies      chan struct{} // a value from each stdout/stderr drain as it ends
	nCopies     int
	inline      []*inlineStream // stdout/stderr streams the supervising loop drains
	out         chan []byte     // to the writer, started by send only when needed
	writerDone  chan struct{}
	writeFailed bool
	connFD      int          // the channel, read by the supervising loop
	cw          *callWait    // what the supervising loop's poll waits in, if not ppoll
	lines       lineSplitter // the channel's lines as they arrive
	reported    bool

	// set by supervise and drain
	report     *checkedReport
	violation  string
	stopReason string
	stopping   bool
	termAt     time.Time // when the stop sequence sends SIGTERM, if pending
	killAt     time.Time // when it sends SIGKILL, if pending
	readerEnd  bool
}

// closers collects file descriptors to close once.
type closers []io.Closer

func (c *closers) add(f io.Closer) { *c = append(*c, f) }
func (c closers) close() {
	for _, f := range c {
		f.Close()
	}
}

// run starts the child and drives it to its one outcome: start, supervise
// until the leader exits, clean up every process it left, drain.
func (s *session) run(ctx context.Context) (o Outcome, reason string, result []byte) {
	if conf := s.lim.Confine; conf != nil {
		defer func() {
			if o != Succeeded && s.inv.Stderr != nil {
				io.WriteString(s.inv.Stderr, describeConfine(conf, s.lim.Template))
			}
		}()
		defer func() {
			s.init.closeMachine() // a start that failed first leaves them
			if s.scratch != "" {
				removeScratch(s.scratch)
			}
			if s.cgroup != nil {
				s.cgroup.remove()
			}
		}()
		if reason := s.confine(conf); reason != "" {
			return ExecutionFailed, reason, nil
		}
	}
	if reason := s.start(); reason != "" {
		return ExecutionFailed, reason, nil
	}
	defer s.parentSide.close()
	s.supervise(ctx)
	var ended initEnd
	var waitErr error
	if s.slot != nil {
		// The slot reports the call over once nothing of it is left.
		s.slot.wait()
		ended = s.slot.finish(s.prog)
	} else {
		// The leader is a zombie, so its pid still names its group: kill
		// every process left in it and every other one the invocation left
		// behind, then reap the leader.
		syscall.Kill(-s.proc.leader, syscall.SIGKILL)
		if !s.init.contains() {
			cleanup(s.proc)
		}
		waitErr = s.cmd.Wait()
		untrack(s.proc)
		ended = s.init.readReport(s.prog, s.lim.Template)
	}
	if s.cgroup != nil && ended.limit == 0 && (!ended.exited || ended.ws.ExitStatus() != 0 || ended.ws.Signaled()) && s.cgroup.hitMax() {
		ended.limit = LimitProcesses // a failed program that was refused a process
	}
	s.drainAll()

	return s.decide(s.cmd.ProcessState, waitErr, ended, s.report, s.violation, s.stopReason)
}

// confine makes the confined program's scratch directory, when its
// template grants one, and the spec its init reads.
func (s *session) confine(conf *Confine) (reason string) {
	if wantsScratch(conf) {
		dir, err := takeScratch()
		if err != nil {
			return fmt.Sprintf("cannot make the scratch directory of template %q: %v", s.lim.Template, err)
		}
		s.scratch = dir
	}
	if conf.Processes > 0 && os.Getuid() == 0 {
		cg, err := newPidsCgroup(s.id, conf.Processes)
		if err != nil {
			return fmt.Sprintf("cannot make the pids cgroup that limits processes for template %q: %v", s.lim.Template, err)
		}
		s.cgroup, s.init.cgroup = cg, cg.procs
	}
	// An rlimit on processes is watched through the call's own /proc.
	s.init.ownProc = grantsProc(conf) || conf.Processes > 0 && s.cgroup == nil
	s.init.serve = s.r.Slots || slotsAlways // a warm confining init, where one can be
	if err := s.init.confineSpec(conf, s.lim.Template, s.inv.Dir, s.scratch, s.cgroup != nil); err != nil {
		if s.cgroup != nil {
			s.cgroup.remove()
			s.cgroup = nil
		}
		return err.Error()
	}
	return ""
}

// start creates the channel and the stream pipes, starts the program and
// the goroutines serving it. On failure it returns the reason and leaves
// nothing open.
func (s *session) start() (reason string) {
	var child childEnds // the child holds its own copies once started
	defer func() { child.closers.close() }()
	defer func() {
		if reason != "" {
			s.parentSide.close()
			s.waitCopies(nil)
		}
	}()

	childConn, err := s.openChannel()
	if err != nil {
		return fmt.Sprintf("cannot create the channel: %v", err)
	}
	child.closers.add(childConn)
	child.files = append(child.files, childConn)
	s.cmd = s.newCmd(childConn)
	if s.cmd.Stdout, err = s.output(s.inv.Stdout, &child); err == nil {
		s.cmd.Stderr, err = s.output(s.inv.Stderr, &child)
	}
	if err != nil {
		return fmt.Sprintf("cannot create output pipes: %v", err)
	}
	stdinW, err := s.input(&child)
	if err != nil {
		return fmt.Sprintf("cannot create the stdin pipe: %v", err)
	}

	if (s.r.Slots || slotsAlways) && s.init.path != "" && s.init.spec == nil && !s.inv.Terminal {
		// A slot, when one serves: else (or when it failed before the
		// program started) an init of the call's own, as below.
		// The invoke line goes to the channel at once, before the program
		// started: the channel holds it for whichever program reads it.
		if c, ok := startInSlot(s.cmd, child.closers, child.files); ok {
			child.closers = nil // the slot call holds them until its program started
			s.slot, s.proc = c, &tracked{}
			s.serve(stdinW)
			return ""
		}
	}
	if s.proc, s.cmd, err = startContained(&s.init, s.cmd, s.id, child.files, s.r.Recorder); err != nil {
		return fmt.Sprintf("cannot start program: %v", err)
	}
	s.serve(stdinW)
	return ""
}

// childEnds are what start opens for the child: closers are closed in the
// parent once the child holds its own copies (or start failed), and files
// name this invocation's descriptors.
type childEnds struct {
	closers closers
	files   []*os.File
}

// openChannel creates the channel, keeps the parent's end in s.conn and
// returns the child's.
func (s *session) openChannel() (*os.File, error) {
	fds, err := takeSpare(&spares.chans, newChannelFDs)
	if err != nil {
		return nil, err
	}
	s.conn = &channelEnd{fd: fds[0]}
	s.parentSide.add(s.conn)
	return os.NewFile(uintptr(fds[1]), "rukh-channel-child"), nil
}

// newChannelFDs is a fresh channel: rukh's end, then the program's.
// Rukh's is nonblocking: the supervising loop reads what is there, and a
// write the socket cannot take at once goes to the writer.
func newChannelFDs() ([2]int, error) {
	fds, err := cloexecSocketpair()
	if err != nil {
		return fds, err
	}
	if err := setNonblockNew(fds[0]); err != nil {
		syscall.Close(fds[0])
		syscall.Close(fds[1])
		return fds, err
	}
	return fds, nil
}

// Spare call ends: in a serving process (WarmSlots) the next calls'
// channels and output pipes are made while calls run, by a goroutine of
// their own, not on the next call's path before its program can start.
// A spare is fresh, held by rukh alone (close-on-exec) and never given to
// any program before the call that takes it: as if that call made it.
var spares struct {
	mu      sync.Mutex
	on      bool
	filling bool
	chans   [][2]int // socket pairs from newChannelFDs
	pipes   [][2]int // pipes from newStreamFDs
}

// spareCalls is how many calls' ends are kept ready.
const spareCalls = 2

// keepSpareCallEnds makes this process keep spare call ends.
func keepSpareCallEnds() {
	spares.mu.Lock()
	spares.on = true
	spares.mu.Unlock()
	refillSpares()
}

// takeSpare is a spare from pool, or one made by mk when there is none;
// taking one starts a refill.
func takeSpare(pool *[][2]int, mk func() ([2]int, error)) ([2]int, error) {
	spares.mu.Lock()
	if !spares.on {
		spares.mu.Unlock()
		return mk()
	}
	var fds [2]int
	n := len(*pool)
	if n > 0 {
		// The oldest first: none waits behind newer ones for long.
		fds = (*pool)[0]
		copy(*pool, (*pool)[1:])
		*pool = (*pool)[:n-1]
	}
	spares.mu.Unlock()
	refillSpares()
	if n == 0 {
		return mk()
	}
	return fds, nil
}

// refillSpares starts the goroutine that makes spares, unless it runs.
func refillSpares() {
	spares.mu.Lock()
	start := !spares.filling
	spares.filling = true
	spares.mu.Unlock()
	if start {
		go fillSpares()
	}
}

// fillSpares makes spares until spareCalls calls' worth are ready; a
// failure (descriptors ran out) leaves the next calls to make their own.
func fillSpares() {
	for {
		spares.mu.Lock()
		var pool *[][2]int
		var mk func() ([2]int, error)
		switch {
		case len(spares.chans) < spareCalls:
			pool, mk = &spares.chans, newChannelFDs
		case len(spares.pipes) < 2*spareCalls:
			pool, mk = &spares.pipes, newStreamFDs
		default:
			spares.filling = false
			spares.mu.Unlock()
			return
		}
		spares.mu.Unlock()
		fds, err := mk()
		spares.mu.Lock()
		if err != nil {
			spares.filling = false
			spares.mu.Unlock()
			return
		}
		*pool = append(*pool, fds)
		spares.mu.Unlock()
	}
}

// channelEnd is rukh's end of the channel: a plain nonblocking descriptor
// outside the runtime's poller, so the program's messages and hang-up wake
// only the call's own poll, never the runtime's. Only a writer goroutine
// (a message the socket could not take at once) makes it an *os.File in
// the poller, whose Close then unblocks that writer. Used by the call's
// goroutine alone, but for the writer's writes.
type channelEnd struct {
	fd int      // -1 once closed
	f  *os.File // the descriptor's owner once the writer needs it
}

// pollable is the end as an *os.File whose writes wait in the poller.
func (c *channelEnd) pollable() *os.File {
	if c.f == nil && c.fd >= 0 {
		c.f = os.NewFile(uintptr(c.fd), "rukh-channel")
	}
	return c.f
}

// Close closes the end once; the program's further writes fail.
func (c *channelEnd) Close() error {
	fd := c.fd
	c.fd = -1
	switch {
	case c.f != nil:
		return c.f.Close()
	case fd >= 0:
		return unix.Close(fd)
	}
	return nil
}

// newCmd is the program's command, in a process group or session of its
// own, with the channel's child end as its fourth descriptor.
func (s *session) newCmd(childConn *os.File) *exec.Cmd {
	attr := &syscall.SysProcAttr{}
	plat.procAttr(attr)
	// A confined program never gets the caller's terminal: with it, it
	// could type into the owner's shell (TIOCSTI). Neither does any other
	// program that is not the CLI's terminal command (ctty.go).
	switch {
	case s.inv.Terminal && s.lim.Confine == nil:
		attr.Setpgid = true // the caller's session: the terminal stays reachable
	case noControllingTerminal():
		attr.Setpgid = true // rukh has none, so neither has the program
	default:
		attr.Setsid = true // no controlling terminal: /dev/tty cannot be opened
	}
	return &exec.Cmd{
		Path:        s.prog,
		Args:        append([]string{s.prog}, s.inv.Command.Execute.Args...),
		Env:         s.r.childEnv(s.id, s.lim.Confine != nil, s.scratch),
		ExtraFiles:  []*os.File{childConn},
		SysProcAttr: attr,
	}
}

// output is what the child writes w through: an *os.File goes to the
// child as is (the CLI's terminal) unless the program is confined; any
// other writer gets a pipe drained by a goroutine to EOF.
func (s *session) output(w io.Writer, child *childEnds) (io.Writer, error) {
	if w == nil {
		if f := nullDevice(os.O_WRONLY); f != nil {
			return f, nil
		}
		return nil, nil // exec connects the null device
	}
	if f, ok := w.(*os.File); ok && s.lim.Confine == nil {
		return f, nil
	}
	if d, ok := w.(*Diagnostics); ok {
		// Never blocks: the supervising loop drains it, no goroutine.
		st, pw, err := newInlineStream(d)
		if err != nil {
			return nil, err
		}
		s.parentSide.add(st)
		child.closers.add(pw)
		child.files = append(child.files, pw)
		s.inline = append(s.inline, st)
		return pw, nil
	}
	pr, pw, err := drainPipe()
	if err != nil {
		return nil, err
	}
	s.parentSide.add(pr)
	child.closers.add(pw)
	child.files = append(child.files, pw)
	s.readEnds = append(s.readEnds, pr)
	if s.copies == nil {
		s.copies = make(chan struct{}, 2)
	}
	s.nCopies++
	go func() {
		drainTo(w, pr)
		s.copies <- struct{}{}
	}()
	return pw, nil
}

// input sets the child's stdin: the null device, the caller's file
// (unless the program is confined), or a pipe whose write end it returns
// for serve to copy the caller's reader into.
func (s *session) input(child *childEnds) (stdinW *os.File, err error) {
	f, isFile := s.inv.Stdin.(*os.File)
	switch {
	case s.inv.Stdin == nil:
		// The null device: a closed stdin (nil: exec opens it itself).
		if f := nullDevice(os.O_RDONLY); f != nil {
			s.cmd.Stdin = f
		}
	case isFile && s.lim.Confine == nil:
		s.cmd.Stdin = f
	default:
		pr, pw, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		child.closers.add(pr)
		s.parentSide.add(pw)
		s.cmd.Stdin = pr
		stdinW = pw
	}
	return stdinW, nil
}

// serve starts what serves the started program: the copy into its stdin
// pipe, if any, the invoke line, and the channel's reader.
func (s *session) serve(stdinW *os.File) {
	if stdinW != nil {
		// Not waited for: it may block reading the caller's reader. Closing
		// stdinW at the end makes its next write fail.
		go func() {
			io.Copy(stdinW, s.inv.Stdin)
			stdinW.Close()
		}()
	}

	s.send(s.invokeLine)

	// The supervising loop reads and checks each message as it arrives.
	s.connFD = s.conn.fd
	s.lines.max = s.lim.ResultBytes + channelOverhead
	if s.connFD < 0 {
		s.readerEnd = true
	}
}

// drainPipe makes a pipe for a child's output stream: the read end is
// pollable (closing it unblocks its drain), the write end, the child's, is
// a plain blocking descriptor that never enters the runtime's poller (as
// os.Pipe's would, only for os/exec to take it out again).
func drainPipe() (r, w *os.File, err error) {
	p, err := cloexecPipe()
	if err != nil {
		return nil, nil, os.NewSyscallError("pipe", err)
	}
	if err := setNonblockNew(p[0]); err != nil {
		unix.Close(p[0])
		unix.Close(p[1])
		return nil, nil, os.NewSyscallError("fcntl", err)
	}
	return os.NewFile(uintptr(p[0]), "|0"), os.NewFile(uintptr(p[1]), "|1"), nil
}

// nullDevices are the null device opened once for reading and once for
// writing, given to every child whose stream goes nowhere (os/exec would
// open and close it per stream per start); nil when it cannot be opened.
var nullDevices struct {
	once   sync.Once
	rd, wr *os.File
}

func nullDevice(flag int) *os.File {
	nullDevices.once.Do(func() {
		nullDevices.rd, _ = openNull(os.O_RDONLY)
		nullDevices.wr, _ = openNull(os.O_WRONLY)
	})
	if flag == os.O_RDONLY {
		return nullDevices.rd
	}
	return nullDevices.wr
}

func openNull(flag int) (*os.File, error) {
	fd, err := unix.Open(os.DevNull, flag|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), os.DevNull), nil
}

// send writes b to the channel without ever blocking the caller: what the
// socket takes now is written inline (the common case: the invoke line fits
// its buffer), the rest by a writer goroutine started for it, in order.
// After a write error nothing more is sent.
func (s *session) send(b []byte) {
	if s.out == nil && !s.writeFailed {
		if s.conn.fd < 0 {
			s.writeFailed = true
		}
		for !s.writeFailed && len(b) > 0 {
			n, err := unix.Write(s.conn.fd, b)
			if err == unix.EINTR {
				continue
			}
			if err == unix.EAGAIN {
				break // full: the writer waits for room
			}
			if err != nil {
				s.writeFailed = true
				break
			}
			b = b[n:]
		}
		if s.writeFailed || len(b) == 0 {
			return
		}
	}
	if s.writeFailed {
		return
	}
	if s.out == nil {
		w := s.conn.pollable()
		s.out = make(chan []byte, 2) // the rest of the invoke line, then at most one cancel
		s.writerDone = make(chan struct{})
		go func() {
			defer close(s.writerDone)
			for b := range s.out {
				if _, err := w.Write(b); err != nil {
					for range s.out {
					}
					return
				}
			}
		}()
	}
	select {
	case s.out <- b:
	default:
	}
}

// decide applies the outcome rules of docs/extension-protocol.md.
// Under an init, the program's end is what the init's records say.
func (s *session) decide(ps *os.ProcessState, waitErr error, ended initEnd, report *checkedReport, violation, stopReason string) (Outcome, string, []byte) {
	switch {
	case violation != "":
		return ExecutionFailed, violation, nil
	case stopReason != "":
		return Cancelled, stopReason, nil
	case ended.startErr != "":
		return ExecutionFailed, ended.startErr, nil
	case ended.limit != 0:
		return ExecutionFailed, limitReason(s.lim.Confine, s.lim.Template, ended.limit), nil
	case ps == nil && !ended.exited:
		return ExecutionFailed, fmt.Sprintf("cannot wait for the program: %v", waitErr), nil
	}
	ws := ended.ws
	if !ended.exited {
		ws, _ = ps.Sys().(syscall.WaitStatus)
	}
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

// drainTo copies r to w until EOF; after a write error it keeps reading and
// discarding so the child never blocks on a full pipe. The buffer is
// pooled (a fresh one per stream was an invocation's largest garbage) and
// small: a server holds two per call in flight, and a pipe read returns
// what is there, so a larger one mostly sits empty.
func drainTo(w io.Writer, r io.Reader) {
	bp := drainBufs.Get().(*[]byte)
	defer drainBufs.Put(bp)
	buf := *bp
	for {
		n, err := r.Read(buf)
		if n > 0 && w != nil {
			if _, werr := w.Write(buf[:n]); werr != nil {
				w = nil // keep reading, discard the rest
			}
		}
		if err != nil {
			return
		}
	}
}

var drainBufs = sync.Pool{New: func() any { b := make([]byte, drainBufSize); return &b }}

const drainBufSize = 8 << 10
