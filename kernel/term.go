//go:build unix

package kernel

import (
	"os"

	"golang.org/x/sys/unix"
)

// IsTerminal reports whether v is an *os.File open on a terminal: a
// termios query succeeds on it. A character device is not enough (the null
// device is one).
func IsTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok || f == nil {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlGetTermios)
	return err == nil
}
