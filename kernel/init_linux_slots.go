//go:build linux && !rukh_portable

package kernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A slot is a warm containment init (initproto.go, Slots): a PID
// namespace that serves one unconfined call after another, so a serving
// rukh does not pay a namespace and an init per call. It keeps what a
// fresh init gives: the init gets SIGKILL when rukh dies (and the kernel
// kills its namespace with it), and its report of a call comes only once
// every process of that call is gone. A slot that fails before its
// program started is dropped, and the call starts under an init of its
// own; nothing ever runs outside a namespace because a slot failed.
//
// Signalling. A slot's program leads a process group of its own, but it
// is the init's child, not rukh's: once the init reaped it, and before
// rukh read the report, its pid (and its group's id) may name another
// process. So rukh never signals a slot's program by number: the kernel
// hands it a pidfd of the sender of the program's ReportStarted
// (SO_PASSPIDFD), and pidfd_send_signal(PIDFD_SIGNAL_PROCESS_GROUP)
// reaches the group of that very pid or nothing, never a later process
// that got the number again. Slots are used only where the kernel has
// both (probed once); elsewhere every call has an init of its own, whose
// pid rukh's zombie child holds. The stop's SIGKILL kills the slot's init
// as well: a program that left its group is still in the namespace,
// which dies with its init (as under a fresh init).
type slot struct {
	init *exec.Cmd
	t    *tracked // the init, registered: cleanup of other calls leaves its namespace alone
	conn *os.File // rukh's end of the socket: nonblocking, SO_PASSCRED, SO_PASSPIDFD
	raw  syscall.RawConn
	fd   int // conn's descriptor, for the supervising poll (Fd would make it blocking)
	// ownSession: the init leads a session of its own (rukh had a
	// controlling terminal when it started); a slot is taken only where a
	// fresh one would be the same.
	ownSession bool
	idleSince  time.Time
	ended      sync.Once
}

// slotsAlways makes every Runner use slots: the kernel's tests run the
// whole suite through them (RUKH_TEST_SLOTS).
var slotsAlways bool

// maxIdleSlots bounds the warm slots kept between calls: as many as the
// calls a busy serve process runs at once, so that none of them starts a
// slot on its own path (spawns are one at a time, on the spawning thread)
// only for another call's end to drop one; idle ones age out.
const maxIdleSlots = 64

// Variables, so that tests can shorten them (under slots.mu, as they
// are read).
var (
	// slotIdleTimeout ends a slot no call took for that long (a serve
	// process keeps its last one): the idle slots follow recent need.
	slotIdleTimeout = time.Minute
	// slotSweepEvery is how often idle slots are looked at: for age, and
	// for an init that died (reaped then, not when a call takes it).
	slotSweepEvery = 5 * time.Second
	// slotRetryAfter is how long after a failed spawn calls go straight to
	// inits of their own.
	slotRetryAfter = time.Second
	// slotStartBound bounds the wait for a call's ReportStarted: a slot
	// that has not started the program by then is killed, and the call
	// goes to an init of its own.
	slotStartBound = 5 * time.Second
)

var slots struct {
	mu       sync.Mutex
	idle     []*slot
	warm     bool      // a serve process: keep one slot ready
	warming  bool      // a slot is being started for the idle stack
	sweeping bool      // the idle slots' sweeper runs
	retryAt  time.Time // no slot is spawned before: the last spawn failed
	logf     func(format string, args ...any)
	dropped  atomic.Int64
}

// warmSlots makes this process keep a slot ready for the next call, and
// starts the first in the background; logf, when set, is told of every
// slot dropped and why.
func warmSlots(logf func(format string, args ...any)) {
	if !slotsUsable() {
		return
	}
	slots.mu.Lock()
	slots.warm = true
	if logf != nil {
		slots.logf = logf
	}
	start := len(slots.idle) == 0 && !slots.warming
	slots.warming = slots.warming || start
	slots.mu.Unlock()
	if start {
		go refillSlots()
	}
}

// slotLog tells the serve process's log why a slot was dropped, or a call
// did not use one (never an argument or an environment value).
func slotLog(format string, args ...any) {
	slots.mu.Lock()
	logf := slots.logf
	slots.mu.Unlock()
	if logf != nil {
		logf(format, args...)
	}
}

