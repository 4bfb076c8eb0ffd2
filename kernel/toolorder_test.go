package kernel

import "testing"

func TestToolStem(t *testing.T) {
	fp := "0123456789abcdef01234567"
	for _, c := range []struct{ name, stem string }{
		{"kubernetes_pods__" + fp, "kubernetes_pods__"},
		{"a__" + fp + fp[:24] + fp[:16], "a__"},
		{"stable_name", "stable_name"},
		{"x__" + fp[:23], "x__" + fp[:23]},
		{"x__" + fp[:23] + "G", "x__" + fp[:23] + "G"},
		{"x_" + fp, "x_" + fp},
		{"__" + fp, "__"},
	} {
		if got := toolStem(c.name); got != c.stem {
			t.Errorf("toolStem(%q) = %q, want %q", c.name, got, c.stem)
		}
	}
}
