//go:build linux && !rukh_portable

package kernel

import "golang.org/x/sys/unix"

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
