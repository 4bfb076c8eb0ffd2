package kernel

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInvokeShellExample runs examples/shell-ext (a Python program speaking
// rukh.invoke/1) through the Runner from its own manifest.
func TestInvokeShellExample(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs("../examples/shell-ext")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseManifest(data)
	if err != nil {
		t.Fatalf("example manifest: %v", err)
	}
	byID := map[string]*Command{}
	for i := range m.Commands {
		byID[m.Commands[i].ID] = &m.Commands[i]
	}
	tests := []struct {
		name    string
		command string
		input   map[string]any
		outcome Outcome
		reason  string
		result  string
		stderr  string
		steps   string
	}{
		{"greet default", "hello.greet", map[string]any{"name": "world"}, Succeeded, "", `{"kind":"text","text":"Hello, world!"}`, "", ""},
		{"greet shout unicode", "hello.greet", map[string]any{"name": "Wörld \"q\"", "shout": true}, Succeeded, "", `{"kind":"text","text":"HELLO, WÖRLD \"Q\"!"}`, "", ""},
		{"greet blank", "hello.greet", map[string]any{"name": "  "}, CommandFailed, "name is blank", "", "", ""},
		{"count", "hello.count", map[string]any{"text": "one two\nthree é"}, Succeeded, "",
			`{"kind":"structured","data":{"words":4,"characters":15,"lines":2}}`, "hello: counting 15 characters\n", "counting,counted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			diag := NewDiagnostics(4096)
			var steps []string
			inv := &Invocation{
				ID:         NewInvocationID(),
				Command:    byID[tt.command],
				Dir:        dir,
				Request:    Request{Command: tt.command, Input: tt.input},
				Stdout:     diag,
				Stderr:     diag,
				OnProgress: func(p Progress) { steps = append(steps, p.Message) },
			}
			res := NewRunner().Invoke(context.Background(), inv)
			if res.Outcome != tt.outcome || !strings.Contains(res.Reason, tt.reason) {
				t.Fatalf("got %s %q, want %s %q; diagnostics: %s", res.Outcome, res.Reason, tt.outcome, tt.reason, diag)
			}
			if string(res.CommandResult) != tt.result {
				t.Errorf("commandResult\n got %s\nwant %s", res.CommandResult, tt.result)
			}
			if got := diag.String(); got != tt.stderr {
				t.Errorf("diagnostics %q, want %q", got, tt.stderr)
			}
			if got := strings.Join(steps, ","); got != tt.steps {
				t.Errorf("progress %q, want %q", got, tt.steps)
			}
		})
	}
}
