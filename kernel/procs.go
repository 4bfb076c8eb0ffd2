package kernel

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Process hygiene: every process an invocation starts, however it forks,
// dies and is reaped before the invocation ends (docs/extension-protocol.md
// §6). The mechanism:
//
//   - rukh is a child subreaper, so a descendant whose parent exits is
//     re-parented to rukh instead of init: rukh's process subtree is exactly
//     the processes its invocations started.
//   - When an invocation ends, cleanup kills every process of that subtree
//     that no other running invocation claims, and reaps the ones that became
//     rukh's children. A running invocation claims its leader, the leader's
//     process group and session, every process whose environment carries its
//     RUKH_INVOCATION_ID, and every descendant of those.
//   - The leader gets SIGKILL when rukh dies (parent-death signal).
//   - Descriptors rukh inherited are marked close-on-exec once, so they never
//     reach a program.

// cleanupTimeout bounds the wait for killed processes to disappear (a
// process in uninterruptible sleep dies only when its I/O returns).
const cleanupTimeout = 5 * time.Second

var setupOnce sync.Once

// setupProcess makes rukh a subreaper and closes inherited descriptors for
// children, once per process.
func setupProcess() {
	setupOnce.Do(func() {
		unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
		closeInheritedFDs()
	})
}

// closeInheritedFDs marks every descriptor above 2 close-on-exec. Go opens
// its own files close-on-exec, so this only changes descriptors rukh
// inherited (exec 7</etc/hostname; rukh …); os/exec still passes the
// streams and ExtraFiles it is given, by dup2.
func closeInheritedFDs() {
	if unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	ents, err := os.ReadDir("/proc/self/fd") // kernels before 5.11
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}

// tracked is one running invocation's leader as cleanup sees it.
type tracked struct {
	id     string // RUKH_INVOCATION_ID; "" for passthrough programs
	leader int    // pid, process group id and, in a new session, session id
}

var procs struct {
	// startMu is held for reading while a child starts and is registered,
	// and for writing by cleanup: cleanup never sees a child rukh forked but
	// has not registered yet, nor reaps one os/exec waits for.
	startMu sync.RWMutex
	mu      sync.Mutex
	live    map[int]*tracked // by leader pid
}

// startTracked starts cmd and registers it. It starts it from whichever
// thread the caller runs on: Go ties the parent-death signal to the thread
// that forked the child, and the runtime ends a thread only when a
// goroutine locked to it returns, which nothing in rukh does
// (TestNothingLocksAThread). Forking here, not on one thread kept for it,
// spares every call two thread hand-offs.
func startTracked(cmd *exec.Cmd, id string) (*tracked, error) {
	setupProcess()
	procs.startMu.RLock()
	defer procs.startMu.RUnlock()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	t := &tracked{id: id, leader: cmd.Process.Pid}
	procs.mu.Lock()
	if procs.live == nil {
		procs.live = map[int]*tracked{}
	}
	procs.live[t.leader] = t
	procs.mu.Unlock()
	return t, nil
}

// untrack forgets t once os/exec reaped its leader.
func untrack(t *tracked) {
	procs.mu.Lock()
	delete(procs.live, t.leader)
	procs.mu.Unlock()
}

// procInfo is what cleanup reads from /proc/PID/stat.
type procInfo struct {
	ppid, pgid, sid int
	zombie          bool
}

// scanProcs reads every process's parent, group and session.
func scanProcs() map[int]procInfo {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	m := make(map[int]procInfo, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pi, ok := readStat(pid); ok {
			m[pid] = pi
		}
	}
	return m
}

// readStat parses /proc/PID/stat; the command name may hold spaces and
// parentheses, so fields are counted after its last ')'.
func readStat(pid int) (procInfo, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := bytes.Fields(b[i+1:]) // state ppid pgrp session …
	if len(f) < 4 {
		return procInfo{}, false
	}
	ppid, _ := strconv.Atoi(string(f[1]))
	pgid, _ := strconv.Atoi(string(f[2]))
	sid, _ := strconv.Atoi(string(f[3]))
	return procInfo{ppid: ppid, pgid: pgid, sid: sid, zombie: string(f[0]) == "Z" || string(f[0]) == "X"}, true
}