// slotsUsable reports whether calls can run in slots: the host gives rukh
// PID namespaces and the pidfd signals slots need, and there is a
// machine-code init to serve them.
func slotsUsable() bool {
	if containmentInit == "" || !pidfdSignals() {
		return false
	}
	ok, _ := namespaced()
	return ok
}

// pidfdSignals reports whether the kernel hands rukh a pidfd of a
// message's sender (SCM_PIDFD) and signals a process group through one.
var pidfdSignals = sync.OnceValue(func() bool {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	if unix.SetsockoptInt(fds[0], unix.SOL_SOCKET, unix.SO_PASSPIDFD, 1) != nil {
		return false
	}
	if _, err := unix.Write(fds[1], []byte{0}); err != nil {
		return false
	}
	var b [1]byte
	var oob [64]byte
	_, oobn, _, _, err := unix.Recvmsg(fds[0], b[:], oob[:], unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return false
	}
	pfd := -1
	msgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
	for _, m := range msgs {
		if fd, ok := scmPidfd(&m); ok {
			pfd = fd
		}
	}
	if pfd < 0 {
		return false
	}
	defer unix.Close(pfd)
	// Signal 0 to the group rukh's pid would lead: ESRCH where it leads
	// none, EINVAL where the kernel has no such flag.
	err = unix.PidfdSendSignal(pfd, 0, nil, unix.PIDFD_SIGNAL_PROCESS_GROUP)
	return err == nil || err == unix.ESRCH
})

// scmPidfd is the pidfd of an SCM_PIDFD message; ok false for any other
// message, and fd -1 where the kernel could not make one.
func scmPidfd(m *unix.SocketControlMessage) (fd int, ok bool) {
	if m.Header.Level != unix.SOL_SOCKET || m.Header.Type != unix.SCM_PIDFD || len(m.Data) < 4 {
		return -1, false
	}
	fd = int(int32(binary.NativeEndian.Uint32(m.Data)))
	if fd < 0 {
		fd = -1
	}
	return fd, true
}

func refillSlots() {
	sl, err := spawnSlot()
	slots.mu.Lock()
	slots.warming = false
	if err != nil {
		slots.retryAt = time.Now().Add(slotRetryAfter)
	}
	slots.mu.Unlock()
	if err == nil {
		putSlot(sl)
	} else {
		slotLog("cannot start a containment slot (calls start under inits of their own meanwhile): %v", err)
	}
}

// takeSlot is an idle slot, or a new one; nil when none can be started.
func takeSlot() *slot {
	own := !noControllingTerminal()
	now := time.Now()
	slots.mu.Lock()
	var sl *slot
	if n := len(slots.idle); n > 0 {
		sl, slots.idle = slots.idle[n-1], slots.idle[:n-1]
	}
	if sl != nil && sl.ownSession != own {
		go sl.drop(false, "rukh's controlling terminal changed")
		sl = nil
	}
	canSpawn := !now.Before(slots.retryAt)
	refill := slots.warm && len(slots.idle) == 0 && !slots.warming && canSpawn
	slots.warming = slots.warming || refill
	slots.mu.Unlock()
	if refill {
		go refillSlots()
	}
	if sl == nil {
		if !canSpawn {
			return nil
		}
		var err error
		if sl, err = spawnSlot(); err != nil {
			slots.mu.Lock()
			slots.retryAt = time.Now().Add(slotRetryAfter)
			slots.mu.Unlock()
			slotLog("cannot start a containment slot (calls start under inits of their own for a while): %v", err)
			return nil
		}
	}
	return sl
}

// putSlot keeps a slot whose last call ended cleanly for the next one.
func putSlot(sl *slot) {
	slots.mu.Lock()
	sl.idleSince = time.Now()
	keep := len(slots.idle) < maxIdleSlots
	if keep {
		slots.idle = append(slots.idle, sl)
	}
	sweep := keep && !slots.sweeping
	slots.sweeping = slots.sweeping || sweep
	slots.mu.Unlock()
	if !keep {
		go sl.drop(false, "")
	}
	if sweep {
		go sweepSlots()
	}
}

