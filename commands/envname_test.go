package commands

import "testing"

func TestIsEnvName(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"RUKH_TOKEN", true}, {"_x", true}, {"a1", true}, {"A", true},
		{"", false}, {"1A", false}, {"A-B", false}, {"A B", false}, {"A=B", false}, {"É", false}, {"A\n", false},
	} {
		if got := isEnvName(tc.name); got != tc.want {
			t.Errorf("isEnvName(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}
