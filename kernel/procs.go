//go:build unix

package kernel

import (
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Process hygiene: every process an invocation starts, however it forks,
// dies and is reaped before the invocation ends (docs/extension-protocol.md,
// Deadline and cancellation). This file is the policy, written once; the
// platform files below the seam (platform_*.go, proc_*.go) supply the
// primitives:
//
//   - start a child in its own process group, with no controlling terminal
//     unless asked, and only the channel and stdio descriptors;
//   - a snapshot of the process table: pid, parent, group, session, start
//     time;
//   - signal, wait for an exit without reaping, reap;
//   - optionally: a child subreaper (orphans come back to rukh), a
//     parent-death signal, a process's environment, a process's open
//     descriptors.
//
// With a subreaper (Linux) rukh's process subtree is exactly what its
// invocations started: when one ends, everything below rukh that no other
// running invocation claims is killed. Without one (macOS, FreeBSD, a
// rukh_portable build) an orphan goes to init, so the policy attributes
// processes to the invocation instead: its group, its session, its
// RUKH_INVOCATION_ID, the descriptors rukh gave it, every process seen
// below it while it ran (pid and start time, sampled), and the descendants
// of all these.
//
// Neither survives a SIGKILL of rukh itself: the parent-death signal (or
// the watchdog) reaches the leaders only. So where a Runner has a
// ProcessRecorder, the sampler also runs with a subreaper, and every
// process it finds beyond an invocation's leader is handed to the recorder
// once; the next rukh process on the home kills what a killed one left
// (Sweep, sweep.go).

// cleanupTimeout bounds the wait for killed processes to disappear (a
// process in uninterruptible sleep dies only when its I/O returns).
const cleanupTimeout = 5 * time.Second

// Without a subreaper the table is sampled while invocations run, to
// remember their descendants before they are orphaned: soon after a start,
// then less and less often (a snapshot reads every process).
const (
	sampleFirst = 500 * time.Millisecond
	sampleMax   = 2 * time.Second
)

var setupOnce sync.Once

// setupProcess makes rukh a subreaper where it can be one and closes
// inherited descriptors for children, once per process.
func setupProcess() {
	setupOnce.Do(func() {
		plat.setup()
		closeInheritedFDs()
	})
}

// tracked is one running invocation's leader as cleanup sees it.
type tracked struct {
	id     string // RUKH_INVOCATION_ID; "" for passthrough programs
	leader int    // pid, process group id and, in a new session, session id

	// Without a subreaper only:
	start uint64         // the leader's start time
	files []string       // the descriptors rukh gave it, as the platform names them
	seen  map[int]uint64 // processes seen below it, by pid: their start time
	// not is what was looked at (environment, descriptors) and is not its:
	// each process is read once per invocation.
	not map[int]uint64

	rec      ProcessRecorder // nil: nothing is recorded
	recorded map[int]uint64  // what rec was given, by pid: start time
}

var procs struct {
	// startMu is held for reading while a child starts and is registered,
	// and for writing by cleanup: cleanup never sees a child rukh forked but
	// has not registered yet, nor reaps one os/exec waits for.
	startMu  sync.RWMutex
	mu       sync.Mutex
	live     map[int]*tracked // by leader pid
	sampling bool             // a sampler runs (no subreaper, or a recorder)
	pause    time.Duration    // its next pause; a start resets it
	// recMu orders a sample's Record calls before the Ended of the same
	// invocation; taken before mu, never while holding it.
	recMu sync.Mutex
}

// startTracked starts cmd and registers it; files are the child's ends of
// the channel and stream pipes. With a parent-death signal, it starts cmd
// from whichever thread the caller runs on: Go ties the signal to the
// thread that forked the child, and the runtime ends a thread only when a
// goroutine locked to it returns, which nothing in rukh does
// (TestNothingLocksAThread). Forking here, not on one thread kept for it,
// spares every call two thread hand-offs.
func startTracked(cmd *exec.Cmd, id string, files []*os.File, rec ProcessRecorder) (*tracked, error) {
	setupProcess()
	var names []string
	if !plat.subreaper() {
		names = plat.fileNames(files)
		plat.watchdog()
	}
	procs.startMu.RLock()
	defer procs.startMu.RUnlock()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	t := &tracked{id: id, leader: cmd.Process.Pid, files: names, rec: rec}
	if !plat.subreaper() {
		t.seen, t.not = map[int]uint64{}, map[int]uint64{}
		if pi, ok := plat.lookup(t.leader); ok {
			t.start = pi.start
		}
		plat.guard(t.leader)
	}
	procs.mu.Lock()
	if procs.live == nil {
		procs.live = map[int]*tracked{}
	}
	procs.live[t.leader] = t
	if !plat.subreaper() || rec != nil {
		procs.pause = sampleFirst
		if !procs.sampling {
			procs.sampling = true
			go sampler()
		}
	}
	procs.mu.Unlock()
	return t, nil
}

// untrack forgets t once os/exec reaped its leader, and tells its
// recorder the invocation ended if it recorded anything.
func untrack(t *tracked) {
	procs.mu.Lock()
	delete(procs.live, t.leader)
	recorded := len(t.recorded) > 0
	procs.mu.Unlock()
	if !plat.subreaper() {
		plat.unguard(t.leader)
	}
	if recorded {
		procs.recMu.Lock()
		t.rec.Ended(t.id, t.leader)
		procs.recMu.Unlock()
	}
}

// sampler remembers, while invocations run, which processes are theirs:
// without a subreaper a process whose parent exits is re-parented to init,
// and its ancestry is lost unless it was seen before.
func sampler() {
	for {
		procs.mu.Lock()
		d := procs.pause
		procs.pause = min(2*d, sampleMax)
		procs.mu.Unlock()
		time.Sleep(d)
		procs.mu.Lock()
		if len(procs.live) == 0 {
			procs.sampling = false
			procs.mu.Unlock()
			return
		}
		procs.mu.Unlock()
		sample()
	}
}

// sample records, for every running invocation, the processes attributed
// to it now, and hands the new ones beyond its leader to its recorder.
func sample() {
	procs.mu.Lock()
	recording := false
	for _, t := range procs.live {
		recording = recording || t.rec != nil
	}
	procs.mu.Unlock()
	if plat.subreaper() && !recording {
		return
	}
	all := plat.snapshot()
	self := os.Getpid()
	idx := newTableIndex(all)
	procs.recMu.Lock()
	defer procs.recMu.Unlock()
	procs.mu.Lock()
	found := map[*tracked][]int{}
	if plat.subreaper() {
		found = subtreeOwners(idx, self)
	} else {
		for _, t := range procs.live {
			// A recorded invocation's escapees are looked for now (its
			// environment and descriptors), not only when it ends.
			for pid := range attributed(idx, self, t, t.rec != nil) {
				t.seen[pid] = all[pid].start
				found[t] = append(found[t], pid)
			}
		}
	}
	type news struct {
		t  *tracked
		ps []Process
	}
	var out []news
	for t, pids := range found {
		if t.rec == nil {
			continue
		}
		var ps []Process
		for _, pid := range pids {
			pi := all[pid]
			if s, ok := t.recorded[pid]; pid == t.leader || pi.zombie || ok && s == pi.start {
				continue
			}
			if t.recorded == nil {
				t.recorded = map[int]uint64{}
			}
			t.recorded[pid] = pi.start
			ps = append(ps, Process{PID: pid, Start: pi.start})
		}
		if len(ps) > 0 {
			out = append(out, news{t, ps})
		}
	}
	procs.mu.Unlock()
	for _, n := range out {
		n.t.rec.Record(n.t.id, n.t.leader, n.ps)
	}
}

// subtreeOwners attributes, with a subreaper, every process below rukh to
// the running invocations it belongs to: the one whose leader it descends
// from, else the one whose group or session or RUKH_INVOCATION_ID it has,
// else (an escapee that cleared all of these) every running one that
// records. Called with procs.mu held.
func subtreeOwners(idx tableIndex, self int) map[*tracked][]int {
	owner := map[int]*tracked{}
	for _, t := range procs.live {
		set := map[int]bool{}
		if _, ok := idx.all[t.leader]; ok {
			idx.closure(set, t.leader)
		}
		for pid := range set {
			owner[pid] = t
		}
	}
	out := map[*tracked][]int{}
	var ownerOf func(pid int, depth int) []*tracked
	memo := map[int][]*tracked{}
	ownerOf = func(pid, depth int) []*tracked {
		if t, ok := owner[pid]; ok {
			return []*tracked{t}
		}
		if ts, ok := memo[pid]; ok {
			return ts
		}
		pi := idx.all[pid]
		var ts []*tracked
		if pi.ppid != self && depth < 64 {
			ts = ownerOf(pi.ppid, depth+1)
		} else {
			for _, t := range procs.live {
				if pi.pgid == t.leader || pi.sid == t.leader || t.id != "" && plat.marker(pid, "RUKH_INVOCATION_ID="+t.id) {
					ts = []*tracked{t}
					break
				}
			}
			if ts == nil {
				for _, t := range procs.live {
					if t.rec != nil {
						ts = append(ts, t)
					}
				}
			}
		}
		memo[pid] = ts
		return ts
	}
	mine := map[int]bool{}
	idx.closure(mine, self)
	delete(mine, self)
	for pid := range mine {
		for _, t := range ownerOf(pid, 0) {
			out[t] = append(out[t], pid)
		}
	}
	return out
}

// cleanup kills and reaps, after t's leader exited (it is a zombie os/exec
// will reap), every process t left behind that no other running invocation
// claims. It returns once they are gone, or after cleanupTimeout.
func cleanup(t *tracked) {
	self := os.Getpid()
	deadline := time.Now().Add(cleanupTimeout)
	for pause := time.Millisecond; cleanupRound(self, t) && time.Now().Before(deadline); pause = min(2*pause, 20*time.Millisecond) {
		time.Sleep(pause)
	}
}

// cleanupRound kills the victims, reaps those that are rukh's children,
// and reports whether any may still be alive.
func cleanupRound(self int, t *tracked) bool {
	procs.startMu.Lock()
	defer procs.startMu.Unlock()
	if plat.subreaper() && onlyLeaders(self, t) {
		return false
	}
	victims := victimsOf(self, t)
	signalVerified(victims, plat.lookup, func(pid int) error { return unix.Kill(pid, unix.SIGKILL) })
	left := false
	for pid, pi := range victims {
		if pi.ppid == self {
			var ws unix.WaitStatus
			unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		}
		// Killed or reaped just now, or a zombie its parent (init) reaps
		// soon: look again, until a scan finds nothing left to do. A zombie
		// child of the ended leader is reaped with it.
		if !pi.zombie || pi.ppid != t.leader {
			left = true
		}
	}
	return left
}

// signalVerified signals each living victim only if its pid still names
// the same process (same start time): a process that exited since the
// snapshot is skipped (ESRCH is fine), and a pid reused by another process
// is never signalled.
func signalVerified(victims procTable, lookup func(int) (procInfo, bool), signal func(int) error) {
	for pid, pi := range victims {
		if pi.zombie {
			continue
		}
		if now, ok := lookup(pid); !ok || now.start != pi.start || now.zombie {
			continue
		}
		signal(pid)
	}
}

// onlyLeaders reports whether every child of rukh is a registered leader:
// then nothing escaped (a leader's descendants are re-parented to rukh when
// it exits), and the ended invocation needs no scan of every process.
func onlyLeaders(self int, ended *tracked) bool {
	procs.mu.Lock()
	defer procs.mu.Unlock()
	return plat.onlyChildren(self, func(pid int) bool {
		_, ok := procs.live[pid]
		return ok || pid == ended.leader
	})
}

// tableIndex is a snapshot with its children lists.
type tableIndex struct {
	all      procTable
	children map[int][]int
}

func newTableIndex(all procTable) tableIndex {
	children := make(map[int][]int, len(all))
	for pid, pi := range all {
		children[pi.ppid] = append(children[pi.ppid], pid)
	}
	return tableIndex{all: all, children: children}
}

// closure adds root and every descendant of it to set.
func (x tableIndex) closure(set map[int]bool, root int) {
	if set[root] {
		return
	}
	set[root] = true
	for _, c := range x.children[root] {
		x.closure(set, c)
	}
}

// victimsOf is what cleanup kills for ended: with a subreaper, the part of
// rukh's subtree no other running invocation claims; without one, what is
// attributed to ended and claimed by no other. ended's own leader is left
// to os/exec.
func victimsOf(self int, ended *tracked) procTable {
	all := plat.snapshot()
	idx := newTableIndex(all)
	procs.mu.Lock()
	var others []*tracked
	for _, t := range procs.live {
		if t != ended {
			others = append(others, t)
		}
	}
	claimed := map[int]bool{self: true, ended.leader: true}
	mine := map[int]bool{}
	if plat.subreaper() {
		idx.closure(mine, self)
		for _, t := range others {
			idx.closure(claimed, t.leader)
		}
		// A running invocation also claims what is in its group or session
		// or carries its id, wherever it is in the subtree.
		if len(others) > 0 {
			for pid := range mine {
				pi := all[pid]
				for _, t := range others {
					if pi.pgid == t.leader || pi.sid == t.leader || t.id != "" && plat.marker(pid, "RUKH_INVOCATION_ID="+t.id) {
						idx.closure(claimed, pid)
						break
					}
				}
			}
		}
	} else {
		mine = attributed(idx, self, ended, true)
		for _, t := range others {
			for pid := range attributed(idx, self, t, true) {
				claimed[pid] = true
			}
		}
	}
	procs.mu.Unlock()
	victims := procTable{}
	for pid := range mine {
		if !claimed[pid] && pid != 1 {
			victims[pid] = all[pid]
		}
	}
	return victims
}

// attributed is every process of the snapshot that belongs to t: its
// leader, its group and session, what carries its RUKH_INVOCATION_ID or
// holds a descriptor rukh gave it (deep only: it reads each candidate's
// environment and descriptors), what was seen below it before, and the
// descendants of all these. Rukh itself never belongs to an invocation.
func attributed(idx tableIndex, self int, t *tracked, deep bool) map[int]bool {
	set := map[int]bool{}
	if _, ok := idx.all[t.leader]; ok {
		idx.closure(set, t.leader)
	}
	for pid, pi := range idx.all {
		if set[pid] || pid == self || pid == 1 {
			continue
		}
		own := pi.pgid == t.leader || pi.sid == t.leader
		if !own {
			if s, ok := t.seen[pid]; ok && s == pi.start {
				own = true
			}
		}
		// Environments and descriptors are read only for processes that
		// started after the leader: no older one can have them from it.
		// An orphan's parent is init or an older reaper: a process whose
		// parent is newer than the leader and not the invocation's is
		// someone else's child, and is not read.
		parent, hasParent := idx.all[pi.ppid]
		orphan := pi.ppid <= 1 || !hasParent || parent.start < t.start
		if s, ok := t.not[pid]; deep && !own && orphan && pi.start >= t.start && !pi.zombie && (!ok || s != pi.start) {
			own = t.id != "" && plat.marker(pid, "RUKH_INVOCATION_ID="+t.id) || plat.holds(pid, t.files)
			if own {
				t.seen[pid] = pi.start
			} else if t.not != nil {
				t.not[pid] = pi.start
			}
		}
		if own {
			idx.closure(set, pid)
		}
	}
	delete(set, self)
	return set
}

// closeInheritedFDsByList marks every listed descriptor above 2
// close-on-exec (dir lists the open descriptors by number).
func closeInheritedFDsByList(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
	return true
}