// sweepSlots ends, now and then, the idle slots no call took for long
// (keeping one in a serve process) and those whose init died; it stops
// when no slot is idle.
func sweepSlots() {
	for {
		slots.mu.Lock()
		every := slotSweepEvery
		slots.mu.Unlock()
		time.Sleep(every)
		now := time.Now()
		slots.mu.Lock()
		var ended []*slot
		var whys []string
		kept := slots.idle[:0]
		for i, sl := range slots.idle {
			// The newest are last: the oldest age out first.
			last := len(kept) == 0 && i == len(slots.idle)-1
			switch {
			case !sl.idleHealthy():
				ended, whys = append(ended, sl), append(whys, "its init died while idle")
			case now.Sub(sl.idleSince) > slotIdleTimeout && !(slots.warm && last):
				ended, whys = append(ended, sl), append(whys, "")
			default:
				kept = append(kept, sl)
			}
		}
		clear(slots.idle[len(kept):])
		slots.idle = kept
		stop := len(kept) == 0
		slots.sweeping = !stop
		slots.mu.Unlock()
		// Killed, not asked: an idle init runs nothing of any call, and
		// one that is stopped would never read the end of its socket.
		for i, sl := range ended {
			sl.drop(true, whys[i])
		}
		if stop {
			return
		}
	}
}

// idleHealthy reports whether an idle slot's socket is quiet: an idle
// init says nothing, so anything to read (EOF where it died) ends it.
func (sl *slot) idleHealthy() bool {
	fds := []unix.PollFd{{Fd: int32(sl.fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n == 0 || err == unix.EINTR
}

// freeSlotNamespaces reports whether err says the user's namespaces ran
// out and idle slots were closed to give some back: the caller tries
// again before it counts namespaces refused.
func freeSlotNamespaces(err error) bool {
	var errno syscall.Errno
	if !errors.As(err, &errno) || errno != unix.ENOSPC && errno != unix.EUSERS {
		return false
	}
	slots.mu.Lock()
	idle := slots.idle
	slots.idle = nil
	slots.mu.Unlock()
	for _, sl := range idle {
		sl.drop(true, "") // returns once its namespace is gone
	}
	if len(idle) > 0 {
		slotLog("closed %d idle containment slots: the kernel refused a new PID namespace (%v)", len(idle), err)
	}
	return len(idle) > 0
}

// The spawning thread: a slot's parent-death signal comes when the thread
// that started it exits, not rukh, so slots are started from one locked
// OS thread that never exits.
var spawner struct {
	once sync.Once
	req  chan chan spawned
}

type spawned struct {
	sl  *slot
	err error
}

// spawnSlot starts a slot, on the spawning thread.
func spawnSlot() (*slot, error) {
	spawner.once.Do(func() {
		spawner.req = make(chan chan spawned)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as rukh
			for reply := range spawner.req {
				sl, err := spawnSlotHere()
				reply <- spawned{sl, err}
			}
		}()
	})
	reply := make(chan spawned, 1)
	spawner.req <- reply
	r := <-reply
	return r.sl, r.err
}

// spawnSlotHere starts a slot's init in the namespaces of an unconfined
// call.
func spawnSlotHere() (*slot, error) {
	path, err := containmentInitPath()
	if err != nil {
		return nil, err
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socketpair", err)
	}
	// SO_PASSCRED and SO_PASSPIDFD: the kernel names each message's
	// sender, so the program's ReportStarted carries its pid as rukh sees
	// it, and a pidfd of it.
	for _, opt := range []int{unix.SO_PASSCRED, unix.SO_PASSPIDFD} {
		if err := unix.SetsockoptInt(fds[0], unix.SOL_SOCKET, opt, 1); err != nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
			return nil, os.NewSyscallError("setsockopt", err)
		}
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, os.NewSyscallError("fcntl", err)
	}
	conn := os.NewFile(uintptr(fds[0]), "rukh-slot")
	child := os.NewFile(uintptr(fds[1]), "rukh-slot-init")
	defer child.Close()
	raw, err := conn.SyscallConn()
	if err != nil {
		conn.Close()
		return nil, err
	}
	// No controlling terminal for it nor any program it forks: rukh's
	// session where rukh has none, else one of its own (as newCmd does).
	// SIGKILL when rukh dies (plat.procAttr).
	own := !noControllingTerminal()
	a := &syscall.SysProcAttr{Setsid: own, Setpgid: !own}
	plat.procAttr(a)
	containAttr(a, false, false, false)
	cmd := &exec.Cmd{Path: path, Args: []string{SlotArgv0}, Env: []string{}, ExtraFiles: []*os.File{nil, child}, SysProcAttr: a}
	if f := nullDevice(os.O_RDONLY); f != nil {
		cmd.Stdin = f
	}
	if f := nullDevice(os.O_WRONLY); f != nil {
		cmd.Stdout, cmd.Stderr = f, f
	}
	t, err := startTracked(cmd, "", nil, nil)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return &slot{init: cmd, t: t, conn: conn, raw: raw, fd: fds[0], ownSession: own}, nil
}

// drop ends a slot, once, and returns when its namespace is empty: kill
// ends it whatever it is doing; else, at EOF, an idle init exits. why,
// when set, is logged, and counted.
func (sl *slot) drop(kill bool, why string) {
	sl.ended.Do(func() {
		if kill {
			sl.init.Process.Kill()
		}
		sl.conn.Close()
		sl.init.Wait()
		untrack(sl.t)
		if why != "" {
			n := slots.dropped.Add(1)
			slotLog("containment slot dropped (%d so far): %s", n, why)
		}
	})
}

// exitStatus is how the slot's init ended; SIGKILL when that is unknown.
func (sl *slot) exitStatus() syscall.WaitStatus {
	if ps := sl.init.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return ws
		}
	}
	return syscall.WaitStatus(syscall.SIGKILL)
}

