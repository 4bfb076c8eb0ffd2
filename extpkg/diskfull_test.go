package extpkg

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestInstallOnAFullDiskLeavesNoTempFiles: whichever file install is
// writing when the disk fills (a file of the copy, the fingerprint), the
// install fails and leaves no temporary file or directory behind.
func TestInstallOnAFullDiskLeavesNoTempFiles(t *testing.T) {
	for _, tt := range []struct {
		name      string
		full      string // the disk fills while writing a file whose path has this
		installed bool   // the copy is installed already, without its fingerprint
	}{
		{"copying a file", ".tmp-", false},
		{"recording the fingerprint", fingerprintPrefix, false},
		{"recording the fingerprint of an existing copy", fingerprintPrefix, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := loadDir(t, makeDir(t, with(file("share/readme", strings.Repeat("hi", 5000)))))
			releases := filepath.Join(t.TempDir(), "releases")
			if tt.installed {
				dir, _, err := Install(p, releases)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Remove(FingerprintPath(dir)); err != nil {
					t.Fatal(err)
				}
			}
			old := writeTo
			t.Cleanup(func() { writeTo = old })
			writeTo = func(f *os.File, r io.Reader) (int64, error) {
				if strings.Contains(f.Name(), tt.full) {
					return 0, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
				}
				return old(f, r)
			}
			if _, _, err := Install(p, releases); err == nil || !strings.Contains(err.Error(), "no space left on device") {
				t.Fatalf("Install on a full disk: %v", err)
			}
			ents, err := os.ReadDir(releases)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				if strings.Contains(e.Name(), ".tmp-") {
					t.Errorf("left behind: %s", e.Name())
				}
			}
		})
	}
}
