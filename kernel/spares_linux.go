//go:build linux

package kernel

import (
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// spareNice is the nice value of a thread while it makes spares (network
// namespaces, scratch directories): below the calls, which the spares
// serve and must not compete with.
const spareNice = 10

// spareNiceBroken: a thread's priority could not be put back once (rukh
// without the capability to raise it), so threads make spares at their
// own priority from then on.
var spareNiceBroken atomic.Bool

// lowerSparePriority lowers the priority of this thread, which the caller
// has locked, to spareNice. restore puts it back and reports whether it
// did: a thread it could not put back must stay locked and never run
// anything else (its caller parks it).
func lowerSparePriority() (restore func() bool) {
	tid := unix.Gettid()
	// The raw call says 20 minus the nice value.
	raw, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	nice := 20 - raw
	if err != nil || nice >= spareNice || spareNiceBroken.Load() || unix.Setpriority(unix.PRIO_PROCESS, tid, spareNice) != nil {
		return func() bool { return true }
	}
	return func() bool {
		if unix.Setpriority(unix.PRIO_PROCESS, tid, nice) != nil {
			spareNiceBroken.Store(true)
			return false
		}
		return true
	}
}
