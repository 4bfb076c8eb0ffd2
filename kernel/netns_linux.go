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
// enters it; rukh keeps no copy, so it ends with the call. The first such
// call of a process makes its own (a one-shot CLI pays for nothing ahead);
// from the second on, a spare is made after each take. Making one that
// fails (a want of descriptors or memory) stops the making for a while,
// longer each time in a row, and calls make their own meanwhile.
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
)

// newNetNS makes one spare (a seam for the pool's tests).
var newNetNS = makeNetNS

// takeNetNS is a ready network namespace with its loopback up, or nil.
func takeNetNS() *os.File {
	netPool.once.Do(func() { netPool.ready = make(chan *os.File, netSpares) })
	var f *os.File
	select {
	case f = <-netPool.ready:
	default:
	}
	if netPool.calls.Add(1) > 1 && time.Now().UnixNano() >= netPool.retryAt.Load() && netPool.filling.CompareAndSwap(false, true) {
		go fillNetNS()
	}
	return f
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
// namespace. The thread must not end: a child's parent-death signal
// comes when the thread that started it ends, and this thread may have
// started one.
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
