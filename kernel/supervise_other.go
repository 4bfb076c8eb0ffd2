//go:build unix && (rukh_portable || !linux)

package kernel

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// exitFD: no descriptor tells a child's exit here; a goroutine waits.
func exitFD(int) (int, error) { return -1, errors.ErrUnsupported }

// newWakeFDs makes a pipe a poke makes readable.
func newWakeFDs() (r, w int, err error) {
	p, err := cloexecPipe()
	if err != nil {
		return -1, -1, err
	}
	for _, fd := range p {
		if err := unix.SetNonblock(fd, true); err != nil {
			unix.Close(p[0])
			unix.Close(p[1])
			return -1, -1, err
		}
	}
	return p[0], p[1], nil
}

var wakeWord = []byte{1}

// callWait: the poll is a ppoll here.
type callWait struct{}

func takeCallWait() *callWait { return nil }

func (*callWait) forget(int) {}
func (*callWait) release()   {}

func (*callWait) wait([]unix.PollFd, time.Time) error { return errors.ErrUnsupported }
