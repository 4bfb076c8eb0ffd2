//go:build linux && !rukh_portable

package kernel

import (
	"encoding/binary"
	"errors"
	"fmt"
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

// Warm confining inits. A serving rukh starts the machine-code confining
// init ahead of a confined call, in the namespaces a fresh start would
// give it but for those its steps make (as root: a PID namespace alone),
// as WarmArgv0, with nothing to run. It waits on InitReportFD, a
// SOCK_SEQPACKET socket, for one message: the call's steps, its
// descriptors (SCM_RIGHTS) and its program's path, arguments and
// environment. From there it is the init a fresh start would have made,
// on the same descriptors, in the same directory, with the same steps:
// it confines itself, forks the program, reaps, reports on the same
// socket and exits. A warm init serves one call and is never reused: a
// confinement is its init's own (its Landlock domain, its capabilities),
// and a PID namespace holds nothing of any other call.
//
// What a fresh init guarantees holds before the call as after: the init
// gets SIGKILL when rukh dies (no thread of rukh's that starts a process
// ever ends, so the signal comes with rukh's death alone) and its
// namespace dies with it; it is a registered leader, whose process group
// a stop signals and kills; and until its message comes it holds nothing
// of any call. One that died idle is dropped, and the call gets another;
// one whose socket refuses the call's message for the message's sake is
// kept, and the call starts a fresh init.
type warmInit struct {
	cmd  *exec.Cmd
	t    *tracked
	conn *os.File // rukh's end: blocking; the call's report once sent
	// own: the init leads a session of its own (rukh had a controlling
	// terminal), as a fresh confined start would.
	own   bool
	timer *time.Timer // ends it when idle too long
}

const (
	// warmSpares bounds the warm inits kept ready: the next call's, and
	// one for a call beside it.
	warmSpares = 2
	// warmIdleTimeout ends a warm init no call took for that long.
	warmIdleTimeout = time.Minute
	// warmMessageRoom is the send buffer's room beyond a message's bytes:
	// the kernel's accounting of it and its descriptors.
	warmMessageRoom = 4096
	// After a failed start no warm init is started for warmRetryAfter,
	// twice as long after each failure in a row, up to warmRetryMax.
	warmRetryAfter = time.Second
	warmRetryMax   = time.Minute
)

// The kinds of warm init, by the namespaces their start gives them. As
// root the init makes all but its PID namespace itself, so one kind serves
// every call; otherwise its start gives it its user namespace, and its
// network namespace under "network none".
const (
	warmAsRoot = iota
	warmNetHost
	warmNetNone
	warmKinds
)

var warmPool struct {
	mu      sync.Mutex
	idle    [warmKinds][]*warmInit
	filling [warmKinds]bool
	retryAt time.Time
	backoff time.Duration // the last pause; 0 once a start succeeded
	spawned atomic.Int64  // warm inits started, for the tests
	// sendFailed counts calls whose message a warm init could not be
	// sent, for the tests.
	sendFailed atomic.Int64
}

// warmConfines reports whether a confined call of a serve process gets a
// warm init: RUKH_WITHOUT does not list confine-warm.
func warmConfines() bool { return !without()["confine-warm"] }

// warmReady reports whether a call under conf can be given a warm init:
// one is idle, or starting one is not backed off. A call that cannot is
// prepared for a fresh init alone.
func warmReady(conf *Confine) bool {
	kind := warmKind(*conf)
	warmPool.mu.Lock()
	defer warmPool.mu.Unlock()
	return len(warmPool.idle[kind]) > 0 || !time.Now().Before(warmPool.retryAt)
}

// warmKind is the kind of warm init a call under conf takes.
func warmKind(conf Confine) int {
	switch {
	case os.Geteuid() == 0:
		return warmAsRoot
	case conf.Network == NetworkNone:
		return warmNetNone
	}
	return warmNetHost
}

// spawnWarmInit starts a warm init of kind as a confined call's start would
// start a fresh one, but for the namespaces its steps make.
// A var so that the tests can make it fail.
var spawnWarm = spawnWarmInit

func spawnWarmInit(kind int) (*warmInit, error) {
	path, err := confiningInitPath()
	if err != nil {
		return nil, err
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socketpair", err)
	}
	// Room for the largest message a warm init takes, whatever the host's
	// default send buffer (the kernel caps it at its own maximum).
	unix.SetsockoptInt(fds[0], unix.SOL_SOCKET, unix.SO_SNDBUF, maxStepsBytes+warmMessageRoom)
	conn := os.NewFile(uintptr(fds[0]), "rukh-init-report")
	child := os.NewFile(uintptr(fds[1]), "rukh-init-report-child")
	defer child.Close()
	own := !noControllingTerminal()
	a := &syscall.SysProcAttr{Setsid: own, Setpgid: !own}
	plat.procAttr(a)
	if kind == warmAsRoot {
		a.Cloneflags = syscall.CLONE_NEWPID
	} else {
		// As a fresh start: its mount namespace its steps make.
		containAttr(a, kind == warmNetNone, true, false)
	}
	cmd := &exec.Cmd{Path: path, Args: []string{WarmArgv0}, Env: []string{}, ExtraFiles: []*os.File{nil, child}, SysProcAttr: a}
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
	warmPool.spawned.Add(1)
	warmPool.mu.Lock()
	warmPool.backoff = 0
	warmPool.mu.Unlock()
	return &warmInit{cmd: cmd, t: t, conn: conn, own: own}, nil
}

// drop kills an unused warm init and reaps it.
func (w *warmInit) drop() {
	w.cmd.Process.Kill()
	w.conn.Close()
	w.cmd.Wait()
	untrack(w.t)
}

// healthy reports whether an idle init's socket is quiet: an idle init
// says nothing, so anything to read (EOF where it died) ends it.
func (w *warmInit) healthy() bool {
	rc, err := w.conn.SyscallConn()
	if err != nil {
		return false
	}
	ok := false
	rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		ok = err == nil && n == 0
	})
	return ok
}

