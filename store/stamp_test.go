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
