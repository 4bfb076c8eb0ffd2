package policy

import "strings"

// nameShape is the shape of every name a profile or revision id holds: a
// letter or digit, then at most max-1 more letters, digits or bytes of
// extra; letters are lower-case unless upper. It is checked by hand, not
// with a regexp: a profile that publishes a thousand packages is checked
// at every serve start.
type nameShape struct {
	extra string
	upper bool
	max   int
}

var (
	plainNames   = nameShape{extra: "-", max: 64}                  // [a-z0-9][a-z0-9-]{0,63}
	commandIDs   = nameShape{extra: "._-", max: 128}               // [a-z0-9][a-z0-9._-]{0,127}
	packageNames = nameShape{extra: ".-", max: 64}                 // [a-z0-9][a-z0-9.-]{0,63}
	revisionIDs  = nameShape{extra: "._:-", upper: true, max: 128} // [A-Za-z0-9][A-Za-z0-9._:-]{0,127}
)

func (n nameShape) MatchString(s string) bool {
	if len(s) == 0 || len(s) > n.max {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case n.upper && 'A' <= c && c <= 'Z':
		case i > 0 && strings.IndexByte(n.extra, c) >= 0:
		default:
			return false
		}
	}
	return true
}
