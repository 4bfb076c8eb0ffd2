//go:build unix

package kernel

import (
	"bufio"
	"bytes"
	"context"
	"errors"
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

// ReadSecret reads one line of at most max bytes from the terminal f with
// echo off, so that a secret typed there is neither shown nor kept in the
// scrollback; the terminal's mode is restored before it returns, also when
// ctx ends first (an interrupt). The line ends at a newline, which is not
// returned.
func ReadSecret(ctx context.Context, f *os.File, max int) ([]byte, error) {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil, Errorf(CodeUsage, "standard input is not a terminal").Wrap(err)
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	quiet.Lflag |= unix.ICANON | unix.ISIG
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &quiet); err != nil {
		return nil, Errorf(CodeInternal, "cannot turn the terminal's echo off").Wrap(err)
	}
	defer unix.IoctlSetTermios(fd, ioctlSetTermios, old)
	type line struct {
		b   []byte
		err error
	}
	got := make(chan line, 1)
	go func() {
		b, err := bufio.NewReaderSize(f, max+2).ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) || len(b) > max+1 {
			got <- line{nil, Errorf(CodeUsage, "the value is longer than %d bytes", max)}
			return
		}
		if err != nil && len(b) == 0 {
			got <- line{nil, Errorf(CodeUsage, "no value was typed").Wrap(err)}
			return
		}
		got <- line{bytes.Clone(bytes.TrimSuffix(b, []byte("\n"))), nil}
	}()
	select {
	case l := <-got:
		return l.b, l.err
	case <-ctx.Done():
		return nil, Errorf(CodeUsage, "interrupted")
	}
}
