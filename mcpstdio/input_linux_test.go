package mcpstdio

import (
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A pipe is read through a description of its own, in the runtime's
// poller; the one given stays blocking, and whatever else is read as it is.
func TestPollableInput(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skipf("no /proc here, so a pipe is read as given: %v", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// os.Pipe's ends are nonblocking; a client's are not.
	if err := unix.SetNonblock(int(r.Fd()), false); err != nil {
		t.Fatal(err)
	}
	in, closeIn := pollableInput(r)
	defer closeIn()
	f, ok := in.(*os.File)
	if !ok || f == r {
		t.Fatalf("a pipe was not opened afresh: %T", in)
	}
	if err := f.SetReadDeadline(time.Now().Add(time.Minute)); err != nil {
		t.Errorf("the fresh description is not in the poller: %v", err)
	}
	flags, err := unix.FcntlInt(r.Fd(), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	if flags&unix.O_NONBLOCK != 0 {
		t.Error("the pipe given became nonblocking")
	}
	go func() {
		w.WriteString("one\ntwo\n")
		w.Close()
	}()
	got, err := io.ReadAll(in)
	if err != nil || string(got) != "one\ntwo\n" {
		t.Errorf("read %q, %v", got, err)
	}

	// Not a pipe: read as it is.
	for _, other := range []io.Reader{strings.NewReader("x"), devNull(t)} {
		if in, closeIn := pollableInput(other); in != other {
			t.Errorf("%T was replaced", other)
		} else {
			closeIn()
		}
	}
}

// devNull is closed once, by its own *os.File: a raw close beside one
// would let the file's cleanup close the number again later, by then
// another test's descriptor.
func devNull(t *testing.T) *os.File {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
