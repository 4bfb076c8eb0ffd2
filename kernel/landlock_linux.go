//go:build linux && !rukh_portable

package kernel

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The Landlock ruleset of a confined call, shared by both confining
// inits: the machine-code one gets it made by rukh, the Go one (package
// confine) makes it itself.

// landlockABIs are go-landlock's configurations, each handling every
// right of its ABI.
var landlockABIs = []landlock.Config{landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6, landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11}

// LandlockGovernsUnixSockets is the first Landlock ABI that governs
// connecting to a named UNIX socket; below it the inits keep the program
// from making UNIX sockets (UnixSocketFilter).
const LandlockGovernsUnixSockets = 9

// Rights of a rule, as go-landlock's RODirs, ROFiles, RWDirs and RWFiles
// grant them.
const (
	llFile      = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSReadFile
	llRead      = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	llWrite     = ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeChar | ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo | ll.AccessFSMakeBlock | ll.AccessFSMakeSym | ll.AccessFSTruncate
	llReadWrite = llRead | llWrite
)

// LandlockPlan is what a template grants, as Landlock rules: the deepest
// ABI this kernel has, every filesystem right of it handled (not best
// effort: a kernel that refuses it fails the setup) and, from ABI 6,
// signals and abstract unix sockets scoped to the invocation. The
// network is the namespace's business: Landlock's TCP rules would also
// close the invocation's own loopback.
type LandlockPlan struct {
	ABI     int
	handled uint64
	scoped  uint64
	Rules   []LandlockRule
}

// LandlockRule grants Access beneath Path.
type LandlockRule struct {
	Path   string
	Access uint64
}

// PlanLandlock grants c.Read read and execute, and c.Write read and write
// (with moving files between its directories); every other path is
// unreachable. A granted path that does not exist fails: a template that
// names it meant something, and the owner should know.
func PlanLandlock(c Confine) (LandlockPlan, error) {
	var p LandlockPlan
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v < 1 {
		return p, fmt.Errorf("this kernel has no Landlock (%v)", err)
	}
	if v >= 6 {
		// go-landlock takes ABI 6 only where the kernel has the fix of
		// its signal scoping; so do the inits.
		if e, err := ll.LandlockGetErrata(); err != nil || e&0x2 == 0 {
			v = 5
		}
	}
	v = min(v, len(landlockABIs))
	cfg := landlockABIs[v-1]
	p.ABI, p.handled, p.scoped = v, uint64(cfg.HandledAccessFS), uint64(cfg.Scoped)
	for _, g := range []struct {
		paths []string
		write bool
	}{{c.Read, false}, {c.Write, true}} {
		for _, path := range g.paths {
			if !filepath.IsAbs(path) || filepath.Clean(path) != path {
				return p, fmt.Errorf("the granted path %q is not absolute and clean", path)
			}
			fi, err := os.Stat(path)
			if err != nil {
				return p, fmt.Errorf("the template grants %s, which cannot be reached: %v", path, err)
			}
			var a uint64
			switch {
			case g.write && fi.IsDir():
				a = llReadWrite | ll.AccessFSRefer
			case g.write:
				a = llReadWrite & llFile
			case fi.IsDir():
				a = llRead
			default:
				a = llRead & llFile
			}
			if a &= p.handled; a != 0 {
				p.Rules = append(p.Rules, LandlockRule{path, a})
			}
		}
	}
	return p, nil
}

// Ruleset creates the plan's ruleset (close-on-exec) with its rules but
// those later says the caller adds itself.
func (p LandlockPlan) Ruleset(later func(LandlockRule) bool) (int, error) {
	attr := ll.RulesetAttr{HandledAccessFS: p.handled, Scoped: p.scoped}
	fd, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return -1, p.failed(err)
	}
	for _, r := range p.Rules {
		if later != nil && later(r) {
			continue
		}
		if err := p.addRule(fd, r); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	return fd, nil
}

func (p LandlockPlan) addRule(fd int, r LandlockRule) error {
	dir, err := unix.Open(r.Path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("the template grants %s, which cannot be reached: %v", r.Path, err)
	}
	defer unix.Close(dir)
	if err := ll.LandlockAddPathBeneathRule(fd, &ll.PathBeneathAttr{ParentFd: dir, AllowedAccess: r.Access}, 0); err != nil {
		return p.failed(fmt.Errorf("adding the rule of %s: %v", r.Path, err))
	}
	return nil
}

// Failed is how a step of restricting the filesystem fails.
func (p LandlockPlan) failed(err error) error {
	return fmt.Errorf("restricting the filesystem with Landlock ABI %d: %v", p.ABI, err)
}

// UnixSocketFilter is the seccomp filter the inits install where Landlock
// does not govern connecting to a named UNIX socket, and a network
// namespace does not isolate one: a program could reach the session bus
// or a container daemon through its socket file and have something
// started outside its confinement. It keeps the program from making UNIX
// sockets at all (socketpair, which reaches nothing, stays) and from
// io_uring, whose operations would go around the filter.
func UnixSocketFilter() ([]unix.SockFilter, error) {
	goarch := runtime.GOARCH
	arch, ok := map[string]uint32{
		"amd64":   unix.AUDIT_ARCH_X86_64,
		"arm64":   unix.AUDIT_ARCH_AARCH64,
		"riscv64": unix.AUDIT_ARCH_RISCV64,
		"ppc64le": unix.AUDIT_ARCH_PPC64LE,
	}[goarch]
	if !ok {
		return nil, fmt.Errorf("no seccomp filter for %s, so named UNIX sockets cannot be kept out of reach", goarch)
	}
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
		x32 = 0x40000000
	)
	deny := uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES))
	return []unix.SockFilter{
		{Code: ld, K: 4}, // seccomp_data.arch
		{Code: jeq, Jt: 1, K: arch},
		{Code: ret, K: unix.SECCOMP_RET_KILL_PROCESS}, // another ABI's numbers
		{Code: ld, K: 0},                              // seccomp_data.nr
		{Code: jge, Jt: 4, K: x32},                    // amd64's x32 numbers name the same calls
		{Code: jeq, Jt: 3, K: unix.SYS_IO_URING_SETUP},
		{Code: jeq, Jf: 3, K: unix.SYS_SOCKET},
		{Code: ld, K: 16}, // seccomp_data.args[0], low word (little-endian): the domain
		{Code: jeq, Jf: 1, K: unix.AF_UNIX},
		{Code: ret, K: deny},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
	}, nil
}
