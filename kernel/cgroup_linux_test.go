//go:build linux && !rukh_portable

package kernel

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestSweepCgroupsByMark: a call's pids cgroup has its mark in the scratch
// parent from before it is made until after it is removed; a sweep removes
// the cgroup of a rukh that is gone when its mark is there, and does not
// look at the cgroups at all when no gone rukh left an entry.
func TestSweepCgroupsByMark(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("pids cgroups are made by a root rukh")
	}
	root, err := pidsRoot()
	if err != nil {
		t.Skipf("no pids cgroup here: %v", err)
	}
	t.Setenv("TMPDIR", t.TempDir())

	c, err := newPidsCgroup("inv_mark", 8)
	if err != nil {
		t.Skipf("cannot make a pids cgroup here: %v", err)
	}
	mark := filepath.Join(scratchParent(), ownerTag()+"-inv_mark"+cgroupMark)
	if _, err := os.Stat(mark); err != nil {
		t.Fatalf("a live cgroup has no mark: %v", err)
	}
	c.remove()
	if _, err := os.Stat(mark); !os.IsNotExist(err) {
		t.Fatalf("the mark outlived its cgroup: %v", err)
	}

	self, _ := Self()
	goneTag := fmt.Sprintf("%d-%d-inv_gone", self.PID, self.Start+1) // same pid, another start: gone
	cg := filepath.Join(root, "rukh-"+goneTag)
	if err := os.Mkdir(cg, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(cg) })

	// No entry of a gone rukh: the cgroups are not looked at.
	if removed, warnings := SweepLeftovers(); len(removed) != 0 || len(warnings) != 0 {
		t.Fatalf("removed %v, warnings %v; want nothing", removed, warnings)
	}
	if _, err := os.Stat(cg); err != nil {
		t.Fatalf("a sweep without a mark looked at the cgroups: %v", err)
	}

	// Its mark: the cgroup and the mark go.
	goneMark := filepath.Join(scratchParent(), goneTag+cgroupMark)
	if err := os.WriteFile(goneMark, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	removed, warnings := SweepLeftovers()
	if len(warnings) != 0 || len(removed) != 1 || removed[0] != cg {
		t.Fatalf("removed %v, warnings %v; want only %s", removed, warnings, cg)
	}
	for _, p := range []string{cg, goneMark} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", p, err)
		}
	}
}
