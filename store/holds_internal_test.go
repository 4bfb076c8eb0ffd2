package store

import (
	"strings"
	"testing"
)

func TestCommandLine(t *testing.T) {
	args := []string{"/usr/local/bin/rukh", "serve-mcp"}
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{nil, ""},
		{args, "rukh serve-mcp"},
		{[]string{"/bin/rukh", "a", "b", "c", "d", "e"}, "rukh a b c …"},
		{[]string{"rukh", "run\x1b[2J"}, "rukh run?[2J"},
		{[]string{"rukh", strings.Repeat("é", 40)}, "rukh " + strings.Repeat("é", 26) + "…"},
	} {
		if got := commandLine(tc.words); got != tc.want {
			t.Errorf("commandLine(%q) = %q; want %q", tc.words, got, tc.want)
		}
	}
	if args[0] != "/usr/local/bin/rukh" {
		t.Errorf("commandLine changed its argument: %q", args)
	}
}
