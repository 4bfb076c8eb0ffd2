package commands

import "testing"

func TestServeHTTPProcs(t *testing.T) {
	for _, tc := range []struct {
		env  string
		n    int
		want int
	}{
		{"", 1, 1},
		{"", 2, 1},
		{"", 8, 7},
		{"2", 2, 2}, // the owner's choice is kept
		{"8", 8, 8},
		{"0", 4, 3}, // Go ignores these, so the rule applies
		{"-1", 4, 3},
		{"many", 4, 3},
	} {
		getenv := func(k string) string {
			if k == "GOMAXPROCS" {
				return tc.env
			}
			return ""
		}
		if got := serveHTTPProcs(getenv, tc.n); got != tc.want {
			t.Errorf("GOMAXPROCS=%q, %d CPUs: %d Ps, want %d", tc.env, tc.n, got, tc.want)
		}
	}
}
