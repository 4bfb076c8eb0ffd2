package mcpstdio

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// pollableInput is in read through the runtime's poller when in is a pipe:
// a read waiting for the client's next message then blocks no thread in a
// system call, so the scheduler's monitor need not take the thread's
// processor back during every call, and stops ticking while nothing runs.
// The pipe is opened afresh through /proc, a description of its own, so
// the nonblocking mode never reaches whoever else holds the one given us.
// Anything else (a terminal, a socket, a file, a failed open) is read as it
// is. close closes what was opened.
func pollableInput(in io.Reader) (r io.Reader, close func()) {
	f, ok := in.(*os.File)
	if !ok {
		return in, func() {}
	}
	// Not f.Fd(), which makes a descriptor in the poller blocking.
	given := -1
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { given = int(fd) })
	}
	var st unix.Stat_t
	if given < 0 || unix.Fstat(given, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return in, func() {}
	}
	fd, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", given), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return in, func() {}
	}
	var again unix.Stat_t
	if err := unix.Fstat(fd, &again); err != nil || again.Dev != st.Dev || again.Ino != st.Ino {
		unix.Close(fd)
		return in, func() {}
	}
	p := os.NewFile(uintptr(fd), f.Name())
	return p, func() { p.Close() }
}
