//go:build linux && !rukh_portable

package confine

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock before ABI 9 does not govern connecting to a named UNIX socket,
// and a network namespace does not isolate one: a program could reach the
// session bus or a container daemon through its socket file and have
// something started outside its confinement. Below that ABI the init
// keeps the program from making UNIX sockets at all (socketpair, which
// reaches nothing, stays) and from io_uring, whose operations would go
// around the filter; the filter is installed on the one thread that forks
// the program, after no new privileges.
func denyUnixSockets() error {
	arch, ok := auditArch[runtime.GOARCH]
	if !ok {
		return fmt.Errorf("no seccomp filter for %s, so named UNIX sockets cannot be kept out of reach", runtime.GOARCH)
	}
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
		x32 = 0x40000000
	)
	deny := uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES))
	prog := []unix.SockFilter{
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
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, e := unix.RawSyscall(unix.SYS_PRCTL, unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("installing the seccomp filter that keeps named UNIX sockets out of reach: %v", e)
	}
	runtime.KeepAlive(prog)
	return nil
}

var auditArch = map[string]uint32{
	"amd64":   unix.AUDIT_ARCH_X86_64,
	"arm64":   unix.AUDIT_ARCH_AARCH64,
	"riscv64": unix.AUDIT_ARCH_RISCV64,
	"ppc64le": unix.AUDIT_ARCH_PPC64LE,
}
