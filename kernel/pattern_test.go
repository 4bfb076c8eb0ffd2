package kernel

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// Each hand-written matcher agrees with its regular expression on edge
// cases and on many random strings over the bytes the rules care about.
func TestPatternsMatchTheirExpressions(t *testing.T) {
	patterns := map[string]pattern{
		"name": nameRE, "id": idRE, "word": wordRE, "paramID": paramIDRE,
		"short": shortRE, "feature": featureRE, "semver": semverRE, "settingID": settingIDRE,
	}
	edge := []string{
		"", "a", "A", "0", "-", ".", "_", "a-", "a.b", "a_b", "-a", ".a", "_a", "aB", "a b", "a\n", "é",
		strings.Repeat("a", 32), strings.Repeat("a", 33), strings.Repeat("a", 64), strings.Repeat("a", 65),
		strings.Repeat("a", 128), strings.Repeat("a", 129),
		"1.2.3", "0.0.0", "01.2.3", "1.02.3", "1.2.03", "1.2", "1.2.3.4", "1.2.3-", "1.2.3+", "1.2.3-alpha",
		"1.2.3-alpha.1", "1.2.3-0", "1.2.3-00", "1.2.3-01", "1.2.3-0a", "1.2.3-a-b", "1.2.3--", "1.2.3-alpha..1",
		"1.2.3+build", "1.2.3+001", "1.2.3+b.1-x", "1.2.3+b..1", "1.2.3-rc.1+b.2", "1.2.3-rc+", "1.2.3+b+c",
		"1.2.3-rc-1+b-2", "1.2.3\n", "v1.2.3", "1.2.3-α",
	}
	alphabet := "aZ09-._+\n é"
	rng := rand.New(rand.NewPCG(1, 2))
	for name, p := range patterns {
		re := regexp.MustCompile(p.String())
		check := func(s string) {
			if got, want := p.MatchString(s), re.MatchString(s); got != want {
				t.Errorf("%s(%q) = %v, the expression %s says %v", name, s, got, p, want)
			}
		}
		for _, s := range edge {
			check(s)
		}
		for range 20000 {
			var b strings.Builder
			if name == "semver" && rng.IntN(2) == 0 {
				b.WriteString([]string{"1.2.3", "0.1.0", "10.0.0", "1.0"}[rng.IntN(4)])
			}
			for range rng.IntN(10) {
				b.WriteByte(alphabet[rng.IntN(len(alphabet))])
			}
			check(b.String())
		}
	}
}
