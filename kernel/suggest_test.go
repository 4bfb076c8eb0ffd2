package kernel

import "testing"

func TestDidYouMean(t *testing.T) {
	verbs := []string{"install", "uninstall", "publish", "policy", "deactivate", "describe", "list", "h", "tools", "tool"}
	tests := []struct{ typed, want string }{
		{"publsh", `did you mean "publish"?`},
		{"pubilsh", `did you mean "publish"?`}, // one swap
		{"isntall", `did you mean "install"?`},
		{"pub", `did you mean "publish"?`}, // a prefix
		{"de", `did you mean "deactivate" or "describe"?`},
		{"lst", `did you mean "list"?`},
		{"tol", `did you mean "tool"?`},
		{"x", ""}, // one letter is never a guess
		{"zzzzzz", ""},
		{"list", ""}, // an exact name is not a typo
	}
	for _, tt := range tests {
		if got := DidYouMean(tt.typed, "", verbs); got != tt.want {
			t.Errorf("DidYouMean(%q) = %q, want %q", tt.typed, got, tt.want)
		}
	}
	if got := DidYouMean("alow-unsigned", "--", []string{"allow-unsigned", "json"}); got != `did you mean "--allow-unsigned"?` {
		t.Errorf("flag: %q", got)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "abc", 0}, {"abc", "acb", 1}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"é", "e", 1}} {
		if got := editDistance(tt.a, tt.b); got != tt.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.d)
		}
	}
}