// encodeSlotCall is the payload of one call (initproto.go, Slots).
func encodeSlotCall(dir, path string, argv, env []string) ([]byte, error) {
	if len(argv) == 0 {
		return nil, errors.New("no arguments")
	}
	if n := 2 + len(argv) + len(env); n > SlotStringsMax {
		return nil, fmt.Errorf("%d arguments and environment entries, over the %d a containment slot takes", n-2, SlotStringsMax-2)
	}
	size := 8
	strs := append(append([]string{dir, path}, argv...), env...)
	for _, s := range strs {
		if strings.IndexByte(s, 0) >= 0 {
			return nil, errors.New("an argument or environment entry holds a NUL byte")
		}
		size += len(s) + 1
	}
	if size > SlotPayloadMax {
		return nil, fmt.Errorf("arguments and environment of %d bytes, over the %d a containment slot takes", size, SlotPayloadMax)
	}
	b := make([]byte, 8, size)
	binary.LittleEndian.PutUint32(b, uint32(len(argv)))
	binary.LittleEndian.PutUint32(b[4:], uint32(len(env)))
	for _, s := range strs {
		b = append(append(b, s...), 0)
	}
	return b, nil
}

// send writes one call's message: its payload and its four descriptors.
func (sl *slot) send(payload []byte, files [4]*os.File) error {
	fds := make([]int, 4)
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	oob := unix.UnixRights(fds...)
	var err error
	rerr := sl.raw.Write(func(fd uintptr) bool {
		for {
			_, err = unix.SendmsgN(int(fd), payload, oob, nil, unix.MSG_NOSIGNAL)
			if err != unix.EINTR {
				return err != unix.EAGAIN
			}
		}
	})
	runtime.KeepAlive(files) // open until the kernel took its copies
	if rerr != nil {
		return rerr
	}
	return err
}

// errSlotProtocol is a message no slot sends.
var errSlotProtocol = errors.New("a containment slot sent a message rukh does not know")

// recv reads one record, the pid of its sender and a pidfd of it (-1 when
// none; the caller closes it). Without block, nothing to read is EAGAIN.
func (sl *slot) recv(block bool) (kind, value uint32, pid, pidfd int, err error) {
	var b [16]byte
	var oob [128]byte
	var n, oobn, flags int
	rerr := sl.raw.Read(func(fd uintptr) bool {
		for {
			n, oobn, flags, _, err = unix.Recvmsg(int(fd), b[:], oob[:], unix.MSG_CMSG_CLOEXEC)
			if err != unix.EINTR {
				return err != unix.EAGAIN || !block
			}
		}
	})
	if rerr != nil {
		return 0, 0, 0, -1, rerr
	}
	if err != nil {
		return 0, 0, 0, -1, err
	}
	pidfd = -1
	msgs, perr := unix.ParseSocketControlMessage(oob[:oobn])
	for _, m := range msgs {
		if fd, ok := scmPidfd(&m); ok {
			if pidfd >= 0 {
				unix.Close(pidfd)
			}
			pidfd = fd
		} else if cred, err := unix.ParseUnixCredentials(&m); err == nil {
			pid = int(cred.Pid)
		} else if fds, err := unix.ParseUnixRights(&m); err == nil {
			for _, fd := range fds {
				unix.Close(fd) // a slot never sends descriptors
			}
			perr = errSlotProtocol
		}
	}
	switch {
	case n == 0 && oobn == 0:
		return 0, 0, 0, -1, io.EOF
	case perr != nil, n != 8, flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0:
		if pidfd >= 0 {
			unix.Close(pidfd)
		}
		return 0, 0, 0, -1, errSlotProtocol
	}
	return binary.LittleEndian.Uint32(b[:]), binary.LittleEndian.Uint32(b[4:]), pid, pidfd, nil
}

