package home

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/rukh-dev/rukh/kernel"
	"golang.org/x/sys/unix"
)

// The recorded sweep: while a rukh process runs invocations, what they
// start beyond their leaders is appended to one small file of its own in
// the home (processes/PID-START, named by the owner's pid and start time);
// the file goes when the process ends cleanly. A rukh killed by SIGKILL
// leaves its file, and the next rukh process on the home, or `rukh
// doctor`, kills what the file names and still runs, then removes it.
//
// The file is written without fsync (a SIGKILL of rukh is not a crash of
// the machine) and is held under an exclusive flock while its owner lives,
// so two sweepers never sweep one file at once and nobody sweeps a living
// owner's.

const (
	processesHeader = "rukh.processes/1"
	// maxSweepRecords and maxRecordBytes bound one sweep.
	maxSweepRecords = 32
	maxRecordBytes  = 1 << 20
)

func (h *Home) processesDir() string { return filepath.Join(h.Store.Home(), "processes") }

// ProcessLog is this rukh process's record; it is the Runner's
// kernel.ProcessRecorder.
type ProcessLog struct {
	dir string

	mu     sync.Mutex
	f      *os.File
	failed bool
	open   map[int]bool // leaders with entries not ended yet
}

var _ kernel.ProcessRecorder = (*ProcessLog)(nil)

// RecordProcesses makes h's Runner record its invocations' processes
// beyond their leaders; Close the log when the process ends cleanly.
func (h *Home) RecordProcesses() *ProcessLog {
	l := &ProcessLog{dir: h.processesDir(), open: map[int]bool{}}
	if h.Runner != nil {
		h.Runner.Recorder = l
	}
	return l
}

// create opens the record on first use. A home that cannot take it only
// loses the sweep, never a call.
func (l *ProcessLog) create() bool {
	if l.f != nil || l.failed {
		return l.f != nil
	}
	l.failed = true
	self, ok := kernel.Self()
	if !ok || os.MkdirAll(l.dir, 0o700) != nil {
		return false
	}
	f, err := os.OpenFile(filepath.Join(l.dir, fmt.Sprintf("%d-%d", self.PID, self.Start)), os.O_CREATE|os.O_TRUNC|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return false
	}
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		f.Close()
		return false
	}
	l.f, l.failed = f, false
	l.writeHeader()
	return true
}

func (l *ProcessLog) writeHeader() {
	host, _ := os.Hostname()
	fmt.Fprintf(l.f, "%s %s\n", processesHeader, orDash(host))
}

func orDash(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\n") {
		return "-"
	}
	return s
}

// Record appends one line per process: "+ ID LEADER PID START".
func (l *ProcessLog) Record(id string, leader int, ps []kernel.Process) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.create() {
		return
	}
	var b []byte
	for _, p := range ps {
		b = fmt.Appendf(b, "+ %s %d %d %d\n", orDash(id), leader, p.PID, p.Start)
	}
	l.f.Write(b)
	l.open[leader] = true
}

// Ended appends "- ID LEADER"; once no invocation has entries left the
// record is emptied, so a long-lived server's stays small.
func (l *ProcessLog) Ended(id string, leader int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return
	}
	delete(l.open, leader)
	if len(l.open) == 0 && l.f.Truncate(0) == nil {
		l.writeHeader()
		return
	}
	fmt.Fprintf(l.f, "- %s %d\n", orDash(id), leader)
}

// Close removes the record: this process ends cleanly, and every
// invocation's processes were killed with it.
func (l *ProcessLog) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		os.Remove(l.f.Name())
		l.f.Close()
		l.f = nil
	}
	l.failed = true
}

