//go:build linux && !rukh_portable

package confine

import (
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rukh-dev/rukh/kernel"
)

// restrictPaths restricts this thread to plan's rules (kernel.PlanLandlock,
// the rules rukh makes for the machine-code init too).
func restrictPaths(plan kernel.LandlockPlan) error {
	// Not go-landlock's Restrict: it goes through libpsx, which in a cgo
	// build lists /proc/PID/task by the init's own pid, and the host's
	// /proc (the one the init sees unless the template grants /proc) names
	// another process by it. onEveryThread does without it.
	fd, err := plan.Ruleset(nil)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if e := onEveryThread(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(fd), 0, 0, 0, 0); e != 0 {
		return fmt.Errorf("restricting the filesystem with Landlock ABI %d: %v", plan.ABI, e)
	}
	return nil
}

// noNewPrivs sets no new privileges on this thread (and so the program).
func noNewPrivs() error {
	if e := onEveryThread(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); e != 0 {
		return fmt.Errorf("setting no new privileges: %v", e)
	}
	return nil
}

// Securebits that keep uid 0 from meaning capabilities, locked.
const securebits = 1<<0 | 1<<1 | // SECBIT_NOROOT, _LOCKED
	1<<2 | 1<<3 | // SECBIT_NO_SETUID_FIXUP, _LOCKED
	1<<5 | // SECBIT_KEEP_CAPS_LOCKED (off)
	1<<6 | 1<<7 // SECBIT_NO_CAP_AMBIENT_RAISE, _LOCKED

var (
	capHdr  unix.CapUserHeader
	capData [2]unix.CapUserData // empty: no capability
)

// dropCapabilities leaves the init and so the program with none: no
// ambient set, an empty bounding set and securebits that give uid 0
// nothing at an exec (on this thread, the only one that forks and execs:
// they matter at exec only), and empty permitted and effective sets.
func dropCapabilities() error {
	prctl := func(op, arg uintptr) unix.Errno {
		_, _, e := unix.RawSyscall6(unix.SYS_PRCTL, op, arg, 0, 0, 0, 0)
		return e
	}
	if e := prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL); e != 0 {
		return fmt.Errorf("clearing the ambient capabilities: %v", e)
	}
	for c := uintptr(0); ; c++ {
		if _, _, e := unix.RawSyscall(unix.SYS_PRCTL, unix.PR_CAPBSET_READ, c, 0); e == unix.EINVAL {
			break
		}
		if e := prctl(unix.PR_CAPBSET_DROP, c); e != 0 {
			return fmt.Errorf("dropping capability %d from the bounding set: %v", c, e)
		}
	}
	if e := prctl(unix.PR_SET_SECUREBITS, securebits); e != 0 {
		return fmt.Errorf("setting the securebits: %v", e)
	}
	capHdr.Version = unix.LINUX_CAPABILITY_VERSION_3
	if e := onEveryThread(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&capHdr)), uintptr(unsafe.Pointer(&capData[0])), 0, 0, 0); e != 0 {
		return fmt.Errorf("dropping the capabilities: %v", e)
	}
	return nil
}

// onEveryThread makes a per-thread system call on every thread of the
// init where the Go runtime can (a build without cgo, as rukh ships), and
// on this thread otherwise. This thread is the one that matters: it forks
// the program, which inherits what it has; the others run only the Go
// runtime, and holding them too leaves nothing in the init unconfined.
func onEveryThread(trap, a1, a2, a3, a4, a5 uintptr) syscall.Errno {
	_, _, e := syscall.AllThreadsSyscall6(trap, a1, a2, a3, a4, a5, 0)
	if e != syscall.ENOTSUP {
		return e
	}
	_, _, e = unix.RawSyscall6(trap, a1, a2, a3, a4, a5, 0)
	return e
}