// slotCall is one call running in a slot.
type slotCall struct {
	sl *slot
	// held are rukh's copies of the program's descriptors until the
	// program started: a slot that fails before then leaves the call, with
	// them, to an init of its own.
	held     closers
	files    []*os.File
	startBy  time.Time
	started  bool
	pid      int // the program's pid, as rukh sees it (never signalled by number)
	pidfd    int // a pidfd of the program: its group is signalled through it; -1 none
	execErr  syscall.Errno
	ended    initEnd
	broken   bool        // the slot is not reused
	why      string      // why it is not, for the log
	reported atomic.Bool // the call is over: its process group is gone
}

// startInSlot sends cmd's program to a slot and returns without waiting
// for it to start (first takes its ReportStarted). ok false: nothing of it
// ran, and the caller starts it under an init of its own. cmd must have
// its stdio and the channel as files, and nothing else; held are the
// caller's copies of what the program gets, kept until it started.
func startInSlot(cmd *exec.Cmd, held closers, files []*os.File) (c *slotCall, ok bool) {
	if containmentInit == "" {
		return nil, false // rukh itself is the init here, and serves no slot
	}
	var fds [4]*os.File
	for i, s := range []any{cmd.Stdin, cmd.Stdout, cmd.Stderr} {
		f, isFile := s.(*os.File)
		if !isFile || f == nil {
			return nil, false
		}
		fds[i] = f
	}
	if len(cmd.ExtraFiles) != 1 || cmd.ExtraFiles[0] == nil {
		return nil, false
	}
	fds[3] = cmd.ExtraFiles[0]
	payload, err := encodeSlotCall(cmd.Dir, cmd.Path, cmd.Args, cmd.Env)
	if err != nil {
		// Too large for a slot: an init of its own takes it.
		slotLog("a call starts under an init of its own, not in a containment slot: %v", err)
		return nil, false
	}
	for range 2 {
		sl := takeSlot()
		if sl == nil {
			return nil, false
		}
		if err := sl.send(payload, fds); err != nil {
			// Nothing of the call reached it (an idle init that died): the
			// next slot, or an init of the call's own.
			sl.drop(true, fmt.Sprintf("it could not be sent a call: %v", err))
			continue
		}
		slots.mu.Lock()
		bound := slotStartBound
		slots.mu.Unlock()
		return &slotCall{sl: sl, held: held, files: files, startBy: time.Now().Add(bound), pidfd: -1}, true
	}
	return nil, false
}

// What first found of a call's start.
const (
	slotWaiting = iota // nothing yet
	slotRunning        // the program started
	slotFailed         // the slot failed before the program started: nothing of it ran
	slotEnded          // the program started, and the slot died: the call is over, killed
)

// first takes the call's first record if it is there: ReportStarted, or
// anything else, which drops the slot. giveUp drops a slot that has
// said nothing yet. A dropped slot is killed first, so that what it
// said before it died tells whether the program started.
func (c *slotCall) first(giveUp bool) int {
	switch {
	case c.started:
		return slotRunning
	case c.reported.Load():
		return slotEnded
	}
	kind, _, pid, pidfd, err := c.sl.recv(false)
	if err == unix.EAGAIN && !giveUp {
		return slotWaiting
	}
	if err == nil && kind == ReportStarted {
		c.started, c.pid, c.pidfd = true, pid, pidfd
		c.held.close()
		c.held = nil
		return slotRunning
	}
	if pidfd >= 0 {
		unix.Close(pidfd)
	}
	why := "it did not start its program in time"
	switch {
	case err == io.EOF:
		why = "its init died before its program started"
	case err == nil && kind == ReportFork:
		why = "its init could not fork"
	case err == nil && kind == ReportExec:
		why = "its program's process could not be set up"
	case err == nil && kind == ReportStatus:
		why = "its program's process could not tell rukh it started"
	case err != nil && err != unix.EAGAIN:
		why = err.Error()
	}
	// Killed, the init's namespace dies; its socket then holds what it
	// said before, up to EOF: a ReportStarted there means the program ran.
	c.sl.init.Process.Kill()
	ran := false
	for {
		kind, _, _, fd, err := c.sl.recv(true)
		if fd >= 0 {
			unix.Close(fd)
		}
		if err != nil {
			break
		}
		ran = ran || kind == ReportStarted
	}
	c.broken = true
	c.sl.drop(true, why)
	if !ran {
		return slotFailed
	}
	c.end()
	return slotEnded
}

