//go:build linux && !rukh_portable

package kernel

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Network namespaces for calls under "network none" as root, made ahead
// of them:
// making one and bringing its loopback up costs more than the rest of a
// confined call's start. Each is fresh, made by rukh (root, as the call's
// own start would make it) and handed to exactly one call, whose init
// enters it. The first such call of a process makes its own (a one-shot
// CLI pays for nothing ahead); from the second on, a spare is made just
// after each call ends (afterReply), so that making it competes neither
// with the call it serves nor with the reply of the one that ended
// (the third call is the first to enter one made ahead). Making one that fails (a want of
// descriptors or memory) stops the making for a while, longer each time
// in a row, and calls make their own meanwhile.
//
// rukh keeps its copy of a call's namespace until the call has ended and
// closes the copies of several calls at once: a namespace's teardown is the
// kernel's work after its last reference goes, and the kernel tears down
// the namespaces released together in one pass, whose cost is partly per
// pass. Nothing can enter or reach a kept one: its processes are gone with
// the call's PID namespace, and no call is ever handed it again.
var netPool struct {
	ready   chan *os.File
	calls   atomic.Int64
	filling atomic.Bool
	retryAt atomic.Int64  // unix ns: no making before
	backoff time.Duration // the filler's: the last pause
	once    sync.Once
}

const (
	netSpares     = 2
	netBackoffMin = 100 * time.Millisecond
	netBackoffMax = 30 * time.Second
	// The namespaces of ended calls closed at once, and the longest one
	// is kept.
	netRetireBatch = 8
	netRetireAfter = 50 * time.Millisecond
)

// newNetNS makes one spare (a seam for the pool's tests).
var newNetNS = makeNetNS

// takeNetNS is a ready network namespace with its loopback up, or nil.
// The call hands it back to doneNetNS as it ends.
func takeNetNS() *os.File {
	netPool.once.Do(func() { netPool.ready = make(chan *os.File, netSpares) })
	netPool.calls.Add(1)
	select {
	case f := <-netPool.ready:
		return f
	default:
		return nil
	}
}

// doneNetNS ends a call under "network none" that took f from takeNetNS
// (f nil: it took none): it retires f and makes the spares of the next
// calls.
func doneNetNS(f *os.File) {
	if f != nil {
		retireNetNS(f)
	}
	if netPool.calls.Load() > 1 && time.Now().UnixNano() >= netPool.retryAt.Load() && netPool.filling.CompareAndSwap(false, true) {
		afterReply(fillNetNS)
	}
}

var netRetired struct {
	mu    sync.Mutex
	files []*os.File
	timer *time.Timer
}

// retireNetNS closes f with the other retired namespaces: at once when
// there are netRetireBatch of them, else netRetireAfter after the first.
func retireNetNS(f *os.File) {
	netRetired.mu.Lock()
	netRetired.files = append(netRetired.files, f)
	if len(netRetired.files) < netRetireBatch {
		if netRetired.timer == nil {
			netRetired.timer = time.AfterFunc(netRetireAfter, flushNetNS)
		}
		netRetired.mu.Unlock()
		return
	}
	netRetired.mu.Unlock()
	flushNetNS()
}

// flushNetNS closes every retired namespace.
func flushNetNS() {
	netRetired.mu.Lock()
	fs := netRetired.files
	netRetired.files = nil
	if netRetired.timer != nil {
		netRetired.timer.Stop()
		netRetired.timer = nil
	}
	netRetired.mu.Unlock()
	for _, f := range fs {
		f.Close()
	}
}

// fillNetNS makes spares until there are netSpares.
func fillNetNS() {
	defer netPool.filling.Store(false)
	for len(netPool.ready) < netSpares {
		f, err := newNetNS()
		if err != nil {
			netPool.backoff = min(max(2*netPool.backoff, netBackoffMin), netBackoffMax)
			netPool.retryAt.Store(time.Now().Add(netPool.backoff).UnixNano())
			return
		}
		netPool.backoff = 0
		select {
		case netPool.ready <- f:
		default:
			f.Close()
			return
		}
	}
}

// makeNetNS makes a network namespace on a thread of its own and brings
// its loopback up as the Go init does, then puts the thread back in rukh's
// namespace. The thread must not end: a child's parent-death signal comes
// when the thread that started it ends, and this thread may have started
// one.
func makeNetNS() (*os.File, error) {
	own, err := rukhNetNS()
	if err != nil {
		return nil, err
	}
	type made struct {
		f   *os.File
		err error
	}
	c := make(chan made, 1)
	go func() {
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			c <- made{err: err}
			return
		}
		var m made
		fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			m.f = os.NewFile(uintptr(fd), "rukh-netns")
			err = loopbackUp()
		}
		if err != nil {
			if m.f != nil {
				m.f.Close()
			}
			m = made{err: err}
		}
		if err := unix.Setns(int(own.Fd()), unix.CLONE_NEWNET); err != nil {
			if m.f != nil {
				m.f.Close()
			}
			c <- made{err: err}
			select {} // stays in the namespace it made, parked, and never ends
		}
		runtime.UnlockOSThread()
		c <- m
	}()
	m := <-c
	return m.f, m.err
}

// rukhNetNS is rukh's own network namespace.
var rukhNetNS = sync.OnceValues(func() (*os.File, error) { return os.Open("/proc/self/ns/net") })

// loopbackUp brings up lo of this thread's network namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}
