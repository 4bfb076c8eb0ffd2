package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeQuickstart runs the README's Install block and then its
// Quickstart block (the sh fence after "<!-- quickstart -->") with bash,
// exactly as written, from a copy of the repository root (a directory of
// symlinks with its own bin/), with a fresh HOME and TMPDIR. Any step that
// fails fails the test.
func TestReadmeQuickstart(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("the quickstart is a bash block; bash is needed")
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	install := fencedBlock(t, string(readme), "## Install\n")
	quickstart := fencedBlock(t, string(readme), "<!-- quickstart -->\n")
	for _, want := range []string{"go build", "-o bin/rukh"} {
		if !strings.Contains(install, want) {
			t.Fatalf("the Install block does not build bin/rukh (%q missing):\n%s", want, install)
		}
	}

	repo, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tmp := removableTempDir(t)
	clone := filepath.Join(tmp, "clone")
	home := filepath.Join(tmp, "home")
	tmpdir := filepath.Join(tmp, "tmp")
	for _, d := range []string{clone, home, tmpdir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "bin" || e.Name() == ".git" {
			continue // Install makes bin/; the quickstart must not rely on an old one
		}
		if err := os.Symlink(filepath.Join(repo, e.Name()), filepath.Join(clone, e.Name())); err != nil {
			t.Fatal(err)
		}
	}

	// Go keeps its own caches while HOME points elsewhere.
	env := []string{"HOME=" + home, "TMPDIR=" + tmpdir, "LANG=C.UTF-8", "PATH=" + os.Getenv("PATH")}
	env = append(env, goEnv(t)...)
	script := "set -euo pipefail\n" + install + "\n" + quickstart + "\n"
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir, cmd.Env = clone, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("the README quickstart failed (%v):\n%s", err, out.String())
	}
	got := out.String()
	// Loose checks that each part did its job; tool names and the exact
	// mcp-config text are not the quickstart's business.
	for _, want := range []string{
		`"title": "buy milk"`,    // notes list --output json
		`"outcome": "succeeded"`, // the envelope of --output json
		"serve-mcp",              // the mcp-config snippet runs it
		`"result":{"tools":[{`,   // serve-mcp answered with tools
	} {
		if !strings.Contains(got, want) {
			t.Errorf("quickstart output lacks %q:\n%s", want, got)
		}
	}
	if _, err := os.Stat(filepath.Join(clone, "bin", "rukh")); err != nil {
		t.Errorf("Install did not build bin/rukh: %v", err)
	}
	if !fileExists(filepath.Join(home, ".rukh-notes", "notes.json")) {
		t.Errorf("the notes example wrote no notes file under HOME")
	}
}

// fencedBlock returns the body of the first ```sh fence after marker.
func fencedBlock(t *testing.T, doc, marker string) string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, marker)
	if !ok {
		t.Fatalf("README.md has no %q", strings.TrimSpace(marker))
	}
	_, rest, ok = strings.Cut(rest, "```sh\n")
	if !ok {
		t.Fatalf("README.md has no sh block after %q", strings.TrimSpace(marker))
	}
	body, _, ok := strings.Cut(rest, "\n```\n")
	if !ok {
		t.Fatalf("the sh block after %q is not closed", strings.TrimSpace(marker))
	}
	return body
}

// removableTempDir is t.TempDir for a test that installs releases: they are
// read-only, so their directories are made writable again before removal.
func removableTempDir(t *testing.T) string {
	tmp := t.TempDir()
	t.Cleanup(func() {
		filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
	})
	return tmp
}

// goEnv is the environment that keeps Go on its own caches and settings in
// a test that points HOME elsewhere.
func goEnv(t *testing.T) []string {
	var env []string
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOPROXY", "GOFLAGS", "GOTOOLCHAIN"} {
		out, err := exec.Command("go", "env", k).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", k, err)
		}
		if v := strings.TrimSpace(string(out)); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}