// end ends the call as killed with its slot's init.
func (c *slotCall) end() {
	c.broken = true
	c.ended.ws, c.ended.exited = c.sl.exitStatus(), true
	c.reported.Store(true)
}

// failed is a call whose program could not be started after its slot
// failed: it is over, with reason.
func failedSlotCall(reason string) *slotCall {
	c := &slotCall{pidfd: -1, ended: initEnd{startErr: reason}}
	c.reported.Store(true)
	return c
}

// awaitStart waits, up to startBy, for the program's ReportStarted (a
// stop signals its group through it); the slot is dropped if it does not
// come.
func (c *slotCall) awaitStart() int {
	if st := c.first(false); st != slotWaiting {
		return st
	}
	for {
		d := time.Until(c.startBy)
		if d <= 0 {
			return c.first(true)
		}
		fds := []unix.PollFd{{Fd: int32(c.sl.fd), Events: unix.POLLIN}}
		unix.Poll(fds, int((d+time.Millisecond-1)/time.Millisecond))
		if st := c.first(false); st != slotWaiting {
			return st
		}
	}
}

// signal signals the program's process group through its pidfd (only
// once it started). SIGKILL kills the slot's init as well: whatever of
// the call left the group dies with the namespace. Without a pidfd (the
// kernel could not make one) every signal is that SIGKILL.
func (c *slotCall) signal(sig syscall.Signal) {
	if c.reported.Load() || !c.started {
		return
	}
	if c.pidfd >= 0 {
		unix.PidfdSendSignal(c.pidfd, sig, nil, unix.PIDFD_SIGNAL_PROCESS_GROUP)
	}
	if sig == syscall.SIGKILL || c.pidfd < 0 {
		c.broken, c.why = true, "its call was killed"
		c.sl.init.Process.Kill()
	}
}

// wait returns once the slot reported the call over: the program exited
// and nothing of the call is left. If the slot dies or breaks the
// protocol instead, its init is killed and reaped (its namespace is then
// empty), and the program counts as killed with it.
func (c *slotCall) wait() error {
	for !c.reported.Load() {
		kind, v, _, fd, err := c.sl.recv(true)
		if fd >= 0 {
			unix.Close(fd)
		}
		if err == nil && kind == ReportExec {
			c.execErr = syscall.Errno(v)
			continue
		}
		if err == nil && kind == ReportStatus {
			c.ended.ws, c.ended.exited = syscall.WaitStatus(v), true
			c.reported.Store(true)
			return nil
		}
		if c.why == "" {
			c.why = "its init died while its call ran"
			if err != io.EOF {
				c.why = fmt.Sprintf("%v while its call ran", err)
			}
		}
		c.sl.drop(true, c.why)
		c.end()
	}
	return nil
}

// endFD is the descriptor that becomes readable when the slot has
// something to say of the call (its first record; then its report, or EOF
// where the init died): the supervising poll watches it in place of the
// leader's exit.
func (c *slotCall) endFD() int { return c.sl.fd }

// done reports whether the call is over (signalling its group is then
// never done).
func (c *slotCall) done() bool { return c.reported.Load() }

// isStarted reports whether the program's ReportStarted was taken.
func (c *slotCall) isStarted() bool { return c.started }

// startDue is when a call whose program has not started gives its slot up.
func (c *slotCall) startDue() time.Time { return c.startBy }

// finish is what the slot said of the program's end; a slot that served
// the call cleanly goes back for the next.
func (c *slotCall) finish(prog string) initEnd {
	e := c.ended
	if c.execErr != 0 {
		e.startErr = fmt.Sprintf("cannot start program: fork/exec %s: %v", prog, c.execErr)
	}
	if c.pidfd >= 0 {
		unix.Close(c.pidfd)
		c.pidfd = -1
	}
	c.held.close()
	c.held = nil
	switch {
	case c.sl == nil:
	case c.broken:
		c.sl.drop(true, c.why)
	default:
		putSlot(c.sl)
	}
	return e
}
