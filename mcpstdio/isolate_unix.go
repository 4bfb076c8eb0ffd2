//go:build unix

package mcpstdio

import (
	"os"

	"golang.org/x/sys/unix"
)

// IsolateStdout moves the protocol off descriptor 1: it duplicates fd 1 to
// a private close-on-exec descriptor, then points fd 1 at stderr (fd 2), so
// a stray print, a panic trace, library output or an inherited descriptor
// can never interleave with protocol messages. The returned file is the
// only way left to the original stdout; pass it to Serve. Call it once,
// before anything else writes to stdout.
func IsolateStdout() (*os.File, error) {
	fd, err := unix.FcntlInt(1, unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, &os.PathError{Op: "dup", Path: "/dev/stdout", Err: err}
	}
	if err := dup2(2, 1); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "dup2", Path: "/dev/stderr", Err: err}
	}
	return os.NewFile(uintptr(fd), "mcp-stdout"), nil
}