// takeWarm is an idle warm init of kind that can serve a call now, or a
// new one; none for a while after one could not be started (the call
// then starts a fresh init).
func takeWarm(kind int) (*warmInit, error) {
	own := !noControllingTerminal()
	for {
		warmPool.mu.Lock()
		var w *warmInit
		if n := len(warmPool.idle[kind]); n > 0 {
			w, warmPool.idle[kind] = warmPool.idle[kind][n-1], warmPool.idle[kind][:n-1]
		}
		backoff := time.Now().Before(warmPool.retryAt)
		warmPool.mu.Unlock()
		if w == nil && backoff {
			return nil, errors.New("the last warm confining init could not be started")
		}
		if w == nil {
			w, err := spawnWarm(kind)
			if err != nil {
				warmStartFailed(err)
			}
			return w, err
		}
		w.timer.Stop()
		if w.own == own && w.healthy() {
			return w, nil
		}
		go w.drop()
	}
}

// warmStartFailed backs the starts of warm inits off after one failed
// with err, and tells the log once for failures in a row.
func warmStartFailed(err error) {
	warmPool.mu.Lock()
	first := warmPool.backoff == 0
	warmPool.backoff = min(max(2*warmPool.backoff, warmRetryAfter), warmRetryMax)
	warmPool.retryAt = time.Now().Add(warmPool.backoff)
	warmPool.mu.Unlock()
	if first {
		slotLog("cannot start a warm confining init (confined calls start their own meanwhile, and it is tried again less often while it fails): %v", err)
	}
}

