package store_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/rukh-dev/rukh/store"
)

// TestStampChangesWithEveryCommit: reads leave the stamp as it is; every
// write transaction changes it, also when the file's size and times stay
// the same (the file system's clock is coarse), because the committed
// transaction id grows.
func TestStampChangesWithEveryCommit(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no stamp on this platform: serve-mcp reads the store for every request")
	}
	s := fileStore(t)
	if _, ok := s.Stamp(); ok {
		t.Fatal("a stamp before the store exists")
	}
	mustPut(t, s, rel("acme.notes", "1.0.0"))
	st, ok := s.Stamp()
	if !ok {
		t.Fatal("no stamp")
	}
	if _, err := s.Active(); err != nil {
		t.Fatal(err)
	}
	if again, _ := s.Stamp(); again != st {
		t.Fatal("a read changed the stamp")
	}
	path := filepath.Join(s.Home(), "rukh.db")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, write := range []func(){
		func() { mustPut(t, s, rel("acme.notes", "1.1.0")) },
		func() { publish(t, s, "b", "h1:acme.notes@1.0.0") },
	} {
		write()
		// Undo what the file system shows, so only the commit tells.
		if err := os.Chtimes(path, time.Time{}, fi.ModTime()); err != nil {
			t.Fatal(err)
		}
		next, ok := s.Stamp()
		if !ok || next == st || store.StampTxid(next) <= store.StampTxid(st) {
			t.Fatalf("write %d: stamp %v (%v), was %v", i, next, ok, st)
		}
		st = next
	}
}

// TestUnchangedSeesThroughOwnAudit: a serving process's caches stay valid
// while only its own audit records are committed; any other commit (its
// own or another handle's, audit or not) makes the store changed, and so
// does a file put in the store's place.
func TestUnchangedSeesThroughOwnAudit(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no stamp on this platform: serve-mcp reads the store for every request")
	}
	s := fileStore(t)
	mustPut(t, s, rel("acme.notes", "1.0.0"))
	audit := func(s *store.Store) {
		t.Helper()
		if err := s.AppendAudit(store.AuditRecord{Agent: "bot", Endpoint: "e", Command: "x.y", Outcome: "succeeded"}); err != nil {
			t.Fatal(err)
		}
	}
	stamp := func() store.Stamp {
		t.Helper()
		st, ok := s.Stamp()
		if !ok {
			t.Fatal("no stamp")
		}
		return st
	}
	st := stamp()
	audit(s)
	audit(s)
	now := stamp()
	if now == st || !s.Unchanged(st, now) {
		t.Fatalf("two own audit commits: stamp %v -> %v, unchanged %v", st, now, s.Unchanged(st, now))
	}
	if s.Unchanged(now, st) {
		t.Fatal("unchanged going back in time")
	}

	other := store.New(s.Home())
	for name, write := range map[string]func(){
		"another handle's audit": func() { audit(other) },
		"an own release":         func() { mustPut(t, s, rel("acme.notes", "1.1.0")) },
		"another handle's write": func() { mustPut(t, other, rel("acme.notes", "1.2.0")) },
	} {
		before := stamp()
		write()
		audit(s)
		if after := stamp(); s.Unchanged(before, after) {
			t.Errorf("%s, then an own audit: reported unchanged", name)
		}
	}

	// The same bytes in another file: a copy put in the store's place.
	before := stamp()
	path := filepath.Join(s.Home(), "rukh.db")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".new", data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	after := stamp()
	if after == before || s.Unchanged(before, after) {
		t.Fatal("a store file put in place of the old one: reported unchanged")
	}
	audit(s)
	if now := stamp(); !s.Unchanged(after, now) {
		t.Fatal("an own audit on the new file: reported changed")
	}
}

func BenchmarkStamp(b *testing.B) {
	s := mustStore(b)
	publish(b, s, "x")
	if _, ok := s.Stamp(); !ok {
		b.Fatal("no stamp")
	}
	for b.Loop() {
		if _, ok := s.Stamp(); !ok {
			b.Fatal("no stamp")
		}
	}
}

// TestUnchangedAfterARestore: a store file restored from a copy, put in
// place by a rename (another file) or written over in place (the same
// file, its transaction ids gone back), names other commits by the ids
// this handle's audit commits had: another handle's commit on it is a
// change, never taken for an own audit; the handle's own commits on it are
// known again.
func TestUnchangedAfterARestore(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no stamp on this platform")
	}
	for _, tc := range []struct {
		name string
		put  func(path string, data []byte) error
	}{
		{"renamed into place", func(path string, data []byte) error {
			if err := os.WriteFile(path+".restore", data, 0o600); err != nil {
				return err
			}
			return os.Rename(path+".restore", path)
		}},
		{"written over in place", func(path string, data []byte) error { return os.WriteFile(path, data, 0o600) }},
	} {
		s := fileStore(t)
		audit := func() {
			t.Helper()
			if err := s.AppendAudit(store.AuditRecord{Agent: "bot", Endpoint: "e", Command: "x.y", Outcome: "succeeded"}); err != nil {
				t.Fatal(err)
			}
		}
		audit()
		path := filepath.Join(s.Home(), "rukh.db")
		backup, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			audit()
		}
		if _, ok := s.Stamp(); !ok {
			t.Fatal("no stamp")
		}
		if err := tc.put(path, backup); err != nil {
			t.Fatal(err)
		}
		kept, ok := s.Stamp() // a cache reads the restored store here
		if !ok {
			t.Fatal("no stamp")
		}
		mustPut(t, store.New(s.Home()), rel("acme.notes", "1.0.0"))
		now, ok := s.Stamp()
		if !ok {
			t.Fatal("no stamp")
		}
		if s.Unchanged(kept, now) {
			t.Errorf("%s: another handle's commit on the restored store taken for an own audit", tc.name)
		}
		// and the handle's own audit commits on it are its own again
		audit()
		if after, ok := s.Stamp(); !ok || !s.Unchanged(now, after) {
			t.Errorf("%s: an own audit commit on the restored store not known as its own", tc.name)
		}
	}
}
