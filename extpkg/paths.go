package extpkg

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/rukh-dev/rukh/kernel"
)

func invalid(p, format string, args ...any) *kernel.Error {
	e := kernel.Errorf(kernel.CodeInvalid, format, args...)
	e.Path = p
	return e
}

func internal(p string, err error) *kernel.Error {
	return kernel.Errorf(kernel.CodeInternal, "cannot read package").AtPath(p).Wrap(err)
}

// checkElem reports why one path element is not allowed in a package, or "".
// Control characters and backslashes are refused so names print safely,
// hash unambiguously (dirhash forbids newlines) and mean the same everywhere.
func checkElem(elem string) string {
	switch {
	case elem == "" || elem == "." || elem == "..":
		return "is not a valid path"
	case len(elem) > MaxNameBytes:
		return fmt.Sprintf("has a name longer than %d bytes", MaxNameBytes)
	case !utf8.ValidString(elem):
		return "is not valid UTF-8"
	case strings.ContainsRune(elem, '\\'):
		return "contains a backslash"
	}
	for _, r := range elem {
		if r < 0x20 || r == 0x7f {
			return "contains a control character"
		}
	}
	return ""
}

// checkRel checks a clean, slash-separated path relative to a package root.
func checkRel(rel string, lim *limits) *kernel.Error {
	if rel == "" || strings.HasPrefix(rel, "/") {
		return invalid(rel, "entry %q is an absolute path", rel)
	}
	if len(rel) > lim.pathBytes {
		return invalid(rel, "entry %q is longer than %d bytes", rel, lim.pathBytes)
	}
	elems := strings.Split(rel, "/")
	if len(elems) > lim.pathDepth {
		return invalid(rel, "entry %q is nested deeper than %d levels", rel, lim.pathDepth)
	}
	for _, e := range elems {
		if e == ".." {
			return invalid(rel, "entry %q escapes the package", rel)
		}
		if why := checkElem(e); why != "" {
			return invalid(rel, "entry %q %s", rel, why)
		}
	}
	return nil
}

// checkLinkTarget checks a symlink's target text lexically: relative, clean,
// printable and inside the package when resolved from the link's directory.
func checkLinkTarget(rel, target string, lim *limits) *kernel.Error {
	switch {
	case target == "":
		return invalid(rel, "symlink %q has an empty target", rel)
	case strings.HasPrefix(target, "/"):
		return invalid(rel, "symlink %q points to the absolute path %q", rel, target)
	case len(target) > lim.pathBytes:
		return invalid(rel, "symlink %q has a target longer than %d bytes", rel, lim.pathBytes)
	case path.Clean(target) != target:
		return invalid(rel, "symlink %q has target %q, which is not a clean path", rel, target)
	}
	for _, e := range strings.Split(target, "/") {
		if e == ".." {
			continue
		}
		if why := checkElem(e); why != "" {
			return invalid(rel, "symlink %q has target %q, which %s", rel, target, why)
		}
	}
	if j := path.Join(path.Dir(rel), target); j == ".." || strings.HasPrefix(j, "../") {
		return invalid(rel, "symlink %q escapes the package (target %q)", rel, target)
	}
	return nil
}

// checkModeBits refuses set-id and sticky bits on a file.
func checkModeBits(rel string, m os.FileMode) *kernel.Error {
	switch {
	case m&os.ModeSetuid != 0:
		return invalid(rel, "%q has the setuid bit", rel)
	case m&os.ModeSetgid != 0:
		return invalid(rel, "%q has the setgid bit", rel)
	case m&os.ModeSticky != 0:
		return invalid(rel, "%q has the sticky bit", rel)
	}
	return nil
}

type kind uint8

const (
	kindDir kind = iota + 1
	kindFile
	kindLink
)

type entry struct {
	kind   kind
	exec   bool   // regular file with the owner execute bit
	target string // symlink target text
}

// tree is a checked package directory: every entry by relative path.
type tree struct {
	root    string
	entries map[string]entry
}

