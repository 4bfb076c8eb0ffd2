//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

// lockHold opens the hold file and locks it, shared (waiting) or exclusive
// (not waiting: errHeld, with the file still open to name the holders). A
// lock on a file that was unlinked meanwhile holds nothing: open again.
func lockHold(dir, path string, exclusive bool) (*os.File, error) {
	for range 100 {
		f, err := openHold(dir, path)
		if err != nil {
			return nil, err
		}
		how := syscall.LOCK_SH
		if exclusive {
			how = syscall.LOCK_EX | syscall.LOCK_NB
		}
		if err := flock(f, how); err != nil {
			if exclusive && errors.Is(err, syscall.EWOULDBLOCK) {
				return f, errHeld
			}
			f.Close()
			return nil, err
		}
		var held, now syscall.Stat_t
		if syscall.Fstat(int(f.Fd()), &held) == nil && syscall.Stat(path, &now) == nil &&
			held.Dev == now.Dev && held.Ino == now.Ino {
			return f, nil
		}
		f.Close()
	}
	return nil, errors.New("the hold file keeps being replaced")
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}

// relockHold takes a shared lock again on a hold file kept unlocked; false
// when it cannot or the file was unlinked meanwhile (by a removal, under its
// exclusive lock): a lock on it would hold nothing, and the caller opens the
// path afresh. The path is only ever replaced by unlinking what is there.
func relockHold(f *os.File) bool {
	if flock(f, syscall.LOCK_SH) != nil {
		return false
	}
	var st syscall.Stat_t
	if syscall.Fstat(int(f.Fd()), &st) == nil && st.Nlink > 0 {
		return true
	}
	flock(f, syscall.LOCK_UN)
	return false
}

// unlockHold drops f's lock, keeping it open.
func unlockHold(f *os.File) error { return flock(f, syscall.LOCK_UN) }
