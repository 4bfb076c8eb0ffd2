//go:build linux && !rukh_portable

package store

import (
	"bytes"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watchKind names how the store file is watched here.
const watchKind = "inotify"

// openWatch watches the home directory with inotify: a publish (any write
// transaction) ends by closing the store file it wrote, and a store file
// created or moved in replaces it. Read-only opens (every serve-mcp
// request) raise no event that is watched.
func openWatch(home string) (eventSource, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	const mask = unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_MOVED_TO |
		unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR
	if _, err := unix.InotifyAddWatch(fd, home, mask); err != nil {
		unix.Close(fd)
		return nil, err
	}
	// Non-blocking, so reads wait in the runtime poller and Close ends them.
	return &inotifySource{
		f:   os.NewFile(uintptr(fd), "inotify"),
		buf: make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1)),
	}, nil
}

type inotifySource struct {
	f   *os.File
	buf []byte
}

func (s *inotifySource) next() (changed, ended bool) {
	n, err := s.f.Read(s.buf)
	if err != nil {
		s.f.Close()
		return false, true
	}
	changed, ended = inotifyNews(s.buf[:n], DBName)
	if ended {
		s.f.Close()
	}
	return changed, ended
}

func (s *inotifySource) stop() { s.f.Close() }

// inotifyNews reads one batch of inotify events on the home: the store
// file named name changed, or the events were too many to keep (the queue
// overflowed); the watch ended when the home itself went away.
func inotifyNews(buf []byte, name string) (changed, ended bool) {
	for off := 0; off+unix.SizeofInotifyEvent <= len(buf); {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
		end := off + unix.SizeofInotifyEvent + int(ev.Len)
		if end > len(buf) {
			break
		}
		evName := bytes.TrimRight(buf[off+unix.SizeofInotifyEvent:end], "\x00")
		off = end
		switch {
		case ev.Mask&unix.IN_Q_OVERFLOW != 0:
			changed = true
		case ev.Mask&(unix.IN_IGNORED|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0:
			return changed, true
		case string(evName) == name:
			changed = true
		}
	}
	return changed, false
}
