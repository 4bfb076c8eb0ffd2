package kernel

import (
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Linux's process table is /proc, in both the native and the rukh_portable
// build.

func procSnapshot() procTable {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	m := make(procTable, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pi, ok := procLookup(pid); ok {
			m[pid] = pi
		}
	}
	return m
}

func procLookup(pid int) (procInfo, bool) {
	var buf [512]byte
	b, err := readProcFile(buf[:0], "/proc/"+strconv.Itoa(pid)+"/stat")
	if err != nil {
		return procInfo{}, false
	}
	return parseProcStat(b)
}

func procMarker(pid int, kv string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	return err == nil && envHas(b, kv)
}

// waitExited is a thread blocked in waitid(WNOWAIT), not a pidfd in the
// runtime's poller: the poller's wake-up is measurably slower per call on
// a loaded host (docs/performance.md).
func procWaitExited(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return err
		}
	}
}

// closeInheritedFDs marks every descriptor above 2 close-on-exec. Go opens
// its own files close-on-exec, so this only changes descriptors rukh
// inherited (exec 7</etc/hostname; rukh …); os/exec still passes the
// streams and ExtraFiles it is given, by dup2.
func closeInheritedFDs() {
	if unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	closeInheritedFDsByList("/proc/self/fd") // kernels before 5.11
}

// readProcFile reads a small /proc file into dst with plain system calls:
// open, reads, close (os.ReadFile adds a stat and a try at the poller).
func readProcFile(dst []byte, path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := unix.Read(fd, dst[len(dst):cap(dst)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return dst, nil
		}
		dst = dst[:len(dst)+n]
	}
}

// socketpair and pipe with close-on-exec set atomically.
func cloexecSocketpair() ([2]int, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return [2]int{}, err
	}
	return [2]int{fds[0], fds[1]}, nil
}

func cloexecPipe() ([2]int, error) {
	var p [2]int
	err := unix.Pipe2(p[:], unix.O_CLOEXEC)
	return p, err
}

const (
	ioctlGetTermios = unix.TCGETS
	ioctlSetTermios = unix.TCSETS
)