// SweepReport is what one or more sweeps did.
type SweepReport struct {
	// Records is how many records of rukh processes that are gone were swept.
	Records int `json:"records"`
	// Killed are the processes they left running, killed now.
	Killed []kernel.Process `json:"killed,omitempty"`
	// Removed are the scratch directories and pids cgroups confined calls
	// of killed rukh processes left, removed now.
	Removed  []string `json:"removed,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

func (r *SweepReport) add(o SweepReport) {
	r.Records += o.Records
	r.Killed = append(r.Killed, o.Killed...)
	r.Removed = append(r.Removed, o.Removed...)
	r.Warnings = append(r.Warnings, o.Warnings...)
}

// SweepProcesses kills what rukh processes killed on this home left
// running, from their records, and removes the records. A record whose
// owner still runs, or that another sweeper holds, is left alone. Nothing
// to sweep costs one directory read; failures are warnings, never errors.
// What it did is also kept for Doctor.
func (h *Home) SweepProcesses() SweepReport {
	rep := sweepDir(h.processesDir())
	removed, warnings := kernel.SweepLeftovers()
	rep.Removed, rep.Warnings = append(rep.Removed, removed...), append(rep.Warnings, warnings...)
	h.swept.add(rep)
	return rep
}

func sweepDir(dir string) (rep SweepReport) {
	warn := func(format string, args ...any) {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf(format, args...))
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return rep
	} else if err != nil {
		warn("cannot read %s to sweep processes left by a killed rukh: %v", dir, err)
		return rep
	}
	if err := ownedByMe(dir, true); err != nil {
		warn("processes left by a killed rukh are not swept: %v", err)
		return rep
	}
	self, _ := kernel.Self()
	host, _ := os.Hostname()
	n := 0
	for _, e := range ents {
		owner, ok := parseRecordName(e.Name())
		if !ok || owner == self || kernel.Alive(owner) {
			continue
		}
		if n++; n > maxSweepRecords {
			break // the next start sweeps the rest
		}
		killed, swept, err := sweepRecord(filepath.Join(dir, e.Name()), owner, orDash(host))
		if err != nil {
			warn("cannot sweep %s: %v", filepath.Join(dir, e.Name()), err)
		}
		if swept {
			rep.Records++
			rep.Killed = append(rep.Killed, killed...)
		}
	}
	return rep
}

func parseRecordName(name string) (kernel.Process, bool) {
	pid, start, ok := strings.Cut(name, "-")
	p, err1 := strconv.Atoi(pid)
	s, err2 := strconv.ParseUint(start, 10, 64)
	return kernel.Process{PID: p, Start: s}, ok && err1 == nil && err2 == nil && p > 0
}

// ownedByMe refuses what another user owns or can write: a record names
// processes to kill.
func ownedByMe(path string, dir bool) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	uid := -1
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		uid = int(st.Uid)
	}
	if fi.IsDir() != dir || !dir && !fi.Mode().IsRegular() || uid != os.Geteuid() || fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s is not this user's alone (owner %d, mode %v)", path, uid, fi.Mode())
	}
	return nil
}

// sweepRecord kills what one record of a gone owner names and removes it;
// swept is false when the record is left (another sweeper holds it, or it
// is another machine's).
func sweepRecord(path string, owner kernel.Process, host string) (killed []kernel.Process, swept bool, err error) {
	if err := ownedByMe(path, false); err != nil {
		return nil, false, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = nil // swept by another rukh just now
		}
		return nil, false, err
	}
	defer f.Close()
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return nil, false, nil // its owner or another sweeper holds it
	}
	ps, ids, recHost := parseRecord(io.LimitReader(f, maxRecordBytes))
	if recHost != "" && recHost != host {
		return nil, false, nil // another machine's, on a home they share
	}
	killed = kernel.Sweep(owner, ps, ids)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return killed, true, err
	}
	return killed, true, nil
}

// parseRecord reads a record: its host, and the processes and invocation
// ids of the invocations that had not ended. Lines it does not know (a
// torn last line) are skipped.
func parseRecord(r io.Reader) (ps []kernel.Process, ids []string, host string) {
	type entry struct {
		leader string
		p      kernel.Process
		id     string
	}
	var entries []entry
	sc := bufio.NewScanner(r)
	for first := true; sc.Scan(); first = false {
		f := strings.Fields(sc.Text())
		switch {
		case first && len(f) == 2 && f[0] == processesHeader:
			host = f[1]
		case len(f) == 5 && f[0] == "+":
			pid, err1 := strconv.Atoi(f[3])
			start, err2 := strconv.ParseUint(f[4], 10, 64)
			if err1 == nil && err2 == nil && pid > 1 {
				entries = append(entries, entry{f[2], kernel.Process{PID: pid, Start: start}, f[1]})
			}
		case len(f) == 3 && f[0] == "-": // a later invocation may reuse the leader's pid
			entries = slices.DeleteFunc(entries, func(e entry) bool { return e.leader == f[2] })
		}
	}
	seen := map[string]bool{"-": true}
	for _, e := range entries {
		ps = append(ps, e.p)
		if !seen[e.id] {
			seen[e.id] = true
			ids = append(ids, e.id)
		}
	}
	return ps, ids, host
}
