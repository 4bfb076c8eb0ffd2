//go:build unix

package home

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
)

// sleeper is a process the test may see killed: sleep, in its own group.
type sleeper struct {
	p      kernel.Process
	exited chan struct{}
}

func startSleeper(t *testing.T, env ...string) sleeper {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	s := sleeper{exited: make(chan struct{})}
	go func() { cmd.Wait(); close(s.exited) }()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		p, ok := kernel.Identify(cmd.Process.Pid)
		if ok || time.Now().After(deadline) {
			s.p = p
			return s
		}
	}
}

func (s sleeper) dies() bool {
	select {
	case <-s.exited:
		return true
	case <-time.After(30 * time.Second):
		return false
	}
}

func (s sleeper) runs() bool {
	select {
	case <-s.exited:
		return false
	case <-time.After(100 * time.Millisecond):
		return true
	}
}

// TestSweepProcesses: a record is swept only when its owner is gone, and
// then only what still runs with the recorded start time is killed.
func TestSweepProcesses(t *testing.T) {
	host, _ := os.Hostname()
	gone := kernel.Process{PID: 1 << 30, Start: 1} // no such process
	tests := []struct {
		name    string
		owner   func(victim, other sleeper) kernel.Process
		lines   func(victim sleeper) string
		killed  bool
		removed bool
	}{
		{"owner gone: the recorded process is killed",
			func(_, _ sleeper) kernel.Process { return gone },
			func(v sleeper) string { return fmt.Sprintf("+ inv_x 7 %d %d\n", v.p.PID, v.p.Start) }, true, true},
		{"owner alive: left alone",
			func(_, o sleeper) kernel.Process { return o.p },
			func(v sleeper) string { return fmt.Sprintf("+ inv_x 7 %d %d\n", v.p.PID, v.p.Start) }, false, false},
		{"recycled pid: same pid, other start time, never killed",
			func(_, _ sleeper) kernel.Process { return gone },
			func(v sleeper) string { return fmt.Sprintf("+ inv_x 7 %d %d\n", v.p.PID, v.p.Start+1) }, false, true},
		{"recycled owner pid: other start time, so gone",
			func(_, o sleeper) kernel.Process { return kernel.Process{PID: o.p.PID, Start: o.p.Start + 1} },
			func(v sleeper) string { return fmt.Sprintf("+ inv_x 7 %d %d\n", v.p.PID, v.p.Start) }, true, true},
		{"ended invocation: its entries are not killed",
			func(_, _ sleeper) kernel.Process { return gone },
			func(v sleeper) string { return fmt.Sprintf("+ inv_x 7 %d %d\n- inv_x 7\n", v.p.PID, v.p.Start) }, false, true},
		{"another machine's record: left alone",
			func(_, _ sleeper) kernel.Process { return gone },
			func(v sleeper) string {
				return fmt.Sprintf("rukh.processes/1 other-%s\n+ inv_x 7 %d %d\n", host, v.p.PID, v.p.Start)
			}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &Home{Store: store.New(t.TempDir())}
			victim, other := startSleeper(t), startSleeper(t)
			owner := tt.owner(victim, other)
			dir := h.processesDir()
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			rec := filepath.Join(dir, fmt.Sprintf("%d-%d", owner.PID, owner.Start))
			body := tt.lines(victim)
			if body[0] == '+' {
				body = fmt.Sprintf("rukh.processes/1 %s\n", orDash(host)) + body
			}
			if err := os.WriteFile(rec, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			rep := h.SweepProcesses()
			if len(rep.Warnings) != 0 {
				t.Errorf("warnings: %v", rep.Warnings)
			}
			if tt.killed != (len(rep.Killed) == 1) {
				t.Errorf("killed %v, want killed=%v", rep.Killed, tt.killed)
			}
			if tt.killed && !victim.dies() || !tt.killed && !victim.runs() {
				t.Errorf("victim killed=%v, want %v", !tt.killed, tt.killed)
			}
			if !other.runs() {
				t.Error("the owner was killed")
			}
			if _, err := os.Stat(rec); tt.removed != os.IsNotExist(err) {
				t.Errorf("record removed=%v, want %v", os.IsNotExist(err), tt.removed)
			}
		})
	}
}

// TestSweepProcessesUnsafeDir: records another user could have written
// are not trusted to name processes to kill.
func TestSweepProcessesUnsafeDir(t *testing.T) {
	h := &Home{Store: store.New(t.TempDir())}
	victim := startSleeper(t)
	dir := h.processesDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "1073741824-1"), fmt.Appendf(nil, "+ inv_x 7 %d %d\n", victim.p.PID, victim.p.Start), 0o600)
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	rep := h.SweepProcesses()
	if len(rep.Warnings) != 1 || len(rep.Killed) != 0 || !victim.runs() {
		t.Errorf("sweep of a directory others can write: %+v", rep)
	}
}

// TestProcessLog: the record exists once something beyond a leader was
// recorded, is emptied when every invocation ended, and goes on Close;
// what it holds is what a sweep reads.
func TestProcessLog(t *testing.T) {
	h := &Home{Store: store.New(t.TempDir()), Runner: kernel.NewRunner()}
	l := h.RecordProcesses()
	if h.Runner.Recorder != l {
		t.Fatal("the Runner does not record")
	}
	if ents, _ := os.ReadDir(h.processesDir()); len(ents) != 0 {
		t.Fatalf("a record before anything was recorded: %v", ents)
	}
	l.Record("inv_a", 10, []kernel.Process{{PID: 11, Start: 5}, {PID: 12, Start: 6}})
	l.Record("inv_b", 20, []kernel.Process{{PID: 21, Start: 7}})
	l.Ended("inv_a", 10)
	self, _ := kernel.Self()
	path := filepath.Join(h.processesDir(), fmt.Sprintf("%d-%d", self.PID, self.Start))
	read := func() ([]kernel.Process, []string) {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		ps, ids, _ := parseRecord(f)
		return ps, ids
	}
	if ps, ids := read(); len(ps) != 1 || ps[0] != (kernel.Process{PID: 21, Start: 7}) || len(ids) != 1 || ids[0] != "inv_b" {
		t.Errorf("record holds %v %v, want inv_b's process only", ps, ids)
	}
	l.Ended("inv_b", 20)
	if ps, ids := read(); len(ps) != 0 || len(ids) != 0 {
		t.Errorf("record holds %v %v after every invocation ended", ps, ids)
	}
	if rep := h.SweepProcesses(); rep.Records != 0 {
		t.Errorf("a living owner's record was swept: %+v", rep)
	}
	l.Close()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("record left after Close: %v", err)
	}
}
