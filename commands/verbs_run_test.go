package commands

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/rukh-dev/rukh/extpkg"
	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
)

// testApp is an app over a fresh home, its output in the buffers.
func testApp(t *testing.T) (a *app, stdout, stderr *bytes.Buffer) {
	t.Helper()
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	st := store.New(t.TempDir())
	t.Cleanup(func() { st.Close() })
	return &app{stdin: strings.NewReader(""), stdout: stdout, stderr: stderr,
		h: &home.Home{Env: func(string) string { return "" }, Store: st}}, stdout, stderr
}

// The verbs run from their options, without the CLI: trust remove refuses
// a key that signed a release the draft activates, unless forced.
func TestRunTrustRemove(t *testing.T) {
	tests := []struct {
		name      string
		activate  bool // the draft activates the release the key signed
		force     bool
		wantCode  kernel.Code
		wantOut   string
		wantWarns bool
	}{
		{name: "unused", wantOut: "removed key pub\n"},
		{name: "in use", activate: true, wantCode: kernel.CodeConflict},
		{name: "in use, forced", activate: true, force: true, wantOut: "removed key pub\n", wantWarns: true},
		{name: "unknown key", wantCode: kernel.CodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, stdout, stderr := testApp(t)
			pub, _, err := extpkg.GenerateKey()
			if err != nil {
				t.Fatal(err)
			}
			if tt.name != "unknown key" {
				if err := a.runTrustAdd(&trustAddOptions{Name: "pub", Source: pub}); err != nil {
					t.Fatal(err)
				}
			}
			k, _, _ := a.h.Store.Key("pub")
			if _, err := a.h.Store.PutRelease(store.Release{Name: "notes", Version: "1.0.0", Digest: "sha256:" + strings.Repeat("a", 64), Signer: "pub", KeyID: k.KeyID}); err != nil {
				t.Fatal(err)
			}
			if tt.activate {
				if err := a.h.Store.UpdateDraft(func(d *store.Draft) error {
					d.Active = map[string]string{"notes": "1.0.0"}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			stdout.Reset()
			err = a.runTrustRemove(&trustRemoveOptions{Name: "pub", Force: tt.force})
			if got := kernel.ErrorCode(err); err != nil && got != tt.wantCode || err == nil && tt.wantCode != "" {
				t.Fatalf("err = %v (code %q), want code %q", err, got, tt.wantCode)
			}
			if tt.wantCode == kernel.CodeConflict && !strings.Contains(kernel.ErrorHint(err), "rukh deactivate notes, then rukh publish") {
				t.Errorf("hint = %q", kernel.ErrorHint(err))
			}
			if stdout.String() != tt.wantOut {
				t.Errorf("stdout = %q, want %q", stdout.String(), tt.wantOut)
			}
			if got := strings.Contains(stderr.String(), "notes@1.0.0 (activated in the draft) no longer runs"); got != tt.wantWarns {
				t.Errorf("stderr = %q", stderr.String())
			}
		})
	}
}

func TestRunAgentOptions(t *testing.T) {
	tests := []struct {
		name     string
		run      func(a *app) error
		wantCode kernel.Code
		wantErr  string
	}{
		{"add without endpoint", func(a *app) error { return a.runAgentAdd(&agentAddOptions{Name: "bot"}) },
			kernel.CodeUsage, "agent add needs --endpoint E (the endpoint the agent may call)"},
		{"add to an unknown endpoint", func(a *app) error { return a.runAgentAdd(&agentAddOptions{Name: "bot", Endpoint: "nope"}) },
			kernel.CodeNotFound, `the profile has no endpoint "nope"`},
		{"token --command without --once", func(a *app) error {
			return a.runAgentToken(&agentTokenOptions{Name: "bot", Command: "x.y", CommandSet: true})
		}, kernel.CodeUsage, "--command binds a one-time token: add --once"},
		{"add", func(a *app) error { return a.runAgentAdd(&agentAddOptions{Name: "bot", Endpoint: "local"}) }, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, _, _ := testApp(t)
			a.stderr = io.Discard
			err := tt.run(a)
			if tt.wantCode == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if kernel.ErrorCode(err) != tt.wantCode || err.Error() != tt.wantErr {
				t.Fatalf("err = %v (code %q), want %q (code %q)", err, kernel.ErrorCode(err), tt.wantErr, tt.wantCode)
			}
		})
	}
}
