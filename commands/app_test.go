package commands

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/urfave/cli/v3"
)

func TestExitCode(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{kernel.Errorf(kernel.CodeUsage, "x"), ExitUsage},
		{kernel.Errorf(kernel.CodeInvalid, "x"), ExitFailed},
		{kernel.Errorf(kernel.CodeNotFound, "x"), ExitFailed},
		{kernel.Errorf(kernel.CodeConflict, "x"), ExitFailed},
		{kernel.Errorf(kernel.CodeDenied, "x"), ExitFailed},
		{kernel.Errorf(kernel.CodeUnsupported, "x"), ExitFailed},
		{kernel.Errorf(kernel.CodeUnavailable, "x"), ExitUnavailable},
		{kernel.Errorf(kernel.CodeInternal, "x"), ExitExecution},
		{errors.New("plain"), ExitExecution},
		{fmt.Errorf("wrapped: %w", kernel.Errorf(kernel.CodeUsage, "x")), ExitUsage},
	}
	for _, tt := range tests {
		if got := exitCode(tt.err); got != tt.want {
			t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

func TestFailPrintsErrorAndHint(t *testing.T) {
	var stderr bytes.Buffer
	a := &app{stderr: &stderr}
	code := a.fail(kernel.Errorf(kernel.CodeDenied, "not trusted").WithHint("trust it\nor allow it"))
	if code != ExitFailed {
		t.Fatalf("code = %d", code)
	}
	want := "rukh: error: not trusted\nrukh: hint: trust it\nrukh: hint: or allow it\n"
	if stderr.String() != want {
		t.Fatalf("stderr = %q, want %q", stderr.String(), want)
	}
	stderr.Reset()
	if code := a.fail(&exitError{code: 7}); code != 7 || stderr.Len() != 0 {
		t.Fatalf("passthrough exit: code %d, stderr %q", code, stderr.String())
	}
}

func TestCLIUsage(t *testing.T) {
	m, err := kernel.ParseManifest([]byte(`{"apiVersion":"rukh.extension/2","name":"a","version":"1.0.0","commands":[
	 {"id":"n.add","path":["notes","add"],"params":[
	  {"id":"title","type":"string","flag":"title","required":true},
	  {"id":"tags","type":"list","items":{"type":"string"},"flag":"tag"},
	  {"id":"urgent","type":"boolean","flag":"urgent"},
	  {"id":"body","type":"string","position":0},
	  {"id":"more","type":"list","items":{"type":"integer"},"position":1}],
	  "execute":{"program":"bin/x"}},
	 {"id":"n.raw","path":["raw"],"execute":{"program":"bin/x","mode":"passthrough"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		cmd  *kernel.Command
		want string
	}{
		{&m.Commands[0], "rukh notes add --title STRING [--tag STRING]... [--urgent] [BODY] [MORE...]"},
		{&m.Commands[1], "rukh raw [ARGS]..."},
	}
	for _, tt := range tests {
		if got := cliUsage(tt.cmd); got != tt.want {
			t.Errorf("cliUsage(%s) = %q, want %q", tt.cmd.ID, got, tt.want)
		}
	}
}

func TestMainUnknownCommandAndVersion(t *testing.T) {
	t.Setenv("RUKH_HOME", t.TempDir())
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"rukh", "nope", "--flag"}, strings.NewReader(""), &out, &errb); code != ExitUsage {
		t.Fatalf("code = %d, stderr %q", code, errb.String())
	}
	if !strings.Contains(errb.String(), `rukh: error: unknown command "nope"`) {
		t.Fatalf("stderr = %q", errb.String())
	}
	out.Reset()
	if code := Main(context.Background(), []string{"rukh", "version"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("version: code %d", code)
	}
	if !strings.HasPrefix(out.String(), "rukh version ") {
		t.Fatalf("stdout = %q", out.String())
	}
}

// TestHelpOnEveryCommand asks every verb and subcommand for its help: each
// answers with its usage and exit 0.
func TestHelpOnEveryCommand(t *testing.T) {
	t.Setenv("RUKH_HOME", t.TempDir())
	var paths [][]string
	var walk func(prefix []string, cs []*cli.Command)
	walk = func(prefix []string, cs []*cli.Command) {
		for _, c := range cs {
			p := append(append([]string{}, prefix...), c.Name)
			paths = append(paths, p)
			walk(p, c.Commands)
		}
	}
	walk(nil, (&app{}).ownerVerbs())
	// rukh --help, and a subcommand users type whatever the tree holds
	paths = append(paths, nil, []string{"revisions", "prune"})
	if len(paths) < 30 {
		t.Fatalf("walked only %d commands", len(paths))
	}
	for _, p := range paths {
		for _, help := range []string{"--help", "-h"} {
			args := append(append([]string{"rukh"}, p...), help)
			var out, errb bytes.Buffer
			code := Main(context.Background(), args, strings.NewReader(""), &out, &errb)
			name := strings.Join(append([]string{"rukh"}, p...), " ")
			if code != 0 || errb.Len() > 0 {
				t.Errorf("%s: exit %d, stderr %q", strings.Join(args, " "), code, errb.String())
				continue
			}
			if !strings.Contains(out.String(), "USAGE:") || !strings.Contains(out.String(), name) {
				t.Errorf("%s: no help for %q in %q", strings.Join(args, " "), name, out.String())
			}
		}
	}
	// "rukh help VERB SUB" is the same help
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"rukh", "help", "revisions", "prune"}, strings.NewReader(""), &out, &errb); code != 0 || !strings.Contains(out.String(), "rukh revisions prune") {
		t.Errorf("rukh help revisions prune: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}
