//go:build linux && !rukh_portable

package confine

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/rukh-dev/rukh/kernel"
)

// abis are go-landlock's configurations, each handling every right of
// its ABI.
var abis = []landlock.Config{landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6, landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11}

// landlockConfig handles every filesystem right of the deepest ABI this
// kernel has (not best effort: a kernel that refuses it fails the setup)
// and, from ABI 6, scopes signals and abstract unix sockets to the
// invocation. The network is the namespace's business: Landlock's TCP
// rules would also close the invocation's own loopback.
func landlockConfig() (landlock.Config, int, error) {
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v < 1 {
		return landlock.Config{}, 0, fmt.Errorf("this kernel has no Landlock (%v)", err)
	}
	if v >= 6 {
		// go-landlock takes ABI 6 only where the kernel has the fix of
		// its signal scoping; so does this init.
		if e, err := ll.LandlockGetErrata(); err != nil || e&0x2 == 0 {
			v = 5
		}
	}
	v = min(v, len(abis))
	c := abis[v-1]
	return landlock.Config{HandledAccessFS: c.HandledAccessFS, Scoped: c.Scoped}, v, nil
}

// landlockRules grants Read read and execute, and Write read and write
// (with moving files between its directories); every other path is
// unreachable. A granted path that does not exist fails the setup: a
// template that names it meant something, and the owner should know.
func landlockRules(c kernel.Confine) ([]landlock.Rule, error) {
	var rules []landlock.Rule
	for _, g := range []struct {
		paths []string
		write bool
	}{{c.Read, false}, {c.Write, true}} {
		for _, p := range g.paths {
			if !filepath.IsAbs(p) || filepath.Clean(p) != p {
				return nil, fmt.Errorf("the granted path %q is not absolute and clean", p)
			}
			fi, err := os.Stat(p)
			if err != nil {
				return nil, fmt.Errorf("the template grants %s, which cannot be reached: %v", p, err)
			}
			switch {
			case g.write && fi.IsDir():
				rules = append(rules, landlock.RWDirs(p).WithRefer())
			case g.write:
				rules = append(rules, landlock.RWFiles(p))
			case fi.IsDir():
				rules = append(rules, landlock.RODirs(p))
			default:
				rules = append(rules, landlock.ROFiles(p))
			}
		}
	}
	return rules, nil
}

// landlockGovernsUnixSockets is the first Landlock ABI that governs
// connecting to a named UNIX socket (LANDLOCK_ACCESS_FS_RESOLVE_UNIX).
const landlockGovernsUnixSockets = 9

// restrictPaths restricts this thread to rules and returns the ABI used.
func restrictPaths(rules []landlock.Rule) (int, error) {
	cfg, v, err := landlockConfig()
	if err != nil {
		return 0, err
	}
	// Not go-landlock's Restrict: it goes through libpsx, which in a cgo
	// build lists /proc/PID/task by the init's own pid, and the host's
	// /proc (the one the init sees unless the template grants /proc) names
	// another process by it. onEveryThread does without it.
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return 0, fmt.Errorf("restricting the filesystem with Landlock ABI %d: %v", v, err)
	}
	defer unix.Close(fd)
	if e := onEveryThread(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(fd), uintptr(flags), 0, 0, 0); e != 0 {
		return 0, fmt.Errorf("restricting the filesystem with Landlock ABI %d: %v", v, e)
	}
	return v, nil
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