// hasMarker reports whether pid's environment names invocation id.
func hasMarker(pid int, id string) bool {
	if id == "" {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	m := []byte("RUKH_INVOCATION_ID=" + id)
	for _, kv := range bytes.Split(b, []byte{0}) {
		if bytes.Equal(kv, m) {
			return true
		}
	}
	return false
}

// subtree is every descendant of root, with its children lists.
func subtree(all map[int]procInfo, root int) (members []int, children map[int][]int) {
	children = map[int][]int{}
	for pid, pi := range all {
		children[pi.ppid] = append(children[pi.ppid], pid)
	}
	queue := append([]int(nil), children[root]...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		members = append(members, pid)
		queue = append(queue, children[pid]...)
	}
	return members, children
}

// cleanup kills and reaps, after t's leader exited (it is a zombie os/exec
// will reap), every process of rukh's subtree that no other running
// invocation claims: t's own descendants wherever they went, and any
// process that escaped every claim. It returns once they are gone, or
// after cleanupTimeout.
func cleanup(t *tracked) {
	self := os.Getpid()
	deadline := time.Now().Add(cleanupTimeout)
	for pause := time.Millisecond; cleanupRound(self, t) && time.Now().Before(deadline); pause = min(2*pause, 20*time.Millisecond) {
		time.Sleep(pause)
	}
}

// cleanupRound kills the unclaimed processes, reaps those that are rukh's
// children, and reports whether any was left to kill.
func cleanupRound(self int, t *tracked) bool {
	procs.startMu.Lock()
	defer procs.startMu.Unlock()
	if onlyLeaders(self, t) {
		return false
	}
	victims := unclaimed(self, t)
	for pid, pi := range victims {
		if !pi.zombie {
			unix.Kill(pid, unix.SIGKILL)
		}
	}
	for pid, pi := range victims {
		if pi.ppid == self {
			var info unix.Siginfo
			unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG, nil)
		}
	}
	return len(victims) > 0
}

// onlyLeaders reports whether every child of rukh is a registered leader:
// then nothing escaped (a leader's descendants are re-parented to rukh when
// it exits), and the ended invocation needs no scan of every process.
//
// A thread's children file lists the children it forked, and Linux
// re-parents an orphan to the first living thread of its reaper: the main
// thread, which Go never ends. Only rukh's starts fork, and each of those
// children is a leader, registered (under startMu) before anyone looks; so
// every child that is not a leader, the only kind that can mean an escape,
// is in the main thread's file, and that one file is read, not one per
// thread.
func onlyLeaders(self int, ended *tracked) bool {
	var buf [512]byte
	procs.mu.Lock()
	defer procs.mu.Unlock()
	b, err := readProcFile(buf[:0], "/proc/"+strconv.Itoa(self)+"/task/"+strconv.Itoa(self)+"/children")
	if err != nil {
		return false // no children files in this kernel: scan
	}
	for _, f := range bytes.Fields(b) {
		pid, _ := strconv.Atoi(string(f))
		if _, ok := procs.live[pid]; !ok && pid != ended.leader {
			return false
		}
	}
	return true
}

// readProcFile reads a small /proc file into dst with plain system calls:
// open, reads, close (os.ReadFile adds a stat and a try at the poller).
func readProcFile(dst []byte, path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := unix.Read(fd, dst[len(dst):cap(dst)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return dst, nil
		}
		dst = dst[:len(dst)+n]
	}
}

// unclaimed is the part of self's subtree no running invocation but ended
// claims. ended's own leader is left to os/exec.
func unclaimed(self int, ended *tracked) map[int]procInfo {
	all := scanProcs()
	members, children := subtree(all, self)
	procs.mu.Lock()
	var others []*tracked
	for _, t := range procs.live {
		if t != ended {
			others = append(others, t)
		}
	}
	procs.mu.Unlock()

	claimed := map[int]bool{ended.leader: true}
	var claim func(pid int)
	claim = func(pid int) {
		if claimed[pid] {
			return
		}
		claimed[pid] = true
		for _, c := range children[pid] {
			claim(c)
		}
	}
	for _, t := range others {
		claim(t.leader)
	}
	if len(others) > 0 {
		for _, pid := range members {
			pi := all[pid]
			for _, t := range others {
				if pi.pgid == t.leader || pi.sid == t.leader || hasMarker(pid, t.id) {
					claim(pid)
					break
				}
			}
		}
	}
	victims := map[int]procInfo{}
	for _, pid := range members {
		if !claimed[pid] {
			victims[pid] = all[pid]
		}
	}
	return victims
}
