package policy_test

import (
	"testing"

	"github.com/rukh-dev/rukh/policy"
)

// A publish list names a package when it lists the package or one of its
// commands: the rule the build applies, which rukh dev asks about.
func TestPublishNames(t *testing.T) {
	ids := []string{"notes.add", "notes.list"}
	for _, tt := range []struct {
		name string
		pub  policy.Publish
		want bool
	}{
		{"empty", policy.Publish{}, false},
		{"the package", policy.Publish{Packages: []string{"other", "notes"}}, true},
		{"one command", policy.Publish{Commands: []string{"notes.list"}}, true},
		{"another package's command", policy.Publish{Commands: []string{"other.add"}, Packages: []string{"other"}}, false},
	} {
		if got := tt.pub.Names("notes", ids); got != tt.want {
			t.Errorf("%s: Names = %v, want %v", tt.name, got, tt.want)
		}
	}
	if !(policy.Publish{Packages: []string{"notes"}}).Names("notes", nil) {
		t.Error("a listed package with no commands given: not named")
	}
}
