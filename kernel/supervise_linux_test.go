//go:build linux && !rukh_portable

package kernel

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Calls waiting on their programs park goroutines in the runtime's
// poller: none holds a thread blocked in ppoll.
func TestSuperviseWaitHoldsNoThread(t *testing.T) {
	const calls = 16
	r := fastRunner()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var progressed, done sync.WaitGroup
	progressed.Add(calls)
	results := make(chan Result, calls)
	for range calls {
		inv := fakeInvocation(t, "progress-hang", textDecl)
		var once sync.Once
		inv.OnProgress = func(Progress) { once.Do(progressed.Done) }
		done.Go(func() { results <- r.Invoke(ctx, inv) })
	}
	progressed.Wait()
	time.Sleep(50 * time.Millisecond) // every call back in its wait
	if n := threadsIn(t, unix.SYS_PPOLL); n >= calls/2 {
		t.Errorf("%d threads blocked in ppoll with %d calls waiting", n, calls)
	}
	cancel()
	done.Wait()
	close(results)
	for res := range results {
		if res.Outcome != Cancelled {
			t.Errorf("outcome %s (%s), want cancelled", res.Outcome, res.Reason)
		}
	}
}

// threadsIn counts this process's threads blocked in system call nr.
func threadsIn(t *testing.T, nr int) int {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/syscall")
	if err != nil || len(tasks) == 0 {
		t.Fatalf("no tasks: %v", err)
	}
	n := 0
	for _, p := range tasks {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread ended
		}
		f := strings.Fields(string(b))
		if len(f) > 0 && f[0] == strconv.Itoa(nr) {
			n++
		}
	}
	return n
}

// A call's epoll descriptor goes back for reuse with nothing registered,
// whatever ended the call: its report, a violation, a crash, a deadline,
// output to EOF.
func TestSuperviseWaitReleasesRegistrations(t *testing.T) {
	r := fastRunner()
	for _, b := range []string{"text", "second-report", "crash", "progress", "invalid-json", "hang"} {
		inv := fakeInvocation(t, b, textDecl)
		inv.Stderr = NewDiagnostics(1 << 10)
		if b == "hang" {
			inv.Limits.Timeout = 100 * time.Millisecond
		}
		r.Invoke(context.Background(), inv)
	}
	callWaits.mu.Lock()
	defer callWaits.mu.Unlock()
	if len(callWaits.free) == 0 {
		t.Fatal("no epoll descriptor was kept for reuse")
	}
	for _, c := range callWaits.free {
		b, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(c.fd))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "tfd:") {
			t.Errorf("a released epoll descriptor still watches:\n%s", b)
		}
	}
}

// TestSuperviseWaitRefused: a descriptor epoll refuses (here a regular
// file) is not reported ready in the poller's name: the wait says so,
// waiting for nothing, and the call goes on with ppoll, which reports it
// as poll does; the epoll descriptor is given back watching nothing.
func TestSuperviseWaitRefused(t *testing.T) {
	f, err := os.Open("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	c := takeCallWait()
	if c == nil {
		t.Skip("no epoll descriptor in the poller here")
	}
	fds := []unix.PollFd{{Fd: int32(r.Fd()), Events: unix.POLLIN}, {Fd: int32(f.Fd()), Events: unix.POLLIN}}
	if err := c.wait(fds, time.Now().Add(time.Minute)); err != errWaitRefused {
		t.Fatalf("a regular file in the poll: wait says %v, want errWaitRefused", err)
	}
	if fds[0].Revents != 0 || fds[1].Revents != 0 {
		t.Errorf("a refused wait reported descriptors ready: %+v", fds)
	}
	c.release()
	b, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(c.fd))
	if err == nil && strings.Contains(string(b), "tfd:") {
		t.Errorf("the epoll descriptor given back still watches:\n%s", b)
	}
}
