package store

import (
	"bytes"
	"context"
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watchFile signals ch when the store file in the home is written, created
// or replaced, using inotify on the home directory: a publish (any write
// transaction) ends by closing the file it wrote. Read-only opens (every
// serve-mcp request) raise no event that is watched. While the home is
// missing or inotify is unavailable it polls, trying inotify again on each
// tick.
func (s *Store) watchFile(ctx context.Context, ch chan<- struct{}) {
	for ctx.Err() == nil {
		f, err := s.inotify()
		if err != nil {
			t := time.NewTimer(PollInterval)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			signal(ch)
			continue
		}
		// A write between the caller's last read and the watch being in
		// place would otherwise go unnoticed.
		signal(ch)
		readEvents(ctx, f, ch)
		f.Close()
		signal(ch) // the home was moved or removed: read again, then re-watch
	}
}

func (s *Store) inotify() (*os.File, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	const mask = unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_MOVED_TO |
		unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR
	if _, err := unix.InotifyAddWatch(fd, s.home, mask); err != nil {
		unix.Close(fd)
		return nil, err
	}
	// Non-blocking, so reads wait in the runtime poller and Close ends them.
	return os.NewFile(uintptr(fd), "inotify"), nil
}

// readEvents signals ch for every event on the store file until ctx ends
// or the watch on the home goes away.
func readEvents(ctx context.Context, f *os.File, ch chan<- struct{}) {
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			f.Close()
		case <-done:
		}
	}()
	name := []byte(DBName)
	buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
	for {
		n, err := f.Read(buf)
		if err != nil {
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			end := off + unix.SizeofInotifyEvent + int(ev.Len)
			if end > n {
				break
			}
			evName := bytes.TrimRight(buf[off+unix.SizeofInotifyEvent:end], "\x00")
			off = end
			switch {
			case ev.Mask&unix.IN_Q_OVERFLOW != 0:
				signal(ch)
			case ev.Mask&(unix.IN_IGNORED|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0:
				return
			case bytes.Equal(evName, name):
				signal(ch)
			}
		}
	}
}
