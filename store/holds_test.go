package store_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
)

const digest = "h1:abc+/def=" // a digest's characters, "/" included

func wantInUse(t *testing.T, err error, pids ...int) *store.InUseError {
	t.Helper()
	wantCode(t, err, kernel.CodeConflict, "is in use by")
	var in *store.InUseError
	if !errors.As(err, &in) {
		t.Fatalf("%v is not an *InUseError", err)
	}
	if len(in.Holders) != len(pids) {
		t.Fatalf("holders = %v, want pids %v", in.Holders, pids)
	}
	for i, pid := range pids {
		if in.Holders[i].PID != pid {
			t.Fatalf("holders = %v, want pids %v", in.Holders, pids)
		}
	}
	return in
}

func TestHoldRefusesRemoval(t *testing.T) {
	s := mustStore(t)
	release, err := s.Hold(store.HoldRelease, digest)
	if err != nil {
		t.Fatal(err)
	}
	release2, err := s.Hold(store.HoldRelease, digest)
	if err != nil {
		t.Fatal(err)
	}
	removed := 0
	remove := func() error { removed++; return nil }
	in := wantInUse(t, s.TryRemoveHeld(store.HoldRelease, digest, remove), os.Getpid())
	if c := in.Holders[0].Command; !strings.HasPrefix(c, filepath.Base(os.Args[0])) {
		t.Errorf("holder command = %q, want the test binary's name", c)
	}
	if !strings.Contains(in.By(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Errorf("By() = %q", in.By())
	}
	// other things are not held
	if err := s.TryRemoveHeld(store.HoldRevision, digest, remove); err != nil || removed != 1 {
		t.Fatalf("removing an unheld revision: %v (removed %d)", err, removed)
	}
	if err := s.TryRemoveHeld(store.HoldRelease, "dev:"+digest, remove); err != nil || removed != 2 {
		t.Fatalf("removing an unheld dev copy: %v (removed %d)", err, removed)
	}
	release()
	wantInUse(t, s.TryRemoveHeld(store.HoldRelease, digest, remove), os.Getpid())
	release2()
	if err := s.TryRemoveHeld(store.HoldRelease, digest, remove); err != nil || removed != 3 {
		t.Fatalf("after the holds ended: %v (removed %d)", err, removed)
	}
	ents, _ := os.ReadDir(s.HoldsDir())
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), store.HoldRelease+"-") {
			t.Errorf("hold file %s outlived the removal", e.Name())
		}
	}
}

func TestRemoveHeldFailureKeepsNothingHeld(t *testing.T) {
	s := mustStore(t)
	boom := errors.New("boom")
	if err := s.TryRemoveHeld(store.HoldRevision, "r1", func() error { return boom }); err != boom {
		t.Fatalf("TryRemoveHeld = %v, want the remover's error", err)
	}
	release, err := s.Hold(store.HoldRevision, "r1")
	if err != nil {
		t.Fatal(err)
	}
	release()
}

