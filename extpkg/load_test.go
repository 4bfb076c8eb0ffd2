package extpkg

import (
	"archive/tar"
	"bytes"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/rukh-dev/rukh/kernel"
)

func with(ents ...ent) []ent { return append(base(), ents...) }

func TestLoadHostileTarballs(t *testing.T) {
	small := func(f func(*limits)) *limits {
		l := defaultLimits
		f(&l)
		return &l
	}
	many := with()
	for i := range 4 {
		many = append(many, file("f"+string(rune('a'+i)), "x"))
	}
	tests := []struct {
		name string
		data func(t *testing.T) []byte
		lim  *limits
		code kernel.Code
		path string
		msg  string
	}{
		{name: "dotdot", data: func(t *testing.T) []byte { return tarGz(t, with(file("../x", "x"))) },
			path: "../x", msg: `entry "../x" escapes the package`},
		{name: "dotdot inside", data: func(t *testing.T) []byte { return tarGz(t, with(file("a/../../x", "x"))) },
			path: "a/../../x", msg: `entry "a/../../x" escapes the package`},
		{name: "absolute", data: func(t *testing.T) []byte { return tarGz(t, with(file("/etc/passwd", "x"))) },
			path: "/etc/passwd", msg: `entry "/etc/passwd" is an absolute path`},
		{name: "symlink escaping", data: func(t *testing.T) []byte { return tarGz(t, with(symlink("bin/x", "../../etc/passwd"))) },
			path: "bin/x", msg: `symlink "bin/x" escapes the package (target "../../etc/passwd")`},
		{name: "absolute symlink", data: func(t *testing.T) []byte { return tarGz(t, with(symlink("bin/sh", "/bin/sh"))) },
			path: "bin/sh", msg: `symlink "bin/sh" points to the absolute path "/bin/sh"`},
		{name: "unclean symlink", data: func(t *testing.T) []byte { return tarGz(t, with(symlink("bin/x", "./tool"))) },
			path: "bin/x", msg: `symlink "bin/x" has target "./tool", which is not a clean path`},
		{name: "write through symlink", data: func(t *testing.T) []byte {
			return tarGz(t, with(symlink("lnk", "bin"), file("lnk/evil", "x")))
		}, path: "lnk/evil", msg: `entry "lnk/evil" is inside "lnk", which is not a directory`},
		{name: "symlink to directory", data: func(t *testing.T) []byte { return tarGz(t, with(symlink("lnk", "bin"))) },
			path: "lnk", msg: `symlink "lnk" points to the directory "bin"`},
		{name: "dangling symlink", data: func(t *testing.T) []byte { return tarGz(t, with(symlink("lnk", "nope"))) },
			path: "lnk", msg: `symlink "lnk" points to "nope", which does not exist`},
		{name: "symlink loop", data: func(t *testing.T) []byte { return tarGz(t, with(symlink("a", "b"), symlink("b", "a"))) },
			path: "a", msg: `symlink "a" goes through more than 16 symlinks`},
		{name: "char device", data: func(t *testing.T) []byte {
			return tarGz(t, with(ent{name: "dev/null", typ: tar.TypeChar, mode: 0o666}))
		}, path: "dev/null", msg: `device file "dev/null" is not allowed`},
		{name: "block device", data: func(t *testing.T) []byte {
			return tarGz(t, with(ent{name: "sda", typ: tar.TypeBlock, mode: 0o660}))
		}, path: "sda", msg: `device file "sda" is not allowed`},
		{name: "fifo", data: func(t *testing.T) []byte { return tarGz(t, with(ent{name: "p", typ: tar.TypeFifo, mode: 0o644})) },
			path: "p", msg: `fifo "p" is not allowed`},
		{name: "hard link", data: func(t *testing.T) []byte {
			return tarGz(t, with(ent{name: "bin/y", typ: tar.TypeLink, link: "bin/tool"}))
		}, path: "bin/y", msg: `hard link "bin/y" is not allowed`},
		{name: "unknown type", data: func(t *testing.T) []byte { return tarGz(t, with(ent{name: "c", typ: tar.TypeCont})) },
			path: "c", msg: `entry "c" has unsupported type "7"`},
		{name: "setuid", data: func(t *testing.T) []byte {
			return tarGz(t, []ent{file(kernel.ManifestFile, validManifest), {name: "bin/tool", typ: tar.TypeReg, mode: 0o4755, body: "x"}})
		}, path: "bin/tool", msg: `"bin/tool" has the setuid bit`},
		{name: "setgid", data: func(t *testing.T) []byte {
			return tarGz(t, with(ent{name: "lib/x", typ: tar.TypeReg, mode: 0o2644, body: "x"}))
		}, path: "lib/x", msg: `"lib/x" has the setgid bit`},
		{name: "sticky", data: func(t *testing.T) []byte {
			return tarGz(t, with(ent{name: "lib/x", typ: tar.TypeReg, mode: 0o1644, body: "x"}))
		}, path: "lib/x", msg: `"lib/x" has the sticky bit`},
		{name: "oversize file", lim: small(func(l *limits) { l.fileBytes = 1000 }),
			data: func(t *testing.T) []byte { return tarGz(t, with(file("big", strings.Repeat("x", 1001)))) },
			path: "big", msg: `file "big" is larger than 1000 bytes`},
		{name: "oversize total", lim: small(func(l *limits) { l.packageBytes = 1000 }),
			data: func(t *testing.T) []byte {
				return tarGz(t, with(file("a", strings.Repeat("a", 400)), file("b", strings.Repeat("b", 400)), file("c", strings.Repeat("c", 400))))
			}, path: "", msg: `package is larger than 1000 bytes`},
		{name: "too many files", lim: small(func(l *limits) { l.files = 5 }),
			data: func(t *testing.T) []byte { return tarGz(t, many) }, // manifest, bin, bin/tool, fa..fd
			path: "", msg: `package has more than 5 files and directories`},
		{name: "too deep", lim: small(func(l *limits) { l.pathDepth = 3 }),
			data: func(t *testing.T) []byte { return tarGz(t, with(file("a/b/c/d", "x"))) },
			path: "a/b/c/d", msg: `entry "a/b/c/d" is nested deeper than 3 levels`},
		{name: "archive too large", lim: small(func(l *limits) { l.archiveBytes = 64 }),
			data: func(t *testing.T) []byte { return tarGz(t, base()) },
			path: "", msg: `archive is larger than 64 bytes`},
		{name: "archive expands too much", lim: small(func(l *limits) { l.packageBytes, l.files = 1000, 10 }),
			data: func(t *testing.T) []byte {
				var buf bytes.Buffer
				tw := tar.NewWriter(&buf)
				for range 2 {
					tw.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "g",
						PAXRecords: map[string]string{"comment": strings.Repeat("x", 900<<10)}})
				}
				tw.Flush()
				return gzipBytes(t, append(buf.Bytes(), tarBytes(t, base())...))
			}, path: "", msg: `archive expands to more than`},
		{name: "control character", data: func(t *testing.T) []byte { return tarGz(t, with(file("a\x1bb", "x"))) },
			path: "a\x1bb", msg: `entry "a\x1bb" contains a control character`},
		{name: "backslash", data: func(t *testing.T) []byte { return tarGz(t, with(file(`a\b`, "x"))) },
			path: `a\b`, msg: `entry "a\\b" contains a backslash`},
		{name: "not gzip", data: func(t *testing.T) []byte { return []byte("hello, this is not an archive\n") },
			path: "", msg: `is not a directory or a gzip-compressed tar archive`},
		{name: "plain tar", data: func(t *testing.T) []byte { return tarBytes(t, base()) },
			path: "", msg: `is an uncompressed tar archive`},
		{name: "zip", data: func(t *testing.T) []byte { return []byte("PK\x03\x04rest") },
			path: "", msg: `is a zip archive`},
		{name: "truncated gzip", data: func(t *testing.T) []byte {
			b := tarGz(t, with(file("data", strings.Repeat("0123456789", 500))))
			return b[:len(b)/2]
		}, path: "", msg: `archive is truncated`},
		{name: "truncated header", data: func(t *testing.T) []byte { return []byte{0x1f, 0x8b, 8} },
			path: "", msg: `archive is truncated`},
		{name: "bad checksum", data: func(t *testing.T) []byte {
			b := tarGz(t, base())
			b[len(b)-6] ^= 0xff // CRC-32 trailer
			return b
		}, path: "", msg: `archive is corrupt`},
		{name: "not a tar inside gzip", data: func(t *testing.T) []byte {
			return gzipBytes(t, bytes.Repeat([]byte("garbage!"), 200))
		}, path: "", msg: `archive is corrupt`},
		{name: "trailing data", data: func(t *testing.T) []byte {
			return gzipBytes(t, append(tarBytes(t, base()), make([]byte, maxTrailingBytes+512)...))
		}, path: "", msg: `archive has data after the end of the tar stream`},
		{name: "duplicate entry", data: func(t *testing.T) []byte { return tarGz(t, with(file("a", "1"), file("a", "2"))) },
			path: "a", msg: `duplicate entry "a"`},
		{name: "duplicate after cleaning", data: func(t *testing.T) []byte { return tarGz(t, with(file("a", "1"), file("./a", "2"))) },
			path: "a", msg: `duplicate entry "a"`},
		{name: "duplicate directory", data: func(t *testing.T) []byte { return tarGz(t, with(dir("d"), dir("d/"))) },
			path: "d", msg: `duplicate entry "d"`},
		{name: "file over directory", data: func(t *testing.T) []byte { return tarGz(t, with(file("bin", "x"))) },
			path: "bin", msg: `duplicate entry "bin"`},
		{name: "missing manifest", data: func(t *testing.T) []byte { return tarGz(t, []ent{exe("bin/tool", "x")}) },
			path: kernel.ManifestFile, msg: `package has no rukh-extension.json at its root`},
		{name: "manifest is a symlink", data: func(t *testing.T) []byte {
			return tarGz(t, []ent{file("m.json", validManifest), symlink(kernel.ManifestFile, "m.json"), exe("bin/tool", "x")})
		}, path: kernel.ManifestFile, msg: `rukh-extension.json is not a regular file`},
		{name: "invalid manifest", data: func(t *testing.T) []byte {
			return tarGz(t, []ent{file(kernel.ManifestFile, `{"apiVersion":"rukh.extension/2","name":"x","version":"1.0.0","commands":[],"bogus":1}`)})
		}, path: "-", msg: ""},
		{name: "program missing", data: func(t *testing.T) []byte { return tarGz(t, []ent{file(kernel.ManifestFile, validManifest)}) },
			path: "bin/tool", msg: `program "bin/tool" of command "t.run" does not exist`},
		{name: "program not executable", data: func(t *testing.T) []byte {
			return tarGz(t, []ent{file(kernel.ManifestFile, validManifest), file("bin/tool", "x")})
		}, path: "bin/tool", msg: `program "bin/tool" of command "t.run" is not executable`},
		{name: "program is a directory", data: func(t *testing.T) []byte {
			return tarGz(t, []ent{file(kernel.ManifestFile, validManifest), dir("bin/tool"), exe("bin/tool/x", "x")})
		}, path: "bin/tool", msg: `program "bin/tool" of command "t.run" is a directory`},
		{name: "program links to non-executable", data: func(t *testing.T) []byte {
			return tarGz(t, []ent{file(kernel.ManifestFile, validManifest), file("lib/real", "x"), symlink("bin/tool", "../lib/real")})
		}, path: "bin/tool", msg: `program "bin/tool" of command "t.run" is not executable`},
		{name: "signature is a directory", data: func(t *testing.T) []byte { return tarGz(t, with(exe(kernel.SignatureFile+"/x", "x"))) },
			path: kernel.SignatureFile, msg: `rukh-extension.sig is not a regular file`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := writeTemp(t, "pkg.tar.gz", tt.data(t))
			scratch := filepath.Join(t.TempDir(), "scratch")
			lim := tt.lim
			if lim == nil {
				lim = &defaultLimits
			}
			p, err := load(src, scratch, lim)
			if err == nil {
				p.Close()
				t.Fatalf("load succeeded, want %q", tt.msg)
			}
			code := tt.code
			if code == "" {
				code = kernel.CodeInvalid
			}
			wantErr(t, err, code, tt.path, tt.msg)
			assertEmpty(t, scratch)
		})
	}
}

