package extpkg

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rukh-dev/rukh/kernel"
)

func TestPack(t *testing.T) {
	src := makeDir(t, with(file("share/doc/readme", "hi"), symlink("bin/alias", "tool"), file("z", "z")))
	chmod(t, src, "z", 0o600) // normalised to 0644 in the archive
	_, priv := newKey(t)
	if _, err := SignDir(src, priv); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "pkg.tar.gz")
	if err := Pack(src, out); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(out)
	// Deterministic: packing a copy with other times gives the same bytes.
	later := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(src, "z"), later, later)
	if err := Pack(src, out); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(out)
	if !bytes.Equal(first, second) {
		t.Error("Pack is not deterministic")
	}

	type row struct {
		name string
		typ  byte
		mode int64
		link string
	}
	var rows []row
	gz, err := gzip.NewReader(bytes.NewReader(first))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || !h.ModTime.Equal(time.Unix(0, 0)) {
			t.Errorf("%s: owner %d/%d %q/%q time %v", h.Name, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime)
		}
		rows = append(rows, row{h.Name, h.Typeflag, h.Mode, h.Linkname})
	}
	want := []row{
		{"bin/", tar.TypeDir, 0o755, ""},
		{"bin/alias", tar.TypeSymlink, 0o777, "tool"},
		{"bin/tool", tar.TypeReg, 0o755, ""},
		{kernel.ManifestFile, tar.TypeReg, 0o644, ""},
		{kernel.SignatureFile, tar.TypeReg, 0o644, ""},
		{"share/", tar.TypeDir, 0o755, ""},
		{"share/doc/", tar.TypeDir, 0o755, ""},
		{"share/doc/readme", tar.TypeReg, 0o644, ""},
		{"z", tar.TypeReg, 0o644, ""},
	}
	if !slices.Equal(rows, want) {
		t.Errorf("entries:\n got %v\nwant %v", rows, want)
	}

	// The archive loads as the same package, signature included.
	dirPkg := loadDir(t, src)
	p, err := Load(out, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Digest != dirPkg.Digest || !slices.Equal(p.Files, dirPkg.Files) || !bytes.Equal(p.Signature, dirPkg.Signature) {
		t.Errorf("tarball %s %q, directory %s %q", p.Digest, p.Files, dirPkg.Digest, dirPkg.Files)
	}
}

func TestPackRefuses(t *testing.T) {
	src := makeDir(t, base())
	err := Pack(src, filepath.Join(src, "out.tar.gz"))
	wantErr(t, err, kernel.CodeUsage, "", "must be outside the package directory")
	if _, err := os.Stat(filepath.Join(src, "out.tar.gz")); err == nil {
		t.Error("archive written inside the package")
	}
	bad := makeDir(t, []ent{file(kernel.ManifestFile, validManifest), file("bin/tool", "x")})
	outDir := t.TempDir()
	err = Pack(bad, filepath.Join(outDir, "bad.tar.gz"))
	wantErr(t, err, kernel.CodeInvalid, "bin/tool", "is not executable")
	assertEmpty(t, outDir)
}
