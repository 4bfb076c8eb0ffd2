//go:build unix

package kernel

import (
	"context"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakeRecorder keeps what the process layer hands it.
type fakeRecorder struct {
	mu       sync.Mutex
	recorded map[int]uint64
	ids      map[string]bool
	ended    []string
}

func (r *fakeRecorder) Record(id string, leader int, ps []Process) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range ps {
		if p.PID == leader {
			panic("the leader is recorded")
		}
		r.recorded[p.PID] = p.Start
	}
	r.ids[id] = true
}

func (r *fakeRecorder) Ended(id string, leader int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = append(r.ended, id)
}

func (r *fakeRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.recorded)
}

// TestRecorderSeesEscapees: while an invocation runs, what it starts beyond
// its leader, escapees included, reaches the recorder, and its end is
// reported once; a call with only its leader never reaches it. Not
// parallel: the double fork's escapee is claimed by no invocation, so the
// end of another test's call would kill it.
func TestRecorderSeesEscapees(t *testing.T) {
	rec := &fakeRecorder{recorded: map[int]uint64{}, ids: map[string]bool{}}
	r := NewRunner()
	r.Recorder = rec
	r.NoNamespaces = true // in namespaces the kernel contains, and nothing is recorded

	if res := r.Invoke(context.Background(), fakeInvocation(t, "text", textDecl)); res.Outcome != Succeeded {
		t.Fatalf("text: %s %s", res.Outcome, res.Reason)
	}
	if rec.count() != 0 || len(rec.ended) != 0 {
		t.Fatalf("a call with only its leader reached the recorder: %v %v", rec.recorded, rec.ended)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inv := fakeInvocation(t, "escape-hang", textDecl)
	inv.ID = "inv_recordertest"
	inv.Limits.Timeout = 10 * time.Minute // only the sampler, not a stop, may record
	done := make(chan Result, 1)
	go func() { done <- r.Invoke(ctx, inv) }()
	// the setsid escapee, the double fork's middle (if seen) and its escapee
	for deadline := time.Now().Add(time.Minute); rec.count() < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("recorded %v within a minute, want the two escapees", rec.recorded)
		}
	}
	cancel()
	<-done
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if !rec.ids[inv.ID] || len(rec.ended) != 1 || rec.ended[0] != inv.ID {
		t.Errorf("ids %v, ended %v; want %s recorded and ended once", rec.ids, rec.ended, inv.ID)
	}
	for pid, start := range rec.recorded {
		if Alive(Process{pid, start}) {
			t.Errorf("recorded process %d still runs after the invocation", pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// TestSweep: Sweep kills a recorded process only while its pid and start
// time both match, and what carries a recorded invocation id; never itself.
// Not parallel: its sleepers are below this process, which the end of
// another test's call would clean up.
func TestSweep(t *testing.T) {
	self, ok := Self()
	if !ok {
		t.Fatal("no start time for this process")
	}
	start := func(env ...string) (*exec.Cmd, Process, <-chan struct{}) {
		cmd := exec.Command("sleep", "60")
		cmd.Env = env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill() })
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		var p Process
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
			// sleep's own start: after exec the pid is the same process
			if p, ok = Identify(cmd.Process.Pid); ok || time.Now().After(deadline) {
				break
			}
		}
		return cmd, p, exited
	}
	diesSoon := func(exited <-chan struct{}) bool {
		select {
		case <-exited:
			return true
		case <-time.After(30 * time.Second):
			return false
		}
	}
	stillRuns := func(exited <-chan struct{}) bool {
		select {
		case <-exited:
			return false
		case <-time.After(100 * time.Millisecond):
			return true
		}
	}
	tests := []struct {
		name   string
		env    []string
		owner  func(p Process) Process
		record func(p Process) ([]Process, []string)
		killed bool
	}{
		{"pid and start match", nil, func(Process) Process { return Process{PID: 1 << 30} },
			func(p Process) ([]Process, []string) { return []Process{p}, nil }, true},
		{"recycled pid: other start time", nil, func(Process) Process { return Process{PID: 1 << 30} },
			func(p Process) ([]Process, []string) { return []Process{{p.PID, p.Start + 1}}, nil }, false},
		{"its invocation id", []string{"RUKH_INVOCATION_ID=inv_sweeptest1"}, func(Process) Process { return self },
			func(Process) ([]Process, []string) { return nil, []string{"inv_sweeptest1"} }, true},
		{"another invocation's id", []string{"RUKH_INVOCATION_ID=inv_sweeptest2"}, func(Process) Process { return self },
			func(Process) ([]Process, []string) { return nil, []string{"inv_sweeptest3"} }, false},
		{"its id, but older than the owner", []string{"RUKH_INVOCATION_ID=inv_sweeptest4"}, func(p Process) Process { return Process{PID: 1 << 30, Start: p.Start + 1} },
			func(Process) ([]Process, []string) { return nil, []string{"inv_sweeptest4"} }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, p, exited := start(tt.env...)
			ps, ids := tt.record(p)
			killed := Sweep(tt.owner(p), ps, ids)
			if tt.killed {
				if len(killed) != 1 || killed[0] != p || !diesSoon(exited) {
					t.Errorf("killed %v, want %v dead", killed, p)
				}
			} else if len(killed) != 0 || !stillRuns(exited) {
				t.Errorf("killed %v, want nothing", killed)
			}
		})
	}
	if k := Sweep(self, []Process{self}, nil); len(k) != 0 {
		t.Errorf("Sweep killed itself: %v", k)
	}
}

// nopRecorder records nothing: the benchmark measures the process layer's
// side of recording.
type nopRecorder struct{}

func (nopRecorder) Record(string, int, []Process) {}
func (nopRecorder) Ended(string, int)             {}

// BenchmarkInvokeRecorder: a trivial call without and with a recorder,
// side by side in one run (docs/performance.md).
func BenchmarkInvokeRecorder(b *testing.B) {
	for _, tt := range []struct {
		name string
		rec  ProcessRecorder
	}{{"without", nil}, {"with", nopRecorder{}}} {
		b.Run(tt.name, func(b *testing.B) {
			r := NewRunner()
			r.Recorder = tt.rec
			inv := fakeInvocation(b, "text", textDecl)
			for b.Loop() {
				if res := r.Invoke(context.Background(), inv); res.Outcome != Succeeded {
					b.Fatal(res.Reason)
				}
			}
		})
	}
}
