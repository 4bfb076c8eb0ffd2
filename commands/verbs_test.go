package commands

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/kernel"
)

// TestBuiltinVerbsAreTheCLIVerbs ties kernel.BuiltinVerbs, the words no
// extension may take, to the top-level commands of the CLI as it runs:
// a verb missing from the list could be shadowed by an extension, and a
// stale word would refuse extensions for nothing.
func TestBuiltinVerbsAreTheCLIVerbs(t *testing.T) {
	t.Setenv("RUKH_HOME", t.TempDir())
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, h: &home.Home{Env: func(string) string { return "" }}}
	// an owner verb first: the tree is then built without opening a store
	root, err := a.root([]string{"rukh", "version"})
	if err != nil {
		t.Fatal(err)
	}
	// running the tree adds what urfave/cli adds (the completion command)
	if err := root.Run(context.Background(), []string{"rukh", "--help"}); err != nil {
		t.Fatal(err)
	}
	// the help words Main turns into --help, and the built-in namespace
	got := []string{"help", "h", "rukh"}
	for _, c := range root.Commands {
		got = append(got, c.Names()...)
	}
	for i, w := range kernel.BuiltinVerbs {
		if slices.Contains(kernel.BuiltinVerbs[:i], w) {
			t.Errorf("kernel.BuiltinVerbs lists %q twice", w)
		}
		if !slices.Contains(got, w) {
			t.Errorf("kernel.BuiltinVerbs reserves %q, which is no top-level command of the CLI", w)
		}
	}
	for _, w := range got {
		if !kernel.IsBuiltinVerb(w) {
			t.Errorf("the CLI has a top-level command %q that kernel.BuiltinVerbs does not reserve", w)
		}
	}
}

// TestOutcomeExit checks every outcome against the exit codes the README
// documents.
func TestOutcomeExit(t *testing.T) {
	want := map[kernel.Outcome]int{
		kernel.Succeeded: 0, kernel.CommandFailed: 1, kernel.Rejected: 2,
		kernel.ExecutionFailed: 3, kernel.Cancelled: 130,
	}
	for _, o := range kernel.Outcomes {
		if got, ok := want[o]; !ok || outcomeExit(o) != got {
			t.Errorf("outcomeExit(%s) = %d, want %d (known: %v)", o, outcomeExit(o), got, ok)
		}
	}
}
