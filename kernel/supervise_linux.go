//go:build linux && !rukh_portable

package kernel

import (
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// exitFD is a descriptor that becomes readable when child pid exits (a
// pidfd), for the supervising loop's poll; the child is not reaped.
func exitFD(pid int) (int, error) { return unix.PidfdOpen(pid, 0) }

// newWakeFDs makes the descriptor a poke makes readable: one eventfd, read
// and written alike.
func newWakeFDs() (r, w int, err error) {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	return fd, fd, err
}

var wakeWord = []byte{1, 0, 0, 0, 0, 0, 0, 0}

// callWait is how a call waits without holding a thread: an epoll
// descriptor of its own holding the descriptors of the poll, itself in the
// runtime's poller, so a waiting call is a parked goroutine, not a thread
// blocked in ppoll. Each place of the poll has its registration; one is
// taken out (forget) before its descriptor is closed or handed on, so no
// registration outlives its descriptor and no reused number is watched.
// Epoll descriptors are reused, each with nothing registered.
type callWait struct {
	f  *os.File
	fd int
	rc interface {
		Read(func(uintptr) bool) error
	}
	reg [pollPlaces]int32 // the descriptor registered at each place, -1 none
	dl  time.Time         // the read deadline set on f
	// dirty: a registration could not be taken out, so the descriptor may
	// still watch one; it is closed, never reused.
	dirty bool
	evs   [pollPlaces]unix.EpollEvent
}

var callWaits struct {
	mu   sync.Mutex
	free []*callWait
}

// takeCallWait returns an epoll descriptor with nothing registered; nil
// when none could be made in the runtime's poller (the poll is then a
// ppoll).
func takeCallWait() *callWait {
	callWaits.mu.Lock()
	if n := len(callWaits.free); n > 0 {
		c := callWaits.free[n-1]
		callWaits.free = callWaits.free[:n-1]
		callWaits.mu.Unlock()
		return c
	}
	callWaits.mu.Unlock()
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil
	}
	if err := setNonblockNew(fd); err != nil {
		unix.Close(fd)
		return nil
	}
	f := os.NewFile(uintptr(fd), "rukh-call-wait")
	// Only a descriptor in the runtime's poller takes a deadline.
	if f.SetReadDeadline(time.Time{}) != nil {
		f.Close()
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil
	}
	c := &callWait{f: f, fd: fd, rc: rc}
	for i := range c.reg {
		c.reg[i] = -1
	}
	return c
}

// forget takes place i's registration out; nil does nothing.
func (c *callWait) forget(i int) {
	if c == nil || c.reg[i] < 0 {
		return
	}
	if unix.EpollCtl(c.fd, unix.EPOLL_CTL_DEL, int(c.reg[i]), nil) != nil {
		c.dirty = true
	}
	c.reg[i] = -1
}

// release takes every registration out and keeps the descriptor for
// reuse, or closes it; nil does nothing.
func (c *callWait) release() {
	if c == nil {
		return
	}
	for i := range c.reg {
		c.forget(i)
	}
	callWaits.mu.Lock()
	if !c.dirty && len(callWaits.free) < maxFreeWakers {
		callWaits.free = append(callWaits.free, c)
		c = nil
	}
	callWaits.mu.Unlock()
	if c != nil {
		c.f.Close()
	}
}

// wait is poll(2) over fds, place by place, until one is ready or due
// passes (zero: no timeout): it brings the registrations to fds, then
// waits in the runtime's poller. When epoll refuses a descriptor it
// returns errWaitRefused having waited for nothing.
func (c *callWait) wait(fds []unix.PollFd, due time.Time) error {
	failed := 0
	for i := range fds {
		fd := fds[i].Fd
		if c.reg[i] == fd {
			continue
		}
		c.forget(i)
		if fd < 0 {
			continue
		}
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(i)}
		if err := unix.EpollCtl(c.fd, unix.EPOLL_CTL_ADD, int(fd), &ev); err != nil {
			failed++
			continue
		}
		c.reg[i] = fd
	}
	for i := len(fds); i < pollPlaces; i++ {
		c.forget(i)
	}
	if failed > 0 {
		return errWaitRefused
	}
	n, err := 0, error(nil)
	if !due.IsZero() && !time.Now().Before(due) {
		n, err = unix.EpollWait(c.fd, c.evs[:], 0)
	} else {
		if !due.Equal(c.dl) {
			c.f.SetReadDeadline(due)
			c.dl = due
		}
		rerr := c.rc.Read(func(uintptr) bool {
			n, err = unix.EpollWait(c.fd, c.evs[:], 0)
			return n != 0 || err != nil
		})
		if rerr != nil {
			return rerr // the deadline: the caller looks at the clock
		}
	}
	if err != nil {
		return err
	}
	for _, ev := range c.evs[:n] {
		if i := int(ev.Fd); i < len(fds) {
			fds[i].Revents = int16(ev.Events)
		}
	}
	return nil
}
