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
type slot struct {
	init *exec.Cmd
	t    *tracked // the init, registered: cleanup of other calls leaves its namespace alone
	conn *os.File // rukh's end of the socket: nonblocking, SO_PASSCRED
	raw  syscall.RawConn
	fd   int // conn's descriptor, for the supervising poll (Fd would make it blocking)
	// ownSession: the init leads a session of its own (rukh had a
	// controlling terminal when it started); a slot is taken only where a
	// fresh one would be the same.
	ownSession bool
}

// slotsAlways makes every Runner use slots: the kernel's tests run the
// whole suite through them (RUKH_TEST_SLOTS).
var slotsAlways bool

// maxIdleSlots bounds the warm slots kept between calls.
const maxIdleSlots = 16

var slots struct {
	mu      sync.Mutex
	idle    []*slot
	warm    bool // a serve process: keep one slot ready
	warming bool // a slot is being started for the idle stack
}

// warmSlots makes this process keep a slot ready for the next call, and
// starts the first in the background.
func warmSlots() {
	if !slotsUsable() {
		return
	}
	slots.mu.Lock()
	slots.warm = true
	start := len(slots.idle) == 0 && !slots.warming
	slots.warming = slots.warming || start
	slots.mu.Unlock()
	if start {
		go refillSlots()
	}
}

// slotsUsable reports whether calls can run in slots: the host gives rukh
// PID namespaces, and there is a machine-code init to serve them.
func slotsUsable() bool {
	if containmentInit == "" {
		return false
	}
	ok, _ := namespaced()
	return ok
}

func refillSlots() {
	sl, err := spawnSlot()
	slots.mu.Lock()
	slots.warming = false
	slots.mu.Unlock()
	if err == nil {
		putSlot(sl)
	}
}

// takeSlot is an idle slot, or a new one; nil when none can be started.
func takeSlot() *slot {
	own := !noControllingTerminal()
	slots.mu.Lock()
	var sl *slot
	if n := len(slots.idle); n > 0 {
		sl, slots.idle = slots.idle[n-1], slots.idle[:n-1]
	}
	if sl != nil && sl.ownSession != own {
		go sl.close()
		sl = nil
	}
	refill := slots.warm && len(slots.idle) == 0 && !slots.warming
	slots.warming = slots.warming || refill
	slots.mu.Unlock()
	if refill {
		go refillSlots()
	}
	if sl == nil {
		var err error
		if sl, err = spawnSlot(); err != nil {
			return nil
		}
	}
	return sl
}

// putSlot keeps a slot whose last call ended cleanly for the next one.
func putSlot(sl *slot) {
	slots.mu.Lock()
	keep := len(slots.idle) < maxIdleSlots
	if keep {
		slots.idle = append(slots.idle, sl)
	}
	slots.mu.Unlock()
	if !keep {
		go sl.close()
	}
}

