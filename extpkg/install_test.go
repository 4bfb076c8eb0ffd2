package extpkg

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rukh-dev/rukh/kernel"
)

func loadDir(t *testing.T, root string) *Package {
	t.Helper()
	p, err := Load(root, "")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestInstall(t *testing.T) {
	_, priv := newKey(t)
	src := makeDir(t, with(file("share/readme", "hi"), symlink("bin/alias", "tool")))
	if _, err := SignDir(src, priv); err != nil {
		t.Fatal(err)
	}
	p := loadDir(t, src)
	releases := filepath.Join(t.TempDir(), "releases")

	dir, existed, err := Install(p, releases)
	if err != nil {
		t.Fatal(err)
	}
	name, _ := ReleaseDirName(p.Digest)
	if existed || dir != filepath.Join(releases, name) {
		t.Errorf("Install = %s, %v; want new %s", dir, existed, name)
	}
	modes := map[string]fs.FileMode{}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, path)
		fi, _ := os.Lstat(path)
		modes[filepath.ToSlash(rel)] = fi.Mode()
		return nil
	})
	want := map[string]fs.FileMode{
		".":                 fs.ModeDir | 0o555,
		"bin":               fs.ModeDir | 0o555,
		"bin/tool":          0o555,
		"bin/alias":         fs.ModeSymlink,
		"share":             fs.ModeDir | 0o555,
		"share/readme":      0o444,
		kernel.ManifestFile: 0o444,
	}
	for rel, m := range want {
		got, ok := modes[rel]
		if !ok {
			t.Errorf("%s missing from the installed copy", rel)
			continue
		}
		if m == fs.ModeSymlink {
			got &= fs.ModeType
		}
		if got != m {
			t.Errorf("%s mode = %v, want %v", rel, got, m)
		}
	}
	if _, ok := modes[kernel.SignatureFile]; ok {
		t.Error("signature copied into the release")
	}
	if len(modes) != len(want) {
		t.Errorf("installed entries %v, want %v", modes, want)
	}
	if err := CheckInstalled(dir, p.Digest); err != nil {
		t.Errorf("CheckInstalled: %v", err)
	}
	// The installed copy loads as the same package.
	if q := loadDir(t, dir); q.Digest != p.Digest {
		t.Errorf("installed copy digest %s, want %s", q.Digest, p.Digest)
	}

	// Same digest again: a no-op.
	dir2, existed, err := Install(p, releases)
	if err != nil || !existed || dir2 != dir {
		t.Errorf("reinstall = %s, %v, %v; want %s, true, nil", dir2, existed, err, dir)
	}
	onlyRelease(t, releases, name)

	// Remove restores write bits, deletes the copy and leaves nothing.
	if err := Remove(releases, p.Digest); err != nil {
		t.Fatal(err)
	}
	assertEmpty(t, releases)
	wantErr(t, Remove(releases, p.Digest), kernel.CodeNotFound, "", "is not installed")
	wantErr(t, CheckInstalled(dir, p.Digest), kernel.CodeNotFound, "", "is not installed")
}

func TestInstallRepairsTampering(t *testing.T) {
	p := loadDir(t, makeDir(t, base()))
	releases := t.TempDir()
	dir, _, err := Install(p, releases)
	if err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, kernel.ManifestFile)
	os.Chmod(dir, 0o755)
	os.Chmod(manifest, 0o644)
	if err := os.WriteFile(manifest, []byte(manifestFor("bin/tool")+" "), 0o644); err != nil {
		t.Fatal(err)
	}
	wantErr(t, CheckInstalled(dir, p.Digest), kernel.CodeConflict, "", "has digest")
	// installing the verified package again repairs the copy in place
	again, existed, err := Install(p, releases)
	if err != nil || existed || again != dir {
		t.Fatalf("reinstall = %q, %v, %v; want a fresh copy at %q", again, existed, err, dir)
	}
	if err := CheckInstalled(dir, p.Digest); err != nil {
		t.Fatalf("after repair: %v", err)
	}
	if err := Remove(releases, p.Digest); err != nil {
		t.Fatal(err)
	}
	assertEmpty(t, releases)
}

// A directory package that changes between Load and Install is not
// installed under the old digest, and nothing is left behind.
func TestInstallSourceChanged(t *testing.T) {
	src := makeDir(t, base())
	p := loadDir(t, src)
	write(t, src, "bin/tool", "#!/bin/sh\necho changed\n")
	chmod(t, src, "bin/tool", 0o755)
	releases := t.TempDir()
	_, _, err := Install(p, releases)
	wantErr(t, err, kernel.CodeConflict, "", "package changed while it was being installed")
	assertEmpty(t, releases)
}

func TestInstallFromTarball(t *testing.T) {
	scratch := t.TempDir()
	p, err := Load(writeTemp(t, "p.tar.gz", tarGz(t, with(symlink("bin/alias", "tool")))), scratch)
	if err != nil {
		t.Fatal(err)
	}
	releases := t.TempDir()
	dir, _, err := Install(p, releases)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Remove(releases, p.Digest) })
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	assertEmpty(t, scratch)
	if err := CheckInstalled(dir, p.Digest); err != nil {
		t.Error(err)
	}
	if target, err := os.Readlink(filepath.Join(dir, "bin/alias")); err != nil || target != "tool" {
		t.Errorf("symlink = %q, %v", target, err)
	}
}

func onlyRelease(t *testing.T, releases, name string) {
	t.Helper()
	des, err := os.ReadDir(releases)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	if want := []string{fingerprintPrefix + name, name}; !slices.Equal(names, want) {
		t.Errorf("releases dir holds %q, want only %q", names, want)
	}
}
