package kernel

import (
	"regexp"
	"sync"
)

// lazyRE is a regular expression compiled on first use, so that a process
// that never checks a manifest never pays for compiling it at start.
type lazyRE func() *regexp.Regexp

func lazyRegexp(expr string) lazyRE {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

func (re lazyRE) MatchString(s string) bool { return re().MatchString(s) }

func (re lazyRE) String() string { return re().String() }
