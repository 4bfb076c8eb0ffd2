//go:build unix

package kernel

import (
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSignalVerified covers the races between a snapshot and the signal: a
// process that exited since (ESRCH from the kernel is fine, no signal is
// even tried), a pid reused by another process (different start time: it
// must not be signalled), and one that became a zombie.
func TestSignalVerified(t *testing.T) {
	victims := procTable{
		10: {ppid: 1, start: 100},
		11: {ppid: 1, start: 110}, // exits before the signal
		12: {ppid: 1, start: 120}, // its pid is reused
		13: {ppid: 1, start: 130}, // became a zombie
		14: {ppid: 1, start: 140, zombie: true},
	}
	now := procTable{
		10: {ppid: 1, start: 100},
		12: {ppid: 1, start: 999},
		13: {ppid: 1, start: 130, zombie: true},
		14: {ppid: 1, start: 140, zombie: true},
	}
	var signalled []int
	lookup := func(pid int) (procInfo, bool) { pi, ok := now[pid]; return pi, ok }
	signalVerified(victims, lookup, func(pid int) error {
		signalled = append(signalled, pid)
		if _, ok := now[pid]; !ok {
			return unix.ESRCH
		}
		return nil
	})
	if !slices.Equal(signalled, []int{10}) {
		t.Errorf("signalled %v, want only [10]", signalled)
	}
}

// TestAttributed is the generic path's rule for what belongs to an
// invocation, on a recorded table: its group, its session, what was seen
// below it (same pid and start time), and the descendants of these; not
// rukh, not init, not a reused pid.
func TestAttributed(t *testing.T) {
	const self, leader = 50, 100
	table := procTable{
		1:      {ppid: 0, pgid: 1, sid: 1, start: 1},
		self:   {ppid: 1, pgid: self, sid: self, start: 10},
		leader: {ppid: self, pgid: leader, sid: leader, start: 20, zombie: true},
		101:    {ppid: 1, pgid: leader, sid: leader, start: 21}, // group, orphaned
		102:    {ppid: 1, pgid: 102, sid: leader, start: 22},    // own group, same session
		103:    {ppid: 1, pgid: 103, sid: 103, start: 23},       // setsid daemon, seen before
		104:    {ppid: 103, pgid: 103, sid: 103, start: 24},     // its child
		105:    {ppid: 1, pgid: 105, sid: 105, start: 25},       // pid seen before, now another process
		106:    {ppid: 1, pgid: 106, sid: 106, start: 26},       // a stranger
		200:    {ppid: self, pgid: 200, sid: 200, start: 30},    // another invocation's leader
		201:    {ppid: 200, pgid: 200, sid: 200, start: 31},
	}
	tr := &tracked{leader: leader, start: 20, seen: map[int]uint64{103: 23, 105: 5}}
	got := attributed(newTableIndex(table), self, tr, true)
	var pids []int
	for pid := range got {
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	if want := []int{leader, 101, 102, 103, 104}; !slices.Equal(pids, want) {
		t.Errorf("attributed %v, want %v", pids, want)
	}
}
