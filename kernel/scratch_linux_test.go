//go:build linux

package kernel

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestScratchMadeAhead: every call's scratch directory is new, private
// to its user, empty, named as a call's (not a spare's), never another
// call's, and gone once removed; the spares made ahead are swept after
// their maker is gone without being counted as a killed rukh's.
func TestScratchMadeAhead(t *testing.T) {
	seen := map[string]bool{}
	for i := range 6 {
		dir, err := takeScratch()
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(dir)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		ents, _ := os.ReadDir(dir)
		owner, ok := parseOwnerTag(filepath.Base(dir))
		self, _ := Self()
		switch {
		case seen[dir]:
			t.Fatalf("call %d got %s again", i, dir)
		case !fi.IsDir() || fi.Mode().Perm() != 0o700 || int(st.Uid) != os.Geteuid() || len(ents) != 0:
			t.Fatalf("call %d got %s: %v, uid %d, %d entries", i, dir, fi.Mode(), st.Uid, len(ents))
		case !ok || owner != self || strings.Contains(filepath.Base(dir), spareMark):
			t.Fatalf("call %d got %s, not named as this rukh's call's", i, dir)
		}
		seen[dir] = true
		if i%2 == 0 {
			os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o600)
		}
		removeScratch(dir)
		if _, err := os.Lstat(dir); !os.IsNotExist(err) {
			t.Fatalf("%s outlived its removal: %v", dir, err)
		}
		// The spares are made as calls end; a call that came at once
		// would make its own.
		for deadline := time.Now().Add(5 * time.Second); scratchPool.filling.Load() && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}
	if len(scratchPool.ready) == 0 {
		t.Fatal("no spare was made ahead")
	}
	self, _ := Self()
	parent := scratchParent()
	spare := filepath.Join(parent, fmt.Sprintf("%d-%d-%sx", self.PID, self.Start+1, spareMark)) // another start: gone
	used := filepath.Join(parent, fmt.Sprintf("%d-%d-y", self.PID, self.Start+1))
	for _, d := range []string{spare, used} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	removed, warnings := SweepLeftovers()
	for _, d := range []string{spare, used} {
		if _, err := os.Lstat(d); !os.IsNotExist(err) {
			t.Errorf("the sweep left %s: %v", d, err)
		}
	}
	if strings.Join(removed, " ") != used || len(warnings) != 0 {
		t.Errorf("the sweep reports %v (%v), want only %s", removed, warnings, used)
	}
}
