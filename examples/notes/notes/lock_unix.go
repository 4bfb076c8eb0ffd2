//go:build unix

package notes

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// lock takes flock on notes.lock (exclusive for writers, shared for
// readers), polling so that a cancelled invocation stops waiting.
func (s *Store) lock(ctx context.Context, exclusive bool) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(s.dir, "notes.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil // closing releases the lock
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, context.Cause(ctx)
		case <-time.After(5 * time.Millisecond):
		}
	}
}