// A Hold waits for a removal under way, and then holds a fresh file: the
// removal unlinked the one it had opened.
func TestHoldWaitsForRemoval(t *testing.T) {
	s := mustStore(t)
	started, held := make(chan struct{}), make(chan func())
	err := s.TryRemoveHeld(store.HoldRelease, digest, func() error {
		go func() {
			close(started)
			release, err := s.Hold(store.HoldRelease, digest)
			if err != nil {
				t.Error(err)
			}
			held <- release
		}()
		<-started
		waitForWaiter(t)
		select {
		case <-held:
			t.Fatal("Hold did not wait for the removal")
		default:
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	release := <-held
	defer release()
	wantInUse(t, s.TryRemoveHeld(store.HoldRelease, digest, func() error { return nil }), os.Getpid())
}

// waitForWaiter waits until this process has a blocked flock in /proc/locks.
func waitForWaiter(t *testing.T) {
	t.Helper()
	me := " " + strconv.Itoa(os.Getpid()) + " "
	for range 5000 {
		data, err := os.ReadFile("/proc/locks")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, "-> FLOCK") && strings.Contains(line, me) {
				return
			}
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the Hold never blocked")
}

// Holds are seen across processes and end when their process dies.
func TestHoldAcrossProcesses(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	s := store.New(home)
	cmd, out, stderr := helper(t, "hold-ref", home)
	if line, err := out.ReadString('\n'); err != nil || line != "held\n" {
		cmd.Process.Kill()
		t.Fatalf("helper: %q %v\n%s", line, err, stderr)
	}
	remove := func() error { return nil }
	in := wantInUse(t, s.TryRemoveHeld(store.HoldRelease, digest, remove), cmd.Process.Pid)
	if !strings.Contains(in.Holders[0].Command, "-test.run") {
		t.Errorf("holder command = %q, want the helper's command line", in.Holders[0].Command)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if err := s.TryRemoveHeld(store.HoldRelease, digest, remove); err != nil {
		t.Fatalf("after the holder died: %v", err)
	}
}

func holdRefForever(home string) {
	if _, err := store.New(home).Hold(store.HoldRelease, digest); err != nil {
		fail("hold: %v", err)
	}
	fmt.Println("held")
	for {
		time.Sleep(time.Hour) // until killed
	}
}

// TestHoldsShareOneFile: holds of one thing taken at once by one handle
// share one open hold file (one lock), and releasing a hold twice does not
// release another's.
func TestHoldsShareOneFile(t *testing.T) {
	s := mustStore(t)
	open := func() int {
		n := 0
		ents, _ := os.ReadDir("/proc/self/fd")
		for _, e := range ents {
			if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && strings.HasPrefix(target, s.HoldsDir()) {
				n++
			}
		}
		return n
	}
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd here")
	}
	var releases []func()
	for range 8 {
		release, err := s.Hold(store.HoldRelease, digest)
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, release)
	}
	if n := open(); n != 1 {
		t.Fatalf("8 holds of one release keep %d hold files open, want 1", n)
	}
	remove := func() error { return nil }
	for i, release := range releases[:7] {
		release()
		release() // a second release is no release
		if i < 6 {
			continue
		}
		wantInUse(t, s.TryRemoveHeld(store.HoldRelease, digest, remove), os.Getpid())
	}
	releases[7]()
	// The file stays open for the next hold, unlocked: removal works.
	if n := open(); n > 1 {
		t.Fatalf("%d hold files open after every hold ended, want at most 1", n)
	}
	if err := s.TryRemoveHeld(store.HoldRelease, digest, remove); err != nil {
		t.Fatalf("after the holds ended: %v", err)
	}
}

// TestHoldAfterRemoval: a hold file kept open between holds, removed
// meanwhile, is not what the next hold locks: that one locks the path
// afresh, so a removal is refused again.
func TestHoldAfterRemoval(t *testing.T) {
	s := mustStore(t)
	remove := func() error { return nil }
	for round := range 3 {
		release, err := s.Hold(store.HoldRelease, digest)
		if err != nil {
			t.Fatal(err)
		}
		wantInUse(t, s.TryRemoveHeld(store.HoldRelease, digest, remove), os.Getpid())
		release()
		if err := s.TryRemoveHeld(store.HoldRelease, digest, remove); err != nil {
			t.Fatalf("round %d: removing an unheld release: %v", round, err)
		}
	}
	// Many things held one after another: the kept files stay few.
	fds := func() int { ents, _ := os.ReadDir("/proc/self/fd"); return len(ents) }
	before := fds()
	for i := range 40 {
		release, err := s.Hold(store.HoldRevision, store.RevisionID(uint64(i+1)))
		if err != nil {
			t.Fatal(err)
		}
		release()
	}
	if n := fds() - before; n > 10 {
		t.Errorf("%d more descriptors open after 40 holds ended", n)
	}
}

// BenchmarkHold is what a call adds per held reference (it takes two: its
// revision and its release): alone (a flock and an fstat on the file kept
// from the last hold, and the unlock), and
// while another call of the process holds the same thing, as on a busy
// server (shared).
func BenchmarkHold(b *testing.B) {
	s := store.New(filepath.Join(b.TempDir(), "home"))
	hold := func(b *testing.B) {
		for b.Loop() {
			release, err := s.Hold(store.HoldRelease, digest)
			if err != nil {
				b.Fatal(err)
			}
			release()
		}
	}
	b.Run("alone", hold)
	b.Run("while-held", func(b *testing.B) {
		release, err := s.Hold(store.HoldRelease, digest)
		if err != nil {
			b.Fatal(err)
		}
		defer release()
		hold(b)
	})
}