// initGone reports whether err, of a send to a warm init, says the init
// is gone: its end of the socket closed.
func initGone(err error) bool {
	for _, e := range []error{unix.EPIPE, unix.ECONNRESET, unix.ECONNREFUSED, unix.ENOTCONN} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// keepWarm puts w, of kind, taken but sent nothing, back among the idle
// ones, or drops it where enough are idle.
func keepWarm(kind int, w *warmInit) {
	warmPool.mu.Lock()
	keep := len(warmPool.idle[kind]) < warmSpares
	if keep {
		warmPool.idle[kind] = append(warmPool.idle[kind], w)
		w.timer = time.AfterFunc(warmIdleTimeout, func() { expireWarm(kind, w) })
	}
	warmPool.mu.Unlock()
	if !keep {
		go w.drop()
	}
}

// refillWarm makes the spares of kind for the next calls, off any call's
// path: it is called as a call ends, and makes them once its reply has
// gone (afterReply).
func refillWarm(kind int) {
	warmPool.mu.Lock()
	start := !warmPool.filling[kind] && len(warmPool.idle[kind]) < warmSpares && !time.Now().Before(warmPool.retryAt)
	warmPool.filling[kind] = warmPool.filling[kind] || start
	warmPool.mu.Unlock()
	if !start {
		return
	}
	afterReply(func() {
		for {
			w, err := spawnWarm(kind)
			if err != nil {
				warmPool.mu.Lock()
				warmPool.filling[kind] = false
				warmPool.mu.Unlock()
				warmStartFailed(err)
				return
			}
			warmPool.mu.Lock()
			warmPool.idle[kind] = append(warmPool.idle[kind], w)
			w.timer = time.AfterFunc(warmIdleTimeout, func() { expireWarm(kind, w) })
			more := len(warmPool.idle[kind]) < warmSpares
			warmPool.filling[kind] = more
			warmPool.mu.Unlock()
			if !more {
				return
			}
		}
	})
}

// expireWarm ends w, of kind, if it is still idle.
func expireWarm(kind int, w *warmInit) {
	warmPool.mu.Lock()
	i := -1
	for j, x := range warmPool.idle[kind] {
		if x == w {
			i = j
		}
	}
	if i >= 0 {
		warmPool.idle[kind] = append(warmPool.idle[kind][:i], warmPool.idle[kind][i+1:]...)
	}
	warmPool.mu.Unlock()
	if i >= 0 {
		w.drop()
	}
}

// warmMessage is the steps and the exec block (confine_amd64.s) of a
// program path with argv (argv[0] replaced by path, as a fresh init runs
// it) and env.
func (p *prepared) warmMessage(path string, argv, env []string) ([]byte, error) {
	if len(argv) == 0 {
		return nil, errors.New("no arguments")
	}
	args := append([]string{path}, argv[1:]...)
	words := 2 + len(args) + 1 + len(env) + 1
	size := p.execAt + 8*words
	for _, s := range append(args, env...) {
		if strings.IndexByte(s, 0) >= 0 {
			return nil, errors.New("an argument or environment entry holds a NUL byte")
		}
		size += len(s) + 1
	}
	if size > maxStepsBytes {
		return nil, fmt.Errorf("arguments and environment of %d bytes, over the %d a warm confining init takes", size, maxStepsBytes)
	}
	b := make([]byte, p.execAt+8*words, size)
	copy(b, p.steps)
	hdr := b[p.execAt:]
	binary.LittleEndian.PutUint64(hdr, uint64(len(args)))
	binary.LittleEndian.PutUint64(hdr[8:], uint64(len(env)))
	slot := p.execAt + 16
	for _, list := range [][]string{args, env} {
		for _, s := range list {
			binary.LittleEndian.PutUint64(b[slot:], uint64(len(b)))
			b = append(append(b, s...), 0)
			slot += 8
		}
		slot += 8 // the array's 0
	}
	return b, nil
}

// startWarm starts cmd's program under a warm init with u's steps: cmd's
// stdin, stdout, stderr and channel are the program's. It returns the
// init's command, which stands for the call's from here on.
func startWarm(u *underInit, cmd *exec.Cmd) (*tracked, *exec.Cmd, error) {
	p := u.machine
	var files []*os.File
	for _, s := range []any{cmd.Stdin, cmd.Stdout, cmd.Stderr} {
		f, ok := s.(*os.File)
		if !ok || f == nil {
			return nil, cmd, errors.New("a warm confining init takes only files as the program's stdio")
		}
		files = append(files, f)
	}
	if len(cmd.ExtraFiles) != 1 || cmd.ExtraFiles[0] == nil {
		return nil, cmd, errors.New("a warm confining init takes the channel and nothing else")
	}
	files = append(files, cmd.ExtraFiles[0])
	if u.cgroup != nil {
		files = append(files, u.cgroup)
	}
	files = append(files, p.ruleset)
	if p.netNS != nil {
		files = append(files, p.netNS)
	}
	if len(files) != len(p.recvFDs) {
		return nil, cmd, fmt.Errorf("rukh prepared %d descriptors for its warm init and has %d", len(p.recvFDs), len(files))
	}
	msg, err := p.warmMessage(cmd.Path, cmd.Args, cmd.Env)
	if err != nil {
		return nil, cmd, err
	}
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	oob := unix.UnixRights(fds...)
	for range 2 {
		w, err := takeWarm(p.warmKind)
		if err != nil {
			return nil, cmd, err
		}
		var serr error
		rc, err := w.conn.SyscallConn()
		if err == nil {
			err = rc.Write(func(fd uintptr) bool {
				for {
					serr = unix.Sendmsg(int(fd), msg, oob, nil, unix.MSG_NOSIGNAL)
					if serr != unix.EINTR {
						return true
					}
				}
			})
		}
		runtime.KeepAlive(files)
		if err == nil && serr != nil && !initGone(serr) {
			// The message's fault (its size, its descriptors): nothing of
			// it reached the init, which stays as it was for another call.
			warmPool.sendFailed.Add(1)
			keepWarm(p.warmKind, w)
			return nil, cmd, fmt.Errorf("cannot send a warm confining init the call: %w", serr)
		}
		if err == nil {
			err = serr
		}
		if err != nil {
			// Nothing of the call reached it (an idle init that died).
			warmPool.sendFailed.Add(1)
			w.drop()
			continue
		}
		// The init holds its copies now, in flight or received.
		p.ruleset.Close()
		u.report = w.conn
		return w.t, w.cmd, nil
	}
	return nil, cmd, errors.New("no warm confining init could be sent the call")
}