// The archive limit is enforced on the bytes read, not on the file size
// the caller saw (a file can grow, a stream has no size).
func TestExtractCountsCompressedBytes(t *testing.T) {
	lim := defaultLimits
	lim.archiveBytes = 64
	data := tarGz(t, with(file("data", strings.Repeat("x", 10000))))
	err := extract(bytes.NewReader(data), t.TempDir(), &lim)
	wantErr(t, err, kernel.CodeInvalid, "", "archive is larger than 64 bytes")
}

func TestLoadHostileDirectories(t *testing.T) {
	tests := []struct {
		name  string
		ents  []ent
		setup func(t *testing.T, root string)
		lim   func(*limits)
		path  string
		msg   string
	}{
		{name: "symlink escaping", ents: with(symlink("bin/x", "../../x")),
			path: "bin/x", msg: `symlink "bin/x" escapes the package`},
		{name: "absolute symlink", ents: with(symlink("bin/x", "/etc/passwd")),
			path: "bin/x", msg: `symlink "bin/x" points to the absolute path "/etc/passwd"`},
		{name: "symlink to root", ents: with(symlink("bin/x", "..")),
			path: "bin/x", msg: `symlink "bin/x" points to the package root directory`},
		{name: "setuid", ents: []ent{file(kernel.ManifestFile, validManifest), {name: "bin/tool", typ: tar.TypeReg, mode: 0o4755}},
			path: "bin/tool", msg: `"bin/tool" has the setuid bit`},
		{name: "setgid", ents: with(ent{name: "x", typ: tar.TypeReg, mode: 0o2755}),
			path: "x", msg: `"x" has the setgid bit`},
		{name: "fifo", ents: base(), setup: func(t *testing.T, root string) {
			if err := syscall.Mkfifo(filepath.Join(root, "p"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, path: "p", msg: `fifo "p" is not allowed`},
		{name: "socket", ents: base(), setup: func(t *testing.T, root string) {
			// A short relative name keeps the socket path within sun_path.
			wd, _ := os.Getwd()
			if err := os.Chdir(root); err != nil {
				t.Fatal(err)
			}
			defer os.Chdir(wd)
			l, err := net.Listen("unix", "s")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
		}, path: "s", msg: `socket "s" is not allowed`},
		{name: "oversize file", ents: with(file("big", strings.Repeat("x", 101))), lim: func(l *limits) { l.fileBytes = 100 },
			path: "big", msg: `file "big" is larger than 100 bytes`},
		{name: "too many files", ents: with(file("a", ""), file("b", "")), lim: func(l *limits) { l.files = 4 },
			path: "", msg: `package has more than 4 files and directories`},
		{name: "program not executable", ents: []ent{file(kernel.ManifestFile, validManifest), file("bin/tool", "x")},
			path: "bin/tool", msg: `program "bin/tool" of command "t.run" is not executable`},
		{name: "missing manifest", ents: []ent{exe("bin/tool", "x")},
			path: kernel.ManifestFile, msg: `package has no rukh-extension.json at its root`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := makeDir(t, tt.ents)
			if tt.setup != nil {
				tt.setup(t, root)
			}
			lim := defaultLimits
			if tt.lim != nil {
				tt.lim(&lim)
			}
			scratch := filepath.Join(t.TempDir(), "scratch")
			p, err := load(root, scratch, &lim)
			if err == nil {
				t.Fatalf("load succeeded, want %q", tt.msg)
			}
			_ = p
			wantErr(t, err, kernel.CodeInvalid, tt.path, tt.msg)
			assertEmpty(t, scratch)
		})
	}
}

func TestLoadNotFound(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope"), t.TempDir())
	wantErr(t, err, kernel.CodeNotFound, "", "does not exist")
}

func TestLoadFixtures(t *testing.T) {
	tests := []struct {
		dir   string
		name  string
		files []string
	}{
		{"hello", "test.hello", []string{"bin/hello", kernel.ManifestFile}},
		{"notes", "acme.notes", []string{"bin/notes", kernel.ManifestFile}},
		{"echo", "test.echo", []string{"bin/echo", "libexec/echo.sh", kernel.ManifestFile}},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			p, err := Load(filepath.Join("testdata", tt.dir), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if p.Manifest.Name != tt.name {
				t.Errorf("name = %q, want %q", p.Manifest.Name, tt.name)
			}
			if !slices.Equal(p.Files, tt.files) {
				t.Errorf("files = %q, want %q", p.Files, tt.files)
			}
			if !filepath.IsAbs(p.Root) {
				t.Errorf("root %q is not absolute", p.Root)
			}
			raw, _ := os.ReadFile(filepath.Join("testdata", tt.dir, kernel.ManifestFile))
			if !bytes.Equal(p.ManifestJSON, raw) {
				t.Error("ManifestJSON differs from the file")
			}
			if p.Signature != nil {
				t.Errorf("signature = %q, want nil", p.Signature)
			}
			if _, err := ReleaseDirName(p.Digest); err != nil {
				t.Error(err)
			}
		})
	}
}

// A tarball at the archive root, one under a single top-level directory and
// the directory itself load to the same files and digest; Close removes the
// scratch copy.
func TestLoadTarballShapes(t *testing.T) {
	ents := with(dir("lib"), exe("lib/helper", "#!/bin/sh\n"), symlink("bin/helper", "../lib/helper"))
	want, err := Load(makeDir(t, ents), "")
	if err != nil {
		t.Fatal(err)
	}
	var prefixed []ent
	for _, e := range ents {
		e.name = "pkg-1.0/" + e.name
		prefixed = append(prefixed, e)
	}
	shapes := map[string][]ent{
		"root":       ents,
		"dot prefix": append([]ent{dir("./")}, prefixEach(ents, "./")...),
		"one dir":    append([]ent{dir("pkg-1.0/")}, prefixed...),
	}
	for name, es := range shapes {
		t.Run(name, func(t *testing.T) {
			scratch := t.TempDir()
			p, err := Load(writeTemp(t, "p.tgz", tarGz(t, es)), scratch)
			if err != nil {
				t.Fatal(err)
			}
			if p.Digest != want.Digest || !slices.Equal(p.Files, want.Files) {
				t.Errorf("got %s %q, want %s %q", p.Digest, p.Files, want.Digest, want.Files)
			}
			if !strings.HasPrefix(p.Root, scratch) {
				t.Errorf("root %q is not under scratch %q", p.Root, scratch)
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			assertEmpty(t, scratch)
		})
	}
}

func prefixEach(ents []ent, prefix string) []ent {
	out := make([]ent, len(ents))
	for i, e := range ents {
		e.name = prefix + e.name
		out[i] = e
	}
	return out
}

func TestLoadDetectsGzipByContent(t *testing.T) {
	// No .tar.gz suffix: the magic bytes decide.
	p, err := Load(writeTemp(t, "package.bin", tarGz(t, base())), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	// A .tar.gz name on something else is refused.
	_, err = Load(writeTemp(t, "package.tar.gz", []byte("text")), t.TempDir())
	wantErr(t, err, kernel.CodeInvalid, "", "is not a directory or a gzip-compressed tar archive")
}

// git archive writes a pax global header; it creates nothing.
func TestLoadIgnoresPaxGlobalHeader(t *testing.T) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header",
		PAXRecords: map[string]string{"comment": "abc"}}); err != nil {
		t.Fatal(err)
	}
	tw.Flush()
	data := append(buf.Bytes()[:buf.Len()], tarBytes(t, base())...)
	p, err := Load(writeTemp(t, "p.tgz", gzipBytes(t, data)), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if !slices.Equal(p.Files, []string{"bin/tool", kernel.ManifestFile}) {
		t.Errorf("files = %q", p.Files)
	}
}
