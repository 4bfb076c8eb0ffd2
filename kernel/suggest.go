package kernel

import (
	"fmt"
	"sort"
	"strings"
)

// DidYouMean returns a hint for a mistyped word: the names within two
// edits of it (a swap of neighbours counts as one), or that it begins,
// closest first, each with prefix ("--" for flags); "" when none is close.
func DidYouMean(typed, prefix string, names []string) string {
	best, dist := []string(nil), 3
	seen := map[string]bool{}
	for _, n := range names {
		if n == typed || len(n) < 2 || seen[n] {
			continue // single letters (h, v, t) are never what someone meant
		}
		seen[n] = true
		d := editDistance(typed, n)
		if len(typed) >= 2 && strings.HasPrefix(n, typed) {
			d = min(d, 1)
		}
		if d >= len([]rune(typed)) {
			continue
		}
		switch {
		case d < dist:
			best, dist = []string{n}, d
		case d == dist:
			best = append(best, n)
		}
	}
	if len(best) == 0 || len(best) > 3 {
		return ""
	}
	sort.Strings(best)
	q := make([]string, len(best))
	for i, n := range best {
		q[i] = fmt.Sprintf("%q", prefix+n)
	}
	return "did you mean " + strings.Join(q, " or ") + "?"
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of adjacent characters.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}
