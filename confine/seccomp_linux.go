//go:build linux && !rukh_portable

package confine

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rukh-dev/rukh/kernel"
)

// denyUnixSockets installs kernel.UnixSocketFilter (the filter rukh gives
// the machine-code init too) on the one thread that forks the program,
// after no new privileges.
func denyUnixSockets() error {
	prog, err := kernel.UnixSocketFilter()
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, e := unix.RawSyscall(unix.SYS_PRCTL, unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("installing the seccomp filter that keeps named UNIX sockets out of reach: %v", e)
	}
	runtime.KeepAlive(prog)
	return nil
}
