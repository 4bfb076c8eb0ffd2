package kernel

import "testing"

func TestPointerToken(t *testing.T) {
	for in, want := range map[string]string{"": "", "a": "a", "a/b": "a~1b", "~": "~0", "~1": "~01", "/~/": "~1~0~1"} {
		if got := PointerToken(in); got != want {
			t.Errorf("PointerToken(%q) = %q, want %q", in, got, want)
		}
	}
}
