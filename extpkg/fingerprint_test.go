package extpkg

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rukh-dev/rukh/kernel"
)

// installed returns a fresh installed copy of a five-file package and its digest.
func installed(t testing.TB) (dir, digest string) {
	t.Helper()
	src := makeDir(t, with(file("share/readme", "hello"), file("share/doc/guide", "guide"), exe("bin/helper", "#!/bin/sh\n")))
	p, err := Load(src, "")
	if err != nil {
		t.Fatal(err)
	}
	dir, _, err = Install(p, filepath.Join(t.TempDir(), "releases"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Remove(filepath.Dir(dir), p.Digest) })
	return dir, p.Digest
}

// unlock makes the copy's directories writable, as a person would before
// editing it.
func unlock(t *testing.T, dir string, rels ...string) {
	t.Helper()
	for _, rel := range rels {
		if err := os.Chmod(filepath.Join(dir, rel), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFingerprintCatchesEachChange(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
		// whether the content changed, so the full digest refuses it too
		contentChanged bool
		want           string
	}{
		{"content edit, same size", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "share/readme")
			os.Chmod(p, 0o644)
			if err := os.WriteFile(p, []byte("HELLO"), 0o644); err != nil {
				t.Fatal(err)
			}
			os.Chmod(p, 0o444)
		}, true, `"share/readme" was changed`},
		{"content edit, mtime set back", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "share/readme")
			fi, _ := os.Stat(p)
			os.Chmod(p, 0o644)
			os.WriteFile(p, []byte("HELLO"), 0o644)
			os.Chmod(p, 0o444)
			if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
		}, true, `"share/readme" was changed`},
		{"chmod", func(t *testing.T, dir string) {
			if err := os.Chmod(filepath.Join(dir, "share/readme"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, false, `"share/readme" was changed`},
		{"chmod and back", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "share/readme")
			os.Chmod(p, 0o644)
			os.Chmod(p, 0o444)
		}, false, `"share/readme" was changed`},
		{"file added", func(t *testing.T, dir string) {
			unlock(t, dir, "share/doc")
			if err := os.WriteFile(filepath.Join(dir, "share/doc/extra"), []byte("x"), 0o444); err != nil {
				t.Fatal(err)
			}
			os.Chmod(filepath.Join(dir, "share/doc"), 0o555)
		}, true, `"share/doc" was changed`},
		{"file removed", func(t *testing.T, dir string) {
			unlock(t, dir, "share/doc")
			if err := os.Remove(filepath.Join(dir, "share/doc/guide")); err != nil {
				t.Fatal(err)
			}
		}, true, `"share/doc/guide" was changed`},
		{"file renamed", func(t *testing.T, dir string) {
			unlock(t, dir, "share")
			if err := os.Rename(filepath.Join(dir, "share/readme"), filepath.Join(dir, "share/readme2")); err != nil {
				t.Fatal(err)
			}
		}, true, `"share/readme" was changed`},
		{"file replaced by a copy", func(t *testing.T, dir string) {
			unlock(t, dir, "bin")
			p := filepath.Join(dir, "bin/helper")
			data, _ := os.ReadFile(p)
			os.Remove(p)
			os.WriteFile(p, data, 0o555)
		}, false, `"bin/helper" was changed`},
		{"top directory added to", func(t *testing.T, dir string) {
			unlock(t, dir, ".")
			os.WriteFile(filepath.Join(dir, "new"), nil, 0o444)
		}, true, "its top directory was changed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, digest := installed(t)
			if err := CheckFingerprint(dir, digest); err != nil {
				t.Fatalf("fresh copy: %v", err)
			}
			tt.change(t, dir)
			err := CheckFingerprint(dir, digest)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("CheckFingerprint after %s = %v, want %q", tt.name, err, tt.want)
			}
			// The call path: changed content is refused, unchanged
			// content is fingerprinted again and runs.
			err = VerifyCopy(dir, digest)
			if tt.contentChanged {
				wantErr(t, err, kernel.CodeConflict, "", "since it was installed")
				if err := VerifyCopy(dir, digest); err == nil {
					t.Fatal("a refused copy was accepted on the next call")
				}
				return
			}
			if err != nil {
				t.Fatalf("VerifyCopy of unchanged content = %v", err)
			}
			if err := CheckFingerprint(dir, digest); err != nil {
				t.Fatalf("not fingerprinted again: %v", err)
			}
		})
	}
}

func TestFingerprintMissingOrForeign(t *testing.T) {
	dir, digest := installed(t)
	if err := CheckFingerprint(dir, "h1:other"); err == nil {
		t.Error("a fingerprint of another digest was accepted")
	}
	// A copy from a rukh that recorded no fingerprint: the digest decides
	// once, then the fingerprint is recorded.
	if err := os.Remove(FingerprintPath(dir)); err != nil {
		t.Fatal(err)
	}
	if err := CheckFingerprint(dir, digest); err != errNoFingerprint {
		t.Fatalf("CheckFingerprint without one = %v", err)
	}
	if err := VerifyCopy(dir, digest); err != nil {
		t.Fatal(err)
	}
	if err := CheckFingerprint(dir, digest); err != nil {
		t.Fatalf("not recorded: %v", err)
	}
	// A damaged copy without a fingerprint is refused on its digest.
	os.Remove(FingerprintPath(dir))
	p := filepath.Join(dir, "share/readme")
	os.Chmod(p, 0o644)
	os.WriteFile(p, []byte("HELLO"), 0o644)
	wantErr(t, VerifyCopy(dir, digest), kernel.CodeConflict, "", "has digest")
	if _, err := os.Stat(FingerprintPath(dir)); err == nil {
		t.Error("a damaged copy was fingerprinted")
	}
	// Remove takes the fingerprint with the copy.
	if err := Remove(filepath.Dir(dir), digest); err != nil {
		t.Fatal(err)
	}
	assertEmpty(t, filepath.Dir(dir))
}

// Reinstalling repairs both kinds of damage: changed content (a new copy)
// and a stale fingerprint over the right content.
func TestInstallRecordsFingerprint(t *testing.T) {
	src := makeDir(t, base())
	p := loadDir(t, src)
	releases := t.TempDir()
	dir, _, err := Install(p, releases)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(dir, kernel.ManifestFile), 0o644)
	if CheckFingerprint(dir, p.Digest) == nil {
		t.Fatal("chmod not noticed")
	}
	if _, existed, err := Install(p, releases); err != nil || !existed {
		t.Fatalf("reinstall = %v, %v", existed, err)
	}
	if err := CheckFingerprint(dir, p.Digest); err != nil {
		t.Fatalf("after reinstall: %v", err)
	}
}

// BenchmarkVerifyCopy is the check every call makes: a five-file package
// (manifest, two executables, two documents, three directories).
func BenchmarkVerifyCopy(b *testing.B) {
	dir, digest := installed(b)
	if err := VerifyCopy(dir, digest); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := VerifyCopy(dir, digest); err != nil {
			b.Fatal(err)
		}
	}
}
