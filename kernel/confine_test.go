package kernel

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
)

// TestConfineRefusesUnknownMembers: a confine read inside a lenient record
// still refuses a member it does not know.
func TestConfineRefusesUnknownMembers(t *testing.T) {
	var rec struct {
		Confine *Confine `json:"confine"`
	}
	err := json.Unmarshal([]byte(`{"confine":{"network":"none","syscalls":["read"]},"later":1}`), &rec, json.RejectUnknownMembers(false))
	if err == nil || !strings.Contains(err.Error(), "syscalls") {
		t.Fatalf("unknown member in confine: err %v, confine %+v", err, rec.Confine)
	}
	if err := json.Unmarshal([]byte(`{"confine":{"network":"none","read":["release"]},"later":1}`), &rec, json.RejectUnknownMembers(false)); err != nil || rec.Confine.Network != NetworkNone {
		t.Fatalf("a known confine: err %v, %+v", err, rec.Confine)
	}
}

// TestSweepLeftovers: the scratch directory of a rukh process that is gone
// is removed; this process's own, and a name that is not a scratch
// directory's, are left alone.
func TestSweepLeftovers(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	mine, err := makeScratch()
	if err != nil {
		t.Fatal(err)
	}
	self, _ := Self()
	gone := filepath.Join(scratchParent(), fmt.Sprintf("%d-%d-x", self.PID, self.Start+1)) // same pid, another start: gone
	other := filepath.Join(scratchParent(), "not-a-scratch-dir")
	for _, d := range []string{gone, other} {
		if err := os.MkdirAll(filepath.Join(d, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	removed, warnings := SweepLeftovers()
	if len(warnings) != 0 || len(removed) != 1 || removed[0] != gone {
		t.Fatalf("removed %v, warnings %v; want only %s", removed, warnings, gone)
	}
	for _, d := range []string{mine, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
	if _, err := os.Stat(gone); err == nil {
		t.Errorf("%s is still there", gone)
	}
}
