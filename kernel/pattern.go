package kernel

// pattern is one of the manifest's name rules: a matcher written by hand
// for a regular expression, which is still what an error message shows.
// The regexp package is not linked into rukh for these: its package
// initialisation, and the Unicode tables it keeps, cost every process at
// start (docs/performance.md). pattern_test.go checks each matcher against
// its expression.
type pattern struct {
	expr  string
	match func(string) bool
}

func (p pattern) MatchString(s string) bool { return p.match(s) }

func (p pattern) String() string { return p.expr }

// run is a matcher for "one byte that first accepts, then at most max that
// rest accepts, and nothing else".
func run(first, rest func(byte) bool, max int) func(string) bool {
	return func(s string) bool {
		if len(s) == 0 || len(s) > max+1 || !first(s[0]) {
			return false
		}
		for i := 1; i < len(s); i++ {
			if !rest(s[i]) {
				return false
			}
		}
		return true
	}
}

func isLowerDigit(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isAlnum(c byte) bool { return isLetter(c) || isDigit(c) }

// isAlnumHyphen is semver's identifier byte: [0-9a-zA-Z-].
func isAlnumHyphen(c byte) bool { return isAlnum(c) || c == '-' }

func oneOf(f func(byte) bool, extra string) func(byte) bool {
	return func(c byte) bool {
		if f(c) {
			return true
		}
		for i := range len(extra) {
			if c == extra[i] {
				return true
			}
		}
		return false
	}
}

// isSemver matches semverExpr: three numbers without leading zeros, then
// an optional pre-release of dot-separated identifiers (a number without
// leading zeros, or one with a letter or '-'), then optional build
// metadata of dot-separated non-empty identifiers.
func isSemver(s string) bool {
	core, build, hasBuild := cut(s, '+')
	if hasBuild && !identifiers(build, false) {
		return false
	}
	core, pre, hasPre := cut(core, '-')
	if hasPre && !identifiers(pre, true) {
		return false
	}
	n := 0
	for part := range splitDots(core) {
		if n++; n > 3 || !number(part) {
			return false
		}
	}
	return n == 3
}

// cut splits at the first c.
func cut(s string, c byte) (before, after string, found bool) {
	for i := range len(s) {
		if s[i] == c {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func splitDots(s string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for {
			part, rest, more := cut(s, '.')
			if !yield(part) || !more {
				return
			}
			s = rest
		}
	}
}

// number: 0 or a run of digits that does not start with 0.
func number(s string) bool {
	if s == "" || s[0] == '0' && len(s) > 1 {
		return false
	}
	for i := range len(s) {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// identifiers: dot-separated non-empty runs of [0-9a-zA-Z-]; pre-release
// identifiers of digits alone must be numbers.
func identifiers(s string, pre bool) bool {
	for id := range splitDots(s) {
		if id == "" {
			return false
		}
		digits := true
		for i := range len(id) {
			if !isAlnumHyphen(id[i]) {
				return false
			}
			digits = digits && isDigit(id[i])
		}
		if pre && digits && !number(id) {
			return false
		}
	}
	return true
}
