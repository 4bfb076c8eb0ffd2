package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goFiles lists the repository's Go files, test files included, skipping
// testdata and hidden directories.
func goFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 100 {
		t.Fatalf("found only %d Go files: the walk is not at the repository root", len(files))
	}
	return files
}

// TestOneWayToBuildAnError: a coded error is built with kernel.Errorf and
// refined with AtPath, WithHint and Wrap; only kernel/errors.go writes the
// struct literal, so every error passes through the one constructor.
func TestOneWayToBuildAnError(t *testing.T) {
	fset := token.NewFileSet()
	for _, path := range goFiles(t) {
		if filepath.ToSlash(path) == "kernel/errors.go" {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		inKernel := f.Name.Name == "kernel" || f.Name.Name == "kernel_test" && filepath.Dir(path) == "kernel"
		ast.Inspect(f, func(n ast.Node) bool {
			cl, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			switch typ := cl.Type.(type) {
			case *ast.SelectorExpr:
				if x, ok := typ.X.(*ast.Ident); ok && x.Name == "kernel" && typ.Sel.Name == "Error" {
					t.Errorf("%s: a kernel.Error literal; build it with kernel.Errorf", fset.Position(cl.Pos()))
				}
			case *ast.Ident:
				if inKernel && typ.Name == "Error" {
					t.Errorf("%s: an Error literal; build it with Errorf", fset.Position(cl.Pos()))
				}
			}
			return true
		})
	}
}

// TestStandsAlone: the repository is read without any outside document, so
// nothing cites one by section number.
func TestStandsAlone(t *testing.T) {
	cite := regexp.MustCompile(`\bSPEC\b|§\s*\d`)
	var files []string
	files = append(files, goFiles(t)...)
	for _, dir := range []string{"docs", "scripts", "testdata", "examples"} {
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.Contains(path, "node_modules") {
				files = append(files, path)
			}
			return nil
		})
	}
	files = append(files, "README.md")
	for _, path := range files {
		if path == "house_test.go" {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if loc := cite.FindStringIndex(line); loc != nil {
				t.Errorf("%s:%d cites an outside document: %s", path, i+1, strings.TrimSpace(line))
			}
		}
	}
}

// TestImportsGoOneWay: the layout's import rules (README, Layout), read
// from every non-test file of the packages they name.
func TestImportsGoOneWay(t *testing.T) {
	const mod = "github.com/rukh-dev/rukh/"
	imports := map[string]map[string]bool{} // package dir → imports
	for _, path := range goFiles(t) {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if imports[dir] == nil {
			imports[dir] = map[string]bool{}
		}
		for _, im := range f.Imports {
			imports[dir][strings.Trim(im.Path.Value, `"`)] = true
		}
	}
	rules := []struct {
		pkg     string
		refuses func(im string) bool
		why     string
	}{
		{"kernel", func(im string) bool { return strings.HasPrefix(im, mod) }, "kernel imports no other rukh package"},
		{"search", func(im string) bool { return strings.HasPrefix(im, mod) }, "search imports no rukh package"},
		{"oauth", func(im string) bool { return strings.HasPrefix(im, mod) && im != mod+"kernel" }, "oauth imports only kernel of rukh"},
		{"policy", func(im string) bool { return strings.HasPrefix(im, mod) && im != mod+"kernel" }, "policy imports only kernel of rukh"},
		{"store", func(im string) bool {
			return strings.HasPrefix(im, mod) && im != mod+"kernel" && im != mod+"search"
		}, "store imports only kernel and search of rukh"},
		{"commands", func(im string) bool {
			return im == mod+"mcpcore" || im == mod+"mcpstdio" || im == mod+"mcphttp"
		}, "commands never imports the protocol or a transport"},
		{"home", func(im string) bool { return im == mod+"serve" || im == mod+"commands" }, "home never imports serve or commands"},
	}
	for _, r := range rules {
		if imports[r.pkg] == nil {
			t.Errorf("no package %s: the rule %q checks nothing", r.pkg, r.why)
		}
		for im := range imports[r.pkg] {
			if r.refuses(im) {
				t.Errorf("%s imports %s: %s", r.pkg, im, r.why)
			}
		}
	}
	// Only store holds the stores' clients (localetcd, the tests' etcd
	// server, is never linked into rukh).
	for dir, ims := range imports {
		if dir == "store" || dir == "localetcd" || strings.HasPrefix(dir, "localetcd/") {
			continue
		}
		for im := range ims {
			if strings.HasPrefix(im, "go.etcd.io/") {
				t.Errorf("%s imports %s: only store imports bbolt or etcd", dir, im)
			}
		}
	}
}
