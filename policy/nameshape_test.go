package policy

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// Each name shape accepts exactly what its regular expression does.
func TestNameShapesAreTheirRegexps(t *testing.T) {
	for _, tt := range []struct {
		shape nameShape
		re    string
	}{
		{plainNames, `^[a-z0-9][a-z0-9-]{0,63}$`},
		{commandIDs, `^[a-z0-9][a-z0-9._-]{0,127}$`},
		{packageNames, `^[a-z0-9][a-z0-9.-]{0,63}$`},
		{revisionIDs, `^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`},
	} {
		re := regexp.MustCompile(tt.re)
		check := func(s string) {
			if got, want := tt.shape.MatchString(s), re.MatchString(s); got != want {
				t.Errorf("%s: %q: %v, want %v", tt.re, s, got, want)
			}
		}
		for _, s := range []string{"", "a", "-a", "a-", ".a", "a.b", "A", "aB", "r1", "r:1", "é", "a\n", "a b", "0", "_x"} {
			check(s)
		}
		for _, n := range []int{63, 64, 65, 127, 128, 129} {
			b := make([]byte, n)
			for i := range b {
				b[i] = 'a'
			}
			check(string(b))
		}
		alphabet := "aZ09.-_:/ \n\x00é"
		r := rand.New(rand.NewPCG(1, 2))
		for range 20000 {
			b := make([]byte, r.IntN(8))
			for i := range b {
				b[i] = alphabet[r.IntN(len(alphabet))]
			}
			check(string(b))
		}
	}
}