// files returns the sorted non-directory entries.
func (t *tree) files() []string {
	var out []string
	for rel, e := range t.entries {
		if e.kind != kindDir {
			out = append(out, rel)
		}
	}
	slices.Sort(out)
	return out
}

// walk checks the directory root as a package: it never follows a symlink,
// refuses anything but directories, regular files and in-package symlinks
// to regular files, and applies the count, size and path limits.
func walk(root string, lim *limits) (*tree, error) {
	t := &tree{root: root, entries: map[string]entry{}}
	var total int64
	var visit func(dir string) error
	visit = func(dir string) error {
		des, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
		if err != nil {
			return internal(dir, err)
		}
		for _, de := range des {
			rel := de.Name()
			if dir != "" {
				rel = dir + "/" + rel
			}
			if err := checkRel(rel, lim); err != nil {
				return err
			}
			if len(t.entries) >= lim.files {
				return invalid("", "package has more than %d files and directories", lim.files)
			}
			fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
			if err != nil {
				return internal(rel, err)
			}
			m := fi.Mode()
			switch {
			case m.IsDir():
				t.entries[rel] = entry{kind: kindDir}
				if err := visit(rel); err != nil {
					return err
				}
			case m.IsRegular():
				if err := checkModeBits(rel, m); err != nil {
					return err
				}
				if fi.Size() > lim.fileBytes {
					return invalid(rel, "file %q is larger than %d bytes", rel, lim.fileBytes)
				}
				if total += fi.Size(); total > lim.packageBytes {
					return invalid("", "package is larger than %d bytes", lim.packageBytes)
				}
				t.entries[rel] = entry{kind: kindFile, exec: m.Perm()&0o100 != 0}
			case m&os.ModeSymlink != 0:
				target, err := os.Readlink(filepath.Join(root, filepath.FromSlash(rel)))
				if err != nil {
					return internal(rel, err)
				}
				if err := checkLinkTarget(rel, target, lim); err != nil {
					return err
				}
				t.entries[rel] = entry{kind: kindLink, target: target}
			default:
				return refuseType(rel, m)
			}
		}
		return nil
	}
	if err := visit(""); err != nil {
		return nil, err
	}
	for _, rel := range t.files() {
		if t.entries[rel].kind == kindLink {
			if _, err := t.resolve(rel); err != nil {
				return nil, err
			}
		}
	}
	return t, nil
}

func refuseType(rel string, m os.FileMode) *kernel.Error {
	switch {
	case m&os.ModeDevice != 0:
		return invalid(rel, "device file %q is not allowed", rel)
	case m&os.ModeNamedPipe != 0:
		return invalid(rel, "fifo %q is not allowed", rel)
	case m&os.ModeSocket != 0:
		return invalid(rel, "socket %q is not allowed", rel)
	}
	return invalid(rel, "%q has an unsupported file type", rel)
}

// resolve follows rel through in-package symlinks to a regular file and
// returns that file's path. Lexical resolution is exact here: every
// directory in the tree is a real directory (walk never descends a symlink)
// and every target is a clean path, so ".." only ever leaves real
// directories.
func (t *tree) resolve(rel string) (string, error) {
	cur := rel
	for hops := 0; ; hops++ {
		e, ok := t.entries[cur]
		switch {
		case !ok:
			return "", invalid(rel, "symlink %q points to %q, which does not exist", rel, cur)
		case e.kind == kindFile:
			return cur, nil
		case e.kind == kindDir:
			return "", invalid(rel, "symlink %q points to the directory %q", rel, cur)
		}
		if hops == maxSymlinkHops {
			return "", invalid(rel, "symlink %q goes through more than %d symlinks", rel, maxSymlinkHops)
		}
		next := path.Join(path.Dir(cur), e.target)
		if next == "." {
			return "", invalid(rel, "symlink %q points to the package root directory", rel)
		}
		if next == ".." || strings.HasPrefix(next, "../") {
			return "", invalid(rel, "symlink %q escapes the package (target %q)", rel, e.target)
		}
		cur = next
	}
}
