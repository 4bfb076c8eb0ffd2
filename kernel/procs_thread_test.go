package kernel

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestNothingLocksAThread guards what startTracked relies on: a program's
// parent-death signal fires when the thread that forked it ends, and the Go
// runtime ends a thread only when a goroutine locked to it returns. So no
// rukh code may lock a goroutine to its thread, except the confining init's
// main goroutine (package confine), which holds its thread until the init,
// a process of its own, exits, makeNetNS (netns_linux.go), which
// unlocks its thread before it returns, or else parks it for good, and the
// thread that starts containment slots (init_linux_slots.go), which never
// returns.
func TestNothingLocksAThread(t *testing.T) {
	root := ".."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "node_modules" || name == "testdata" || strings.HasPrefix(name, ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), "LockOSThread(") && !slices.Contains([]string{"../confine/init_linux.go", "../kernel/netns_linux.go", "../kernel/init_linux_slots.go"}, filepath.ToSlash(path)) {
			t.Errorf("%s locks a goroutine to its thread: a program started from that thread would be killed when it ends", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
