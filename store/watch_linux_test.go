//go:build linux && !rukh_portable

package store

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// inotifyBatch lays events out as read(2) returns them from an inotify
// descriptor: each header, then its name padded with NULs.
func inotifyBatch(evs ...unix.InotifyEvent) func(names ...string) []byte {
	return func(names ...string) []byte {
		var b []byte
		for i, ev := range evs {
			name := []byte(names[i])
			if len(name) > 0 {
				name = append(name, make([]byte, 16-len(name)%16)...)
			}
			ev.Len = uint32(len(name))
			b = append(b, unsafe.Slice((*byte)(unsafe.Pointer(&ev)), unix.SizeofInotifyEvent)...)
			b = append(b, name...)
		}
		return b
	}
}

func TestInotifyNews(t *testing.T) {
	ev := func(mask uint32) unix.InotifyEvent { return unix.InotifyEvent{Wd: 1, Mask: mask} }
	for _, tc := range []struct {
		name           string
		buf            []byte
		changed, ended bool
	}{
		{"a commit closes the store file", inotifyBatch(ev(unix.IN_CLOSE_WRITE))(DBName), true, false},
		{"a store file moved in", inotifyBatch(ev(unix.IN_MOVED_TO))(DBName), true, false},
		{"another file", inotifyBatch(ev(unix.IN_CLOSE_WRITE), ev(unix.IN_CREATE))("notes", DBName+".tmp"), false, false},
		{"another file, then the store file", inotifyBatch(ev(unix.IN_CREATE), ev(unix.IN_CLOSE_WRITE))("holds", DBName), true, false},
		{"overflow", inotifyBatch(ev(unix.IN_Q_OVERFLOW))(""), true, false},
		{"the home removed", inotifyBatch(ev(unix.IN_DELETE_SELF), ev(unix.IN_IGNORED))("", ""), false, true},
		{"a write, then the home moved", inotifyBatch(ev(unix.IN_CLOSE_WRITE), ev(unix.IN_MOVE_SELF))(DBName, ""), true, true},
		{"a torn batch", inotifyBatch(ev(unix.IN_CLOSE_WRITE))(DBName)[:unix.SizeofInotifyEvent+3], false, false},
		{"nothing", nil, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed, ended := inotifyNews(tc.buf, DBName)
			if changed != tc.changed || ended != tc.ended {
				t.Errorf("inotifyNews = changed %v, ended %v; want %v, %v", changed, ended, tc.changed, tc.ended)
			}
		})
	}
}
