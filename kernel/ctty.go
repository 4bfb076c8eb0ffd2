//go:build unix

package kernel

import (
	"sync"

	"golang.org/x/sys/unix"
)

// A program started for an agent, or confined, must have no controlling
// terminal: with one it could open /dev/tty and type into the owner's
// shell (TIOCSTI). A session of its own guarantees that, but a new session
// per start is costly on a loaded host: where the scheduler groups tasks
// by session (Linux's autogroup), each start waits in a run queue of its
// own (docs/performance.md). A process that has no controlling terminal
// itself can start its programs in a process group of their own instead:
// a child inherits its parent's (absent) terminal, and only a session
// leader can acquire one, which such a child is not.
//
// Linux, macOS and FreeBSD agree on what is checked here: open("/dev/tty")
// fails with ENXIO exactly when the caller has no controlling terminal,
// and TIOCSTI is refused to a process whose controlling terminal the
// device is not.

// cttyState caches whether this process has no controlling terminal.
var cttyState struct {
	mu      sync.Mutex
	checked bool
	none    bool
}

// noControllingTerminal reports whether this process has, checked, no
// controlling terminal. An answer of true is kept only for a process that
// is not a session leader (it can never gain one); a session leader
// without one is asked again at every start, as opening a terminal would
// make it that leader's. Anything but ENXIO (no /dev/tty at all, say) is
// not taken as proof.
func noControllingTerminal() bool {
	cttyState.mu.Lock()
	defer cttyState.mu.Unlock()
	if cttyState.checked {
		return cttyState.none
	}
	none := devTTYAbsent()
	if !none || !sessionLeader() {
		cttyState.checked, cttyState.none = true, none
	}
	return none
}

// devTTYAbsent reports whether opening /dev/tty fails with ENXIO: the
// process has no controlling terminal.
func devTTYAbsent() bool {
	fd, err := unix.Open("/dev/tty", unix.O_RDONLY|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
	}
	return err == unix.ENXIO
}

func sessionLeader() bool {
	sid, err := unix.Getsid(0)
	return err == nil && sid == unix.Getpid()
}

// DetachTerminal gives up this process's controlling terminal, if it has
// one and is not a session leader, so that every program it starts after
// has none without a session of its own (serve-mcp and serve-http call it
// once at start; they never read a terminal). The terminal stays the
// process's stdin, stdout or stderr if it was: reads, writes and the
// signals its keys send to the foreground process group are unchanged. A
// session leader keeps its terminal (giving it up would hang up the
// terminal's foreground process group, itself included, with SIGHUP), and
// its programs keep getting a session each. It reports whether the
// process now has no controlling terminal.
func DetachTerminal() bool {
	if fd, err := unix.Open("/dev/tty", unix.O_RDONLY|unix.O_NOCTTY|unix.O_CLOEXEC, 0); err == nil {
		if !sessionLeader() {
			unix.IoctlSetInt(fd, unix.TIOCNOTTY, 0)
		}
		unix.Close(fd)
	}
	cttyState.mu.Lock()
	cttyState.checked = false
	cttyState.mu.Unlock()
	return noControllingTerminal()
}
