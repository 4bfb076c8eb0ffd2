package store

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// The hand-written checks of agent names and task ids accept exactly what
// their regular expressions do.
func TestNameChecksAreTheirRegexps(t *testing.T) {
	for _, tt := range []struct {
		check    func(string) bool
		re       string
		alphabet string
		samples  []string
	}{
		{validAgentName, `^[a-z0-9][a-z0-9-]{0,63}$`, "az09-A_. \n\x00é",
			[]string{"", "a", "-a", "a-", "0", "A", "a b", "a\n", strings.Repeat("a", 64), strings.Repeat("a", 65)}},
		{ValidTaskID, `^t-[0-9a-f]{32}$`, "t-09afgA \n",
			[]string{"", "t-", "t-" + strings.Repeat("0", 32), "t-" + strings.Repeat("f", 32), "t-" + strings.Repeat("F", 32),
				"t-" + strings.Repeat("a", 31), "t-" + strings.Repeat("a", 33), "T-" + strings.Repeat("a", 32), NewTaskID()}},
	} {
		re := regexp.MustCompile(tt.re)
		check := func(s string) {
			if got, want := tt.check(s), re.MatchString(s); got != want {
				t.Errorf("%s: %q: %v, want %v", tt.re, s, got, want)
			}
		}
		for _, s := range tt.samples {
			check(s)
		}
		r := rand.New(rand.NewPCG(1, 2))
		for range 20000 {
			b := make([]byte, r.IntN(8))
			for i := range b {
				b[i] = tt.alphabet[r.IntN(len(tt.alphabet))]
			}
			check(string(b))
			// a task id's length, so the digits are what decides
			check("t-" + strings.Repeat("0", 26) + string(b) + strings.Repeat("0", 6-min(6, len(b))))
		}
	}
}
