//go:build unix

package kernel

import (
	"testing"

	"golang.org/x/sys/unix"
)

// setNonblockNew makes a fresh pipe or socket end nonblocking and keeps
// its access mode; the other end stays blocking.
func TestSetNonblockNew(t *testing.T) {
	var p [2]int
	if err := unix.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	s, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		fd, other int
		access    int
	}{
		{"a pipe's read end", p[0], p[1], unix.O_RDONLY},
		{"a socket pair's end", s[0], s[1], unix.O_RDWR},
	} {
		defer unix.Close(tc.fd)
		defer unix.Close(tc.other)
		if err := setNonblockNew(tc.fd); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		flags, err := unix.FcntlInt(uintptr(tc.fd), unix.F_GETFL, 0)
		if err != nil {
			t.Fatal(err)
		}
		if flags&unix.O_NONBLOCK == 0 || flags&unix.O_ACCMODE != tc.access {
			t.Errorf("%s: flags %#x, want nonblocking with access mode %#x", tc.name, flags, tc.access)
		}
		if other, _ := unix.FcntlInt(uintptr(tc.other), unix.F_GETFL, 0); other&unix.O_NONBLOCK != 0 {
			t.Errorf("%s: the other end became nonblocking", tc.name)
		}
	}
}
