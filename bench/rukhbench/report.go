//go:build linux

package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// row is one line of the report. A row with a target has a verdict; a row
// without one is context (a baseline or a breakdown).
type row struct {
	name    string
	n       int
	median  string
	p90     string
	target  string
	ratio   string
	verdict string // "ok", "MISSED" or ""
	load    string // the host's 1-minute load before→after the measurement
}

// stats is a sorted sample of durations.
type stats []time.Duration

func newStats(d []time.Duration) stats {
	s := slices.Clone(d)
	slices.Sort(s)
	return s
}

// q is the nearest-rank quantile (q in [0,1]).
func (s stats) q(q float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	i := int(q*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

func (s stats) median() time.Duration {
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func (s stats) p90() time.Duration { return s.q(0.9) }

// ms formats a duration in milliseconds with precision that suits it.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v < 1:
		return fmt.Sprintf("%.3f ms", v)
	case v < 100:
		return fmt.Sprintf("%.2f ms", v)
	default:
		return fmt.Sprintf("%.0f ms", v)
	}
}

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISSED"
}

// timeRow is a row for a latency sample measured against an absolute limit.
func timeRow(name string, s stats, limit time.Duration) row {
	r := row{name: name, n: len(s), median: ms(s.median()), p90: ms(s.p90())}
	if limit > 0 {
		r.target = "≤ " + ms(limit)
		r.ratio = fmt.Sprintf("%.2f×", float64(s.median())/float64(limit))
		r.verdict = verdict(s.median() <= limit)
	}
	return r
}

func printTable(w io.Writer, rows []row) {
	head := row{name: "measurement", median: "median", p90: "p90", target: "target", ratio: "ratio", verdict: "verdict", load: "load"}
	cells := func(r row) []string {
		n := "n"
		if r.n > 0 {
			n = fmt.Sprint(r.n)
		} else if r.name != head.name {
			n = ""
		}
		return []string{r.name, n, r.median, r.p90, r.target, r.ratio, r.verdict, r.load}
	}
	all := append([]row{head}, rows...)
	width := make([]int, 8)
	for _, r := range all {
		for i, c := range cells(r) {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	line := func(cs []string) {
		var b strings.Builder
		for i, c := range cs {
			pad := width[i] - len([]rune(c))
			if i == 1 || i == 2 || i == 3 || i == 5 { // numbers right-aligned
				b.WriteString(strings.Repeat(" ", pad) + c)
			} else {
				b.WriteString(c + strings.Repeat(" ", pad))
			}
			if i < len(cs)-1 {
				b.WriteString("  ")
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	line(cells(head))
	sep := make([]string, 8)
	for i := range sep {
		sep[i] = strings.Repeat("-", width[i])
	}
	line(sep)
	for _, r := range rows {
		line(cells(r))
	}
}
