//go:build unix

package kernel

import (
	"os"

	"golang.org/x/sys/unix"
)

// Self is this process as a record names its owner.
func Self() (Process, bool) { return Identify(os.Getpid()) }

// Alive reports whether p still runs: its pid names a living process with
// the same start time.
func Alive(p Process) bool {
	pi, ok := plat.lookup(p.PID)
	return ok && pi.start == p.Start && !pi.zombie
}

// maxSweepIDs bounds the invocation ids one Sweep looks for in
// environments: each is one read per candidate process.
const maxSweepIDs = 64

// Sweep kills what the rukh process owner, now gone, left running: every
// process of ps whose pid still names the same process (same start time),
// with its process group when it leads one, and, where the platform reads
// environments, every process started after owner whose environment
// carries one of ids as its RUKH_INVOCATION_ID. It never signals this
// process, init, or a pid whose start time differs. It returns the
// processes it sent SIGKILL.
func Sweep(owner Process, ps []Process, ids []string) []Process {
	self := os.Getpid()
	var killed []Process
	done := map[int]bool{self: true, 1: true, 0: true}
	kill := func(pid int, pi procInfo) {
		done[pid] = true
		if pi.pgid == pid {
			unix.Kill(-pid, unix.SIGKILL) // its group is its own while it lives
		}
		unix.Kill(pid, unix.SIGKILL)
		killed = append(killed, Process{PID: pid, Start: pi.start})
	}
	for _, p := range ps {
		if done[p.PID] || p.PID < 0 {
			continue
		}
		if pi, ok := plat.lookup(p.PID); ok && pi.start == p.Start && !pi.zombie {
			kill(p.PID, pi)
		}
	}
	if len(ids) > maxSweepIDs {
		ids = ids[len(ids)-maxSweepIDs:]
	}
	if len(ids) == 0 {
		return killed
	}
	for pid, pi := range plat.snapshot() {
		if done[pid] || pi.zombie || pi.start < owner.Start {
			continue
		}
		for _, id := range ids {
			if id != "" && plat.marker(pid, "RUKH_INVOCATION_ID="+id) {
				// read again: the snapshot may be older than a pid's reuse
				if now, ok := plat.lookup(pid); ok && now.start == pi.start {
					kill(pid, now)
				}
				break
			}
		}
	}
	return killed
}

// Identify names the process pid now, with its start time.
func Identify(pid int) (Process, bool) {
	pi, ok := plat.lookup(pid)
	return Process{PID: pid, Start: pi.start}, ok && !pi.zombie
}