// spawnSlot starts a slot's init in the namespaces of an unconfined call.
func spawnSlot() (*slot, error) {
	path, err := containmentInitPath()
	if err != nil {
		return nil, err
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socketpair", err)
	}
	// SO_PASSCRED: the kernel names each message's sender, so the program's
	// ReportStarted carries its pid as rukh sees it.
	if err := unix.SetsockoptInt(fds[0], unix.SOL_SOCKET, unix.SO_PASSCRED, 1); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, os.NewSyscallError("setsockopt", err)
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

// close ends an idle slot: at EOF its init exits, and the kernel empties
// its namespace before the exit is reported.
func (sl *slot) close() {
	sl.conn.Close()
	sl.init.Wait()
	untrack(sl.t)
}

// kill ends a slot whatever it is doing, and returns once its namespace
// is empty.
func (sl *slot) kill() {
	sl.init.Process.Kill()
	sl.close()
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
			return nil, fmt.Errorf("argument or environment entry %q holds a NUL byte", s)
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

// recv reads one record and the pid of its sender.
func (sl *slot) recv() (kind, value uint32, pid int, err error) {
	var b [16]byte
	var oob [128]byte
	var n, oobn, flags int
	rerr := sl.raw.Read(func(fd uintptr) bool {
		for {
			n, oobn, flags, _, err = unix.Recvmsg(int(fd), b[:], oob[:], unix.MSG_CMSG_CLOEXEC)
			if err != unix.EINTR {
				return err != unix.EAGAIN
			}
		}
	})
	if rerr != nil {
		return 0, 0, 0, rerr
	}
	if err != nil {
		return 0, 0, 0, err
	}
	msgs, perr := unix.ParseSocketControlMessage(oob[:oobn])
	for _, m := range msgs {
		if cred, err := unix.ParseUnixCredentials(&m); err == nil {
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
		return 0, 0, 0, io.EOF
	case perr != nil, n != 8, flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0:
		return 0, 0, 0, errSlotProtocol
	}
	return binary.LittleEndian.Uint32(b[:]), binary.LittleEndian.Uint32(b[4:]), pid, nil
}

// slotCall is one call running in a slot.
type slotCall struct {
	sl       *slot
	pid      int // the program's pid, and its process group's, as rukh sees them
	execErr  syscall.Errno
	ended    initEnd
	broken   bool        // the slot is not reused
	reported atomic.Bool // the call is over: its process group is gone
}

// startInSlot starts cmd's program in a slot. ok false: nothing of it
// ran, and the caller starts it under an init of its own. cmd must have
// its stdio and the channel as files, and nothing else.
func startInSlot(cmd *exec.Cmd) (c *slotCall, ok bool) {
	if containmentInit == "" {
		return nil, false // rukh itself is the init here, and serves no slot
	}
	var files [4]*os.File
	for i, s := range []any{cmd.Stdin, cmd.Stdout, cmd.Stderr} {
		f, isFile := s.(*os.File)
		if !isFile || f == nil {
			return nil, false
		}
		files[i] = f
	}
	if len(cmd.ExtraFiles) != 1 || cmd.ExtraFiles[0] == nil {
		return nil, false
	}
	files[3] = cmd.ExtraFiles[0]
	payload, err := encodeSlotCall(cmd.Dir, cmd.Path, cmd.Args, cmd.Env)
	if err != nil {
		return nil, false // too large for a slot: an init of its own takes it
	}
	sl := takeSlot()
	if sl == nil {
		return nil, false
	}
	if err := sl.send(payload, files); err != nil {
		go sl.kill()
		return nil, false
	}
	kind, _, pid, err := sl.recv()
	if err != nil || kind != ReportStarted {
		// No ReportStarted: the program never reached its exec.
		go sl.kill()
		return nil, false
	}
	c = &slotCall{sl: sl, pid: pid}
	if pid <= 0 {
		// It runs, but rukh could not signal it: it ends now, killed.
		c.broken = true
		sl.kill()
		c.ended = initEnd{startErr: "cannot start program: its containment slot did not name its process"}
		c.reported.Store(true)
	}
	return c, true
}

// wait returns once the slot reported the call over: the program exited
// and nothing of the call is left. If the slot dies or breaks the
// protocol instead, its init is killed and reaped (its namespace is then
// empty), and the program counts as killed with it.
func (c *slotCall) wait() error {
	for !c.reported.Load() {
		kind, v, _, err := c.sl.recv()
		if err == nil && kind == ReportExec {
			c.execErr = syscall.Errno(v)
			continue
		}
		if err == nil && kind == ReportStatus {
			c.ended.ws, c.ended.exited = syscall.WaitStatus(v), true
			c.reported.Store(true)
			return nil
		}
		c.broken = true
		c.sl.kill()
		ws, _ := c.sl.init.ProcessState.Sys().(syscall.WaitStatus)
		if !ws.Signaled() {
			ws = syscall.WaitStatus(syscall.SIGKILL)
		}
		c.ended.ws, c.ended.exited = ws, true
		c.reported.Store(true)
	}
	return nil
}

// endFD is the descriptor that becomes readable when the slot has
// something to say of the call (its report, or EOF where the init died):
// the supervising poll watches it in place of the leader's exit.
func (c *slotCall) endFD() int { return c.sl.fd }

// done reports whether the call is over (signalling its group is then
// never done: its pid may name another process some day).
func (c *slotCall) done() bool { return c.reported.Load() }

// finish is what the slot said of the program's end; a slot that served
// the call cleanly goes back for the next.
func (c *slotCall) finish(prog string) initEnd {
	e := c.ended
	if c.execErr != 0 {
		e.startErr = fmt.Sprintf("cannot start program: fork/exec %s: %v", prog, c.execErr)
	}
	if !c.broken {
		putSlot(c.sl)
	}
	return e
}
