package kernel

import (
	"path"
	"strings"
)

// Bounds of a need or a grant.
const (
	MaxConfinePaths   = 64   // entries of one read or write list
	MaxConfinePathLen = 4096 // bytes of one entry
	MaxProcesses      = 4096 // processes a need or a template may name
)

// ConfinePathProblem says what is wrong with p as an entry of a read or
// write list of a need or a template; "" when it is sound. An entry is a
// keyword ("release", "scratch"), an absolute path or a path under the
// owner's home ("~" or "~/..."), clean and without "..".
func ConfinePathProblem(p string) string {
	switch {
	case p == PathRelease || p == PathScratch:
		return ""
	case p == "":
		return "empty path"
	case len(p) > MaxConfinePathLen:
		return "longer than 4096 bytes"
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return "contains a control character"
		}
	}
	rest := p
	switch {
	case p == "~":
		return ""
	case strings.HasPrefix(p, "~/"):
		rest = p[1:]
	case !strings.HasPrefix(p, "/"):
		return `not an absolute path, "~/...", "release" or "scratch"`
	}
	for _, seg := range strings.Split(rest, "/") {
		if seg == ".." {
			return `has a ".." segment`
		}
	}
	if c := path.Clean(rest); c != rest {
		return "not a clean path (want " + p[:len(p)-len(rest)] + c + ")"
	}
	return ""
}

// ResolveHome turns a "~" or "~/..." entry into a path under home; other
// entries are returned as they are.
func ResolveHome(p, home string) string {
	switch {
	case home == "":
		return p
	case p == "~":
		return path.Clean(home)
	case strings.HasPrefix(p, "~/"):
		return path.Join(home, p[2:])
	}
	return p
}

// UnderHome reports whether p names a path under the owner's home ("~"
// or "~/...").
func UnderHome(p string) bool { return p == "~" || strings.HasPrefix(p, "~/") }

// WithinPath reports whether p lies within dir (both clean absolute paths
// or the same keyword).
func WithinPath(p, dir string) bool {
	switch {
	case p == dir:
		return true
	case !strings.HasPrefix(p, "/") || !strings.HasPrefix(dir, "/"):
		return false
	case dir == "/":
		return true
	}
	return strings.HasPrefix(p, dir+"/")
}
