package kernel

import "testing"

func TestEligibility(t *testing.T) {
	base := func() *Command {
		return &Command{
			ID: "notes.add", Path: []string{"notes", "add"},
			Execute: Execute{Program: "bin/notes", Mode: ModeManaged, Lifetime: LifetimeForeground, Result: &ResultDecl{Kind: ResultText}},
			Machine: &Machine{Eligible: true, Interaction: InteractionNone, RequiredFeatures: []Feature{{ID: "command-result", Version: 1}}},
		}
	}
	tests := []struct {
		name   string
		api    string
		change func(c *Command)
		reason string
	}{
		{"eligible", APIVersion2, func(*Command) {}, ""},
		{"interaction required is policy's call", APIVersion2, func(c *Command) { c.Machine.Interaction = InteractionRequired }, ""},
		{"v1", APIVersion1, func(*Command) {}, "rukh.extension/1 commands run on the CLI only"},
		{"passthrough", APIVersion2, func(c *Command) { c.Execute.Mode = ModePassthrough }, "passthrough commands run on the CLI only"},
		{"machine absent", APIVersion2, func(c *Command) { c.Machine = nil }, "no machine declaration, so not eligible for programmatic use"},
		{"eligible false", APIVersion2, func(c *Command) { c.Machine.Eligible = false }, "machine.eligible is false"},
		{"background", APIVersion2, func(c *Command) { c.Execute.Lifetime = "background" }, `lifetime "background" is not foreground`},
		{"no result", APIVersion2, func(c *Command) { c.Execute.Result = nil }, "no execute.result is declared"},
		{"no features", APIVersion2, func(c *Command) { c.Machine.RequiredFeatures = nil }, "does not require command-result/1"},
		{"unknown feature", APIVersion2, func(c *Command) {
			c.Machine.RequiredFeatures = append(c.Machine.RequiredFeatures, Feature{ID: "jobs", Version: 1})
		}, `requires unsupported feature "jobs/1"`},
		{"unsupported version", APIVersion2, func(c *Command) { c.Machine.RequiredFeatures[0].Version = 2 }, `requires unsupported feature "command-result/2"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base()
			tt.change(c)
			ok, reason := Eligibility(tt.api, c)
			if ok != (tt.reason == "") || reason != tt.reason {
				t.Fatalf("got %v %q, want reason %q", ok, reason, tt.reason)
			}
		})
	}
}

// The manifest fixture's commands: a parsed v2 manifest agrees with Eligibility.
func TestEligibilityFromManifest(t *testing.T) {
	m := schemaManifest(t)
	want := map[string]bool{"notes.add": true, "notes.types": true, "notes.empty": false}
	for i := range m.Commands {
		c := &m.Commands[i]
		if ok, reason := Eligibility(m.APIVersion, c); ok != want[c.ID] {
			t.Errorf("%s: eligible %v (%s), want %v", c.ID, ok, reason, want[c.ID])
		}
	}
}
