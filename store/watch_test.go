package store_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/rukh-dev/rukh/store"
)

// watcher runs WatchActive in the background and hands over what it reports.
func watcher(t *testing.T, s *store.Store) <-chan uint64 {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan uint64, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.WatchActive(ctx, func(n uint64) { got <- n })
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("WatchActive did not return after its context ended")
		}
	})
	return got
}

func next(t *testing.T, got <-chan uint64, within time.Duration) (uint64, bool) {
	t.Helper()
	select {
	case n := <-got:
		return n, true
	case <-time.After(within):
		return 0, false
	}
}

func TestWatchActiveSeesPublishes(t *testing.T) {
	s := mustStore(t)
	mustPut(t, s, rel("a", "1.0.0"))
	got := watcher(t, s)
	if n, ok := next(t, got, 30*time.Second); !ok || n != 0 {
		t.Fatalf("first report = %d, %v; want 0 (nothing published)", n, ok)
	}
	for want := uint64(1); want <= 3; want++ {
		publish(t, s, "b", "h1:a@1.0.0")
		// A file notification wakes it, or the next poll.
		n, ok := next(t, got, 30*time.Second)
		if !ok || n != want {
			t.Fatalf("after publish %d: report = %d, %v", want, n, ok)
		}
	}
	if store.WatchKindForTest != "poll" {
		// Idle, the watch waits on file notifications: no read at all,
		// however long.
		// A publish closes the file after each of its transactions; a read
		// woken by an earlier close may already see the new revision, and
		// the last close then wakes one more, later on a loaded machine:
		// wait for the reads to stop first.
		for settled := store.WatchReadsForTest(); ; {
			time.Sleep(300 * time.Millisecond)
			now := store.WatchReadsForTest()
			if now == settled {
				break
			}
			settled = now
		}
		before := store.WatchReadsForTest()
		time.Sleep(5 * store.PollInterval / 2)
		if reads := store.WatchReadsForTest() - before; reads != 0 {
			t.Fatalf("an idle watch read the store %d times in %v", reads, 5*store.PollInterval/2)
		}
	}
	// A write that does not move the active revision reports nothing.
	mustPut(t, s, rel("b", "1.0.0"))
	if n, ok := next(t, got, 3*store.PollInterval/2); ok {
		t.Fatalf("a write that publishes nothing reported %d", n)
	}
}

// A server started on a home that does not exist yet still notices the
// first publish, and creates nothing while it waits.
func TestWatchActiveMissingHome(t *testing.T) {
	home := filepath.Join(t.TempDir(), "later")
	s := store.New(home)
	got := watcher(t, s)
	if n, ok := next(t, got, 30*time.Second); !ok || n != 0 {
		t.Fatalf("first report = %d, %v; want 0", n, ok)
	}
	time.Sleep(store.PollInterval + 100*time.Millisecond)
	if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Fatalf("watching created the home: %v", err)
	}
	mustPut(t, s, rel("a", "1.0.0"))
	publish(t, s, "b", "h1:a@1.0.0")
	if n, ok := next(t, got, 30*time.Second); !ok || n != 1 {
		t.Fatalf("after the first publish: report = %d, %v; want 1", n, ok)
	}
	publish(t, s, "b", "h1:a@1.0.0")
	if n, ok := next(t, got, 30*time.Second); !ok || n != 2 {
		t.Fatalf("after the second publish: report = %d, %v; want 2", n, ok)
	}
}

// portableBuild is set by the rukh_portable build, which must watch the
// way other platforms fall back to.
var portableBuild bool

// The watch is the kind the build says, and a portable build on Linux
// really holds no inotify descriptor.
func TestWatchKind(t *testing.T) {
	want := map[string]string{"linux": "inotify", "darwin": "kqueue", "freebsd": "kqueue"}[runtime.GOOS]
	if portableBuild && runtime.GOOS == "linux" {
		want = "poll"
	}
	if want != "" && store.WatchKindForTest != want {
		t.Fatalf("watch kind = %q; want %q", store.WatchKindForTest, want)
	}
	if runtime.GOOS != "linux" {
		return
	}
	s := fileStore(t)
	mustPut(t, s, rel("a", "1.0.0"))
	inotifyFDs := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range ents {
			if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == "anon_inode:inotify" {
				n++
			}
		}
		return n
	}
	before := inotifyFDs()
	got := watcher(t, s)
	if _, ok := next(t, got, 5*time.Second); !ok {
		t.Fatal("no first report")
	}
	// The first report may come before the watch is set up.
	deadline := time.Now().Add(5 * time.Second)
	for inotifyFDs() == before && store.WatchKindForTest == "inotify" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(2 * store.PollInterval)
	watching := inotifyFDs() - before
	if (store.WatchKindForTest == "inotify") != (watching > 0) {
		t.Fatalf("a %s watch holds %d inotify descriptors", store.WatchKindForTest, watching)
	}
}
