package kernel

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
)

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
			if fix := EligibilityFix(tt.api, c); (fix == "") != ok {
				t.Fatalf("fix %q for reason %q", fix, reason)
			}
		})
	}
}

// Each fix, applied as it says, removes its reason: the JSON it names is
// decoded into the command and the command checked again.
func TestEligibilityFixApplies(t *testing.T) {
	tests := []struct {
		name  string
		api   string
		c     Command
		want  string // a fragment of the fix
		apply func(c *Command, api *string)
	}{
		{"machine absent", APIVersion2, Command{Execute: Execute{Result: &ResultDecl{Kind: ResultText}}},
			MachineJSON, func(c *Command, _ *string) { decodeInto(t, "{"+MachineJSON+"}", c) }},
		{"no result", APIVersion2, Command{Machine: &Machine{Eligible: true, RequiredFeatures: []Feature{{"command-result", 1}}}},
			`"result": {"kind": "text"}`, func(c *Command, _ *string) { decodeInto(t, `{"result": {"kind": "text"}}`, &c.Execute) }},
		{"no command-result", APIVersion2, Command{Execute: Execute{Result: &ResultDecl{Kind: ResultText}}, Machine: &Machine{Eligible: true}},
			`add {"id": "command-result", "version": 1} to "machine.requiredFeatures"`, func(c *Command, _ *string) {
				var f Feature
				decodeInto(t, commandResultJSON, &f)
				c.Machine.RequiredFeatures = append(c.Machine.RequiredFeatures, f)
			}},
		{"v1", APIVersion1, Command{}, `change "apiVersion" to "rukh.extension/2"`, func(c *Command, api *string) {
			*api = APIVersion2
			decodeInto(t, `{"result": {"kind": "text"}}`, &c.Execute)
			decodeInto(t, "{"+MachineJSON+"}", c)
		}},
		{"passthrough", APIVersion2, Command{Execute: Execute{Mode: ModePassthrough, Result: &ResultDecl{Kind: ResultText}},
			Machine: &Machine{Eligible: true, RequiredFeatures: []Feature{{"command-result", 1}}}},
			`remove "mode": "passthrough"`, func(c *Command, _ *string) { c.Execute.Mode = "" }},
		{"eligible false", APIVersion2, Command{Execute: Execute{Result: &ResultDecl{Kind: ResultText}},
			Machine: &Machine{RequiredFeatures: []Feature{{"command-result", 1}}}},
			`set "eligible": true`, func(c *Command, _ *string) { c.Machine.Eligible = true }},
		{"unknown feature", APIVersion2, Command{Execute: Execute{Result: &ResultDecl{Kind: ResultText}},
			Machine: &Machine{Eligible: true, RequiredFeatures: []Feature{{"command-result", 1}, {"jobs", 2}}}},
			`remove {"id": "jobs", "version": 2} from "machine.requiredFeatures" (this rukh supports command-result/1)`,
			func(c *Command, _ *string) { c.Machine.RequiredFeatures = c.Machine.RequiredFeatures[:1] }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, api := tt.c, tt.api
			fix := EligibilityFix(api, &c)
			if !strings.Contains(fix, tt.want) {
				t.Fatalf("fix %q does not contain %q", fix, tt.want)
			}
			tt.apply(&c, &api)
			if ok, reason := Eligibility(api, &c); !ok {
				t.Fatalf("after the fix: %s", reason)
			}
		})
	}
}

func decodeInto(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v, json.RejectUnknownMembers(true)); err != nil {
		t.Fatalf("the fix's JSON %s does not decode: %v", s, err)
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
