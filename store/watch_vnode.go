package store

// What kqueue (macOS and the BSDs) reports about the home, decoded here
// rather than in the kqueue file so that it is tested on every platform.
// The values are the same on every BSD; the kqueue file checks them
// against the system's at compile time.
const (
	noteDelete = 0x1
	noteWrite  = 0x2
	noteExtend = 0x4
	noteRename = 0x20
	noteRevoke = 0x40
	evError    = 0x4000
)

// vnodeEvent is one kevent, as much of it as the watch reads.
type vnodeEvent struct {
	ident  uint64 // the descriptor it is about
	flags  uint32 // EV_*
	fflags uint32 // NOTE_*
}

// vnodeWatch names the descriptors a kqueue watch registered: the home
// directory, the store file (when it existed) and the read end of the pipe
// that stop closes.
type vnodeWatch struct {
	dir, file, wake uint64
	hasFile         bool
}

// news reads one batch of events. The store file changed when it was
// written or grew; the watch ends, to be set up again, when the home or the
// store file was moved, removed or revoked, on an error, and on stop. A
// write to the home directory is any entry added, removed or renamed (hold
// files live elsewhere): it matters only when the store file is now another
// file than the one watched, which replaced asks.
func (w vnodeWatch) news(evs []vnodeEvent, replaced func() bool) (changed, ended bool) {
	for _, ev := range evs {
		switch {
		case ev.flags&evError != 0 || ev.ident == w.wake:
			ended = true
		case ev.ident == w.dir:
			if ev.fflags&(noteDelete|noteRename|noteRevoke) != 0 {
				changed, ended = true, true
			} else if ev.fflags&noteWrite != 0 && replaced() {
				changed, ended = true, true
			}
		case w.hasFile && ev.ident == w.file:
			if ev.fflags&(noteWrite|noteExtend) != 0 {
				changed = true
			}
			if ev.fflags&(noteDelete|noteRename|noteRevoke) != 0 {
				changed, ended = true, true
			}
		}
	}
	return changed, ended
}
