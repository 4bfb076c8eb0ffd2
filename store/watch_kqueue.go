//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package store

import (
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// watchKind names how the store file is watched here.
const watchKind = "kqueue"

// The decoder's values are the system's (a mismatch does not compile).
var (
	_ = [1]struct{}{}[noteDelete^unix.NOTE_DELETE]
	_ = [1]struct{}{}[noteWrite^unix.NOTE_WRITE]
	_ = [1]struct{}{}[noteExtend^unix.NOTE_EXTEND]
	_ = [1]struct{}{}[noteRename^unix.NOTE_RENAME]
	_ = [1]struct{}{}[noteRevoke^unix.NOTE_REVOKE]
	_ = [1]struct{}{}[evError^unix.EV_ERROR]
)

// openWatch watches the home directory and, when it exists, the store file
// with kqueue: a publish (any write transaction) writes the file, a store
// file created, moved in or removed writes the directory. Reads raise
// nothing that is watched (attribute changes are not watched: a read may
// update the access time).
func openWatch(home string) (eventSource, error) {
	s := &kqueueSource{kq: -1, dir: -1, file: -1, path: filepath.Join(home, DBName)}
	if err := s.open(home); err != nil {
		s.free()
		return nil, err
	}
	return s, nil
}

type kqueueSource struct {
	kq, dir, file int
	dev, ino      uint64 // the watched store file's (file >= 0)
	path          string
	r, w          *os.File // closing w wakes next
	watch         vnodeWatch
	evs           [16]unix.Kevent_t
}

func (s *kqueueSource) open(home string) error {
	var err error
	syscall.ForkLock.RLock()
	s.kq, err = unix.Kqueue()
	if err == nil {
		unix.CloseOnExec(s.kq)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return err
	}
	if s.dir, err = openNoEINTR(home, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC); err != nil {
		return err
	}
	// No store file yet is fine: its creation writes the directory.
	if fd, err := openNoEINTR(s.path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC); err == nil {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil {
			unix.Close(fd)
		} else {
			s.file, s.dev, s.ino = fd, uint64(st.Dev), uint64(st.Ino)
		}
	}
	if s.r, s.w, err = os.Pipe(); err != nil {
		return err
	}
	s.watch = vnodeWatch{dir: uint64(s.dir), wake: uint64(s.r.Fd()), file: uint64(s.file), hasFile: s.file >= 0}
	changes := make([]unix.Kevent_t, 2, 3)
	unix.SetKevent(&changes[0], int(s.r.Fd()), unix.EVFILT_READ, unix.EV_ADD)
	unix.SetKevent(&changes[1], s.dir, unix.EVFILT_VNODE, unix.EV_ADD|unix.EV_CLEAR)
	changes[1].Fflags = unix.NOTE_WRITE | unix.NOTE_DELETE | unix.NOTE_RENAME | unix.NOTE_REVOKE
	if s.file >= 0 {
		var c unix.Kevent_t
		unix.SetKevent(&c, s.file, unix.EVFILT_VNODE, unix.EV_ADD|unix.EV_CLEAR)
		c.Fflags = unix.NOTE_WRITE | unix.NOTE_EXTEND | unix.NOTE_DELETE | unix.NOTE_RENAME | unix.NOTE_REVOKE
		changes = append(changes, c)
	}
	for {
		_, err = unix.Kevent(s.kq, changes, nil, nil)
		if err != unix.EINTR {
			return err
		}
	}
}

func (s *kqueueSource) next() (changed, ended bool) {
	for {
		n, err := unix.Kevent(s.kq, nil, s.evs[:], nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			s.free()
			return false, true
		}
		evs := make([]vnodeEvent, n)
		for i, ev := range s.evs[:n] {
			evs[i] = vnodeEvent{ident: uint64(ev.Ident), flags: uint32(ev.Flags), fflags: ev.Fflags}
		}
		changed, ended = s.watch.news(evs, s.replaced)
		if ended {
			s.free()
		}
		if changed || ended {
			return changed, ended
		}
	}
}

// replaced reports whether the store file is now another file than the
// one watched (or there is one now, or none any more).
func (s *kqueueSource) replaced() bool {
	var st unix.Stat_t
	if unix.Lstat(s.path, &st) != nil {
		return s.file >= 0
	}
	return s.file < 0 || uint64(st.Dev) != s.dev || uint64(st.Ino) != s.ino
}

func (s *kqueueSource) stop() {
	if s.w != nil {
		s.w.Close()
	}
}

// free closes everything; only next (or a failed open) calls it.
func (s *kqueueSource) free() {
	for _, fd := range []*int{&s.kq, &s.dir, &s.file} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
	if s.r != nil {
		s.r.Close()
	}
	if s.w != nil {
		s.w.Close()
	}
}

func openNoEINTR(path string, mode int) (int, error) {
	for {
		fd, err := unix.Open(path, mode, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}
