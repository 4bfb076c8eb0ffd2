//go:build linux

package kernel

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// probeLandlock asks the kernel for its Landlock ABI version.
func probeLandlock() (int, string) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch {
	case errno == unix.ENOSYS || errno == unix.EOPNOTSUPP:
		return 0, "this kernel has no Landlock (or it is not enabled at boot)"
	case errno != 0:
		return 0, fmt.Sprintf("this kernel refuses Landlock: %v", errno)
	}
	return int(v), ""
}
