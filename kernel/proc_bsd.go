//go:build darwin || freebsd

package kernel

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// What macOS and FreeBSD share below the seam: kqueue for exits, the
// close-on-exec dance under syscall.ForkLock, the termios ioctl.

const (
	ioctlGetTermios = unix.TIOCGETA
	ioctlSetTermios = unix.TIOCSETA
)

// osWaitExited waits for the exit of child pid with kqueue (EVFILT_PROC,
// NOTE_EXIT), which leaves it unreaped. A child that already exited cannot
// be registered (ESRCH): as an unreaped child it is a zombie, so done.
func osWaitExited(pid int) error {
	kq, err := unix.Kqueue()
	if err != nil {
		return osPollExited(pid)
	}
	defer unix.Close(kq)
	ev := []unix.Kevent_t{{Ident: uint64(pid), Filter: unix.EVFILT_PROC, Flags: unix.EV_ADD | unix.EV_ONESHOT, Fflags: unix.NOTE_EXIT}}
	out := make([]unix.Kevent_t, 1)
	for {
		n, err := unix.Kevent(kq, ev, out, nil)
		ev = nil
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.ESRCH:
			return nil
		case err != nil:
			return osPollExited(pid)
		case n > 0 && out[0].Flags&unix.EV_ERROR != 0:
			if unix.Errno(out[0].Data) == unix.ESRCH {
				return nil
			}
			return osPollExited(pid)
		case n > 0:
			return nil
		}
	}
}

// osPollExited is the fallback without kqueue: the table says zombie.
func osPollExited(pid int) error {
	for {
		pi, ok := osLookup(pid)
		if !ok || pi.zombie {
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func closeInheritedFDs() {
	if closeInheritedFDsByList("/dev/fd") {
		return
	}
	var lim unix.Rlimit
	n := 1 << 16
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && int64(lim.Cur) >= 0 && int64(lim.Cur) < int64(n) {
		n = int(lim.Cur)
	}
	for fd := 3; fd < n; fd++ {
		unix.CloseOnExec(fd)
	}
}

// cloexecSocketpair and cloexecPipe hold ForkLock between creating the
// descriptors and marking them, so no concurrent fork inherits them.
func cloexecSocketpair() ([2]int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return [2]int{}, err
	}
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	return [2]int{fds[0], fds[1]}, nil
}

func cloexecPipe() ([2]int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		return p, err
	}
	syscall.CloseOnExec(p[0])
	syscall.CloseOnExec(p[1])
	return p, nil
}

// Descriptors of other processes are not read on these platforms (yet).
func osFileNames([]*os.File) []string { return nil }
func osHolds(int, []string) bool      { return false }

// sysctlRaw retries while the table grows between sizing and reading.
func sysctlRaw(name string, args ...int) ([]byte, error) {
	for range 8 {
		b, err := unix.SysctlRaw(name, args...)
		if err != unix.ENOMEM {
			return b, err
		}
	}
	return nil, unix.ENOMEM
}
