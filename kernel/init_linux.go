//go:build linux && !rukh_portable

package kernel

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// containment is how this process starts an invocation's leader: the init
// that runs as PID 1 of its namespace, and the namespaces it gets.
var containment struct {
	once sync.Once
	path string // the containment init, or "" where there is none
	err  error  // why there is none
	// off is set once a start in namespaces failed for want of them: later
	// starts go without (the recorded sweep), and reason says why.
	mu     sync.Mutex
	off    bool
	reason string
}

// containmentInitPath is the path the containment init is executed from:
// a sealed memory file (its descriptor is above every one a child gets,
// so the child's dup2s never clobber it), or this executable where it is
// rukh's init and there is no machine-code one.
func containmentInitPath() (string, error) {
	containment.once.Do(func() {
		if containmentInit == "" {
			if selfInit.Load() {
				containment.path = "/proc/self/exe"
				return
			}
			containment.err = errors.New("no containment init for this architecture")
			return
		}
		containment.path, containment.err = sealedExecutable("rukh-init", containmentInit)
	})
	return containment.path, containment.err
}

// sealedExecutable writes body to a sealed memory file kept open for the
// life of the process and returns the path a child executes it by.
func sealedExecutable(name, body string) (string, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return "", os.NewSyscallError("memfd_create", err)
	}
	defer unix.Close(fd)
	for b := []byte(body); len(b) > 0; {
		n, err := unix.Write(fd, b)
		if err != nil {
			return "", os.NewSyscallError("write", err)
		}
		b = b[n:]
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SEAL|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE); err != nil {
		return "", os.NewSyscallError("fcntl", err)
	}
	if err := unix.Fchmod(fd, 0o500); err != nil {
		return "", os.NewSyscallError("fchmod", err)
	}
	high, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 64)
	if err != nil {
		return "", os.NewSyscallError("fcntl", err)
	}
	return fmt.Sprintf("/proc/self/fd/%d", high), nil
}

// namespaced reports whether starts use namespaces now ("" reason) or why
// not.
func namespaced() (bool, string) {
	if w := without(); w["namespaces"] {
		return false, WithoutEnv + " lists namespaces"
	}
	if _, err := containmentInitPath(); err != nil {
		return false, err.Error()
	}
	containment.mu.Lock()
	defer containment.mu.Unlock()
	return !containment.off, containment.reason
}

// containAttr adds to a the namespaces of a contained start: a PID
// namespace; a user namespace unless rukh is root (creating one is what
// lets anyone else create the others, and costs most of a contained
// start); a network namespace when netNone. An unconfined start shares
// the host's mounts, so its /proc is the host's (a mount namespace with a
// /proc of its own costs several times the whole call). A confined start
// (confined) always gets a user namespace, and a mount namespace when its
// template grants /proc (ownProc: the init mounts one of the call's PID
// namespace there); its init keeps the two capabilities it needs there
// (mount, bring the loopback up) across its exec, and drops them before
// the program starts.
func containAttr(a *syscall.SysProcAttr, netNone, confined, ownProc bool) {
	a.Cloneflags |= syscall.CLONE_NEWPID
	if netNone {
		a.Cloneflags |= syscall.CLONE_NEWNET
	}
	uid, gid := os.Getuid(), os.Getgid()
	if uid == 0 && !confined {
		return
	}
	a.Cloneflags |= syscall.CLONE_NEWUSER
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	a.GidMappingsEnableSetgroups = false
	if confined {
		if ownProc {
			a.Cloneflags |= syscall.CLONE_NEWNS
		}
		if uid != 0 {
			a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP}
		}
	}
}

// namespaceRefused reports whether a start failed because the namespaces
// were refused (not for a reason of the program's own), and turns them
// off for later starts, remembering why.
func namespaceRefused(err error) bool {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return false
	}
	switch errno {
	case unix.EPERM, unix.EINVAL, unix.ENOSPC, unix.EUSERS, unix.EACCES, unix.ENOSYS:
	default:
		return false
	}
	containment.mu.Lock()
	containment.off = true
	containment.reason = fmt.Sprintf("the kernel refused to start rukh's init in a PID namespace: %v", err)
	containment.mu.Unlock()
	return true
}

// probeNamespaces starts the containment init in the namespaces of an
// unconfined start (and those a confined one adds) with nothing to run.
func probeNamespaces() string {
	path, err := containmentInitPath()
	if err != nil {
		return err.Error()
	}
	for _, confined := range []bool{false, true} {
		a := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
		containAttr(a, true, confined, confined)
		pid, err := syscall.ForkExec(path, []string{InitArgv0}, &syscall.ProcAttr{Sys: a})
		if err != nil {
			return fmt.Sprintf("the kernel refused a PID namespace: %v", err)
		}
		var ws syscall.WaitStatus
		for {
			_, err = syscall.Wait4(pid, &ws, 0, nil)
			if err != syscall.EINTR {
				break
			}
		}
		switch {
		case err != nil:
			return fmt.Sprintf("rukh's init did not run in a PID namespace: %v", err)
		case !ws.Exited() || ws.ExitStatus() != 0:
			return fmt.Sprintf("rukh's init did not run in a PID namespace: it ended with exit status %d (signal %v)", ws.ExitStatus(), ws.Signal())
		}
	}
	return ""
}

// mountNamespace is the inode of rukh's mount namespace (0 if unknown).
var mountNamespace = sync.OnceValue(func() uint64 {
	var st unix.Stat_t
	if unix.Stat("/proc/self/ns/mnt", &st) != nil {
		return 0
	}
	return st.Ino
})
