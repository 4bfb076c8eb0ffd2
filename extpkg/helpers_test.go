package extpkg

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rukh-dev/rukh/kernel"
)

// manifestFor returns a valid v2 manifest whose one command runs program.
func manifestFor(program string) string {
	return `{"apiVersion":"rukh.extension/2","name":"test.pkg","version":"1.0.0",
"commands":[{"id":"t.run","path":["t","run"],"execute":{"program":"` + program + `","result":{"kind":"text"}}}]}`
}

var validManifest = manifestFor("bin/tool")

// ent is one tar entry; typ 0 means a regular file.
type ent struct {
	name string
	typ  byte
	mode int64
	body string
	link string
}

func file(name, body string) ent { return ent{name: name, typ: tar.TypeReg, mode: 0o644, body: body} }
func exe(name, body string) ent  { return ent{name: name, typ: tar.TypeReg, mode: 0o755, body: body} }
func dir(name string) ent        { return ent{name: name, typ: tar.TypeDir, mode: 0o755} }
func symlink(name, target string) ent {
	return ent{name: name, typ: tar.TypeSymlink, mode: 0o777, link: target}
}

// base is a valid package's entries.
func base() []ent {
	return []ent{file(kernel.ManifestFile, validManifest), exe("bin/tool", "#!/bin/sh\n")}
}

func tarBytes(t *testing.T, ents []ent) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range ents {
		hdr := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: e.mode, Linkname: e.link,
			Size: int64(len(e.body)), ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if e.typ != tar.TypeReg {
			hdr.Size = 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatalf("header %q: %v", e.name, err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gzipBytes(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	gz.Write(data)
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func tarGz(t *testing.T, ents []ent) []byte { return gzipBytes(t, tarBytes(t, ents)) }

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// makeDir writes ents (files, dirs and symlinks only) as a directory.
func makeDir(t testing.TB, ents []ent) string {
	t.Helper()
	root := t.TempDir()
	for _, e := range ents {
		p := filepath.Join(root, filepath.FromSlash(e.name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch e.typ {
		case tar.TypeReg:
			if err = os.WriteFile(p, []byte(e.body), 0o644); err == nil {
				err = os.Chmod(p, os.FileMode(e.mode&0o777)|modeBits(e.mode))
			}
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeSymlink:
			err = os.Symlink(e.link, p)
		default:
			t.Fatalf("makeDir: type %q", e.typ)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func modeBits(m int64) os.FileMode {
	var fm os.FileMode
	if m&0o4000 != 0 {
		fm |= os.ModeSetuid
	}
	if m&0o2000 != 0 {
		fm |= os.ModeSetgid
	}
	if m&0o1000 != 0 {
		fm |= os.ModeSticky
	}
	return fm
}

// wantErr checks err is a *kernel.Error with code, a message containing
// msg and, when path is not "-", exactly that Path.
func wantErr(t *testing.T, err error, code kernel.Code, path, msg string) {
	t.Helper()
	var ke *kernel.Error
	if !errors.As(err, &ke) {
		t.Fatalf("error = %v (%T), want *kernel.Error", err, err)
	}
	if ke == nil {
		t.Fatal("error is a typed nil *kernel.Error")
	}
	if ke.Code != code {
		t.Errorf("code = %q, want %q (%v)", ke.Code, code, err)
	}
	if !strings.Contains(ke.Message, msg) {
		t.Errorf("message = %q, want it to contain %q", ke.Message, msg)
	}
	if path != "-" && ke.Path != path {
		t.Errorf("path = %q, want %q", ke.Path, path)
	}
}

// assertEmpty fails if dir holds anything (a missing dir is empty).
func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	for _, de := range des {
		t.Errorf("left behind in %s: %s", dir, de.Name())
	}
}

func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
