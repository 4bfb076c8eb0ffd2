//go:build linux

package kernel

import "time"

// spareDelay is how long after a call's end the spares for the next calls
// are made: the call's reply is written as its invocation returns, and
// making spares on the other CPU at that moment (a network namespace, a
// process) delays it.
const spareDelay = 2 * time.Millisecond

// afterReply runs f once the ending call's reply has most likely gone.
// A call that comes sooner makes its own, as when no spare is ready.
func afterReply(f func()) { time.AfterFunc(spareDelay, f) }
