package extpkg

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/mod/sumdb/dirhash"

	"github.com/rukh-dev/rukh/kernel"
)

func digestOf(t *testing.T, root string) string {
	t.Helper()
	tr, err := walk(root, &defaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Digest(root, tr.files())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDigest(t *testing.T) {
	pkg := with(file("lib/data.txt", "data\n"), symlink("bin/alias", "tool"))
	ref := digestOf(t, makeDir(t, pkg))
	tests := []struct {
		name   string
		change func(t *testing.T, root string)
		same   bool
	}{
		{name: "same content elsewhere", change: func(*testing.T, string) {}, same: true},
		{name: "signature file ignored", same: true, change: func(t *testing.T, root string) {
			write(t, root, kernel.SignatureFile, "rukh-sig:1 0000000000000000 AAAA\n")
		}},
		{name: "other mode bits ignored", same: true, change: func(t *testing.T, root string) {
			chmod(t, root, "lib/data.txt", 0o600)
		}},
		{name: "empty directory ignored", same: true, change: func(t *testing.T, root string) {
			if err := os.Mkdir(filepath.Join(root, "empty"), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "executable bit added", change: func(t *testing.T, root string) { chmod(t, root, "lib/data.txt", 0o755) }},
		{name: "executable bit removed", change: func(t *testing.T, root string) { chmod(t, root, "bin/tool", 0o644) }},
		{name: "content changed", change: func(t *testing.T, root string) { write(t, root, "lib/data.txt", "data!\n") }},
		{name: "file renamed", change: func(t *testing.T, root string) {
			if err := os.Rename(filepath.Join(root, "lib/data.txt"), filepath.Join(root, "lib/data2.txt")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "file added", change: func(t *testing.T, root string) { write(t, root, "extra", "") }},
		{name: "symlink target changed", change: func(t *testing.T, root string) {
			relink(t, root, "bin/alias", "../lib/data.txt")
		}},
		{name: "symlink replaced by its target's content", change: func(t *testing.T, root string) {
			os.Remove(filepath.Join(root, "bin/alias"))
			write(t, root, "bin/alias", "#!/bin/sh\n")
			chmod(t, root, "bin/alias", 0o755)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := makeDir(t, pkg)
			tt.change(t, root)
			got := digestOf(t, root)
			if (got == ref) != tt.same {
				t.Errorf("digest %s vs %s: same = %v, want %v", got, ref, got == ref, tt.same)
			}
		})
	}
}

// Without executables or symlinks the digest is the plain dirhash, so
// standard tools can reproduce it.
func TestDigestMatchesDirhash(t *testing.T) {
	root := makeDir(t, []ent{file("a.txt", "a"), file("sub/b.txt", "b")})
	want, err := dirhash.HashDir(root, "", dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	if got := digestOf(t, root); got != want {
		t.Errorf("digest = %s, dirhash = %s", got, want)
	}
}

func TestDigestRefusesBadInput(t *testing.T) {
	root := makeDir(t, base())
	tests := []struct {
		files []string
		path  string
		msg   string
	}{
		{[]string{"../x"}, "../x", `entry "../x" escapes the package`},
		{[]string{"/etc/passwd"}, "/etc/passwd", `is an absolute path`},
		{[]string{"bin"}, "bin", `"bin" is a directory, not a file`},
		{[]string{"bin/tool", "bin/tool"}, "bin/tool", `duplicate entry "bin/tool"`},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			_, err := Digest(root, tt.files)
			wantErr(t, err, kernel.CodeInvalid, tt.path, tt.msg)
		})
	}
}

func TestReleaseDirName(t *testing.T) {
	got, err := ReleaseDirName("h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=")
	if err != nil {
		t.Fatal(err)
	}
	if want := "h1-e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	for _, bad := range []string{"", "h1:", "h2:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", "h1:AAAA", "h1:../../etc"} {
		if _, err := ReleaseDirName(bad); err == nil {
			t.Errorf("ReleaseDirName(%q) succeeded", bad)
		}
	}
}

func write(t *testing.T, root, rel, data string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func chmod(t *testing.T, root, rel string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(filepath.Join(root, filepath.FromSlash(rel)), mode); err != nil {
		t.Fatal(err)
	}
}

func relink(t *testing.T, root, rel, target string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	os.Remove(p)
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}
