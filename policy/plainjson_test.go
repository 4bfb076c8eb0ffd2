package policy

import (
	"reflect"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
)

func intp(n int) *int    { return &n }
func boolp(b bool) *bool { return &b }

// fullCommand sets every member a declaration record can have.
func fullCommand() BoundCommand {
	return BoundCommand{
		Release: "acme.notes@1.2.0", Digest: "h1:abc", Eligible: true, Development: true, Reason: "why",
		Declaration: kernel.Command{
			ID: "notes.add", Path: []string{"notes", "add"}, Aliases: [][]string{{"na"}, {"n", "a"}},
			Summary: "add a note", Description: "Adds a note.\nTwo lines, \"quoted\", é.",
			Params: []kernel.Param{
				{ID: "text", Type: kernel.TypeString, Position: intp(0), Required: true, MinLength: intp(1), MaxLength: intp(100)},
				{ID: "tag", Type: kernel.TypeList, Flag: "tag", Short: "t", MinItems: intp(0), MaxItems: intp(5),
					Items: &kernel.ItemSpec{Type: kernel.TypeString, Enum: []jsontext.Value{jsontext.Value(`"a"`), jsontext.Value(`"b"`)}, MinLength: intp(1), MaxLength: intp(9)}},
				{ID: "n", Type: kernel.TypeInteger, Flag: "n", Default: jsontext.Value(`12345678901234567890`), Minimum: jsontext.Value(`-3`), Maximum: jsontext.Value(`1e3`)},
				{ID: "d", Type: kernel.TypeDecimal, Flag: "d", Enum: []jsontext.Value{}, Items: &kernel.ItemSpec{Type: kernel.TypeNumber, Minimum: jsontext.Value(`0.5`), Maximum: jsontext.Value(`2`)}},
			},
			Execute: kernel.Execute{Program: "bin/notes", Args: []string{"add", "--"}, Mode: kernel.ModeManaged, Lifetime: kernel.LifetimeForeground,
				Result: &kernel.ResultDecl{Kind: kernel.ResultStructured, Schema: jsontext.Value(`{"type":"object","properties":{"id":{"type":"string"}}}`)},
				Needs:  &kernel.Needs{Network: true, Read: []string{"~/.notes"}, Write: []string{"scratch"}, Processes: 4}},
			Machine: &kernel.Machine{Eligible: true, Interaction: kernel.InteractionOptional, RequiredFeatures: []kernel.Feature{{ID: "command-result", Version: 1}}},
			Hints:   &kernel.Hints{Title: "Add", ReadOnly: boolp(false), Destructive: boolp(true), Idempotent: boolp(false), OpenWorld: boolp(true)},
		},
		Settings: []kernel.Setting{
			{ID: "token", Type: kernel.TypeString, Description: "API token", Required: true, Sensitive: true, MinLength: intp(8), MaxLength: intp(64)},
			{ID: "hosts", Type: kernel.TypeList, Default: jsontext.Value(`["a"]`), Enum: []jsontext.Value{jsontext.Value(`"a"`)}, Minimum: jsontext.Value(`1`), Maximum: jsontext.Value(`9`),
				MinItems: intp(1), MaxItems: intp(3), Items: &kernel.ItemSpec{Type: kernel.TypeString}},
		},
	}
}

func fullMeta() EndpointMeta {
	return EndpointMeta{Namespace: "acme", ToolNames: "path", Subject: "local", Unavailable: "no reason",
		Template: Template{Name: "strict", TimeoutMs: 30000, MaxConcurrent: 4, MaxHeld: 8, DiagnosticsBytes: 4096, ResultBytes: 1 << 20,
			Confine: &kernel.Confine{Network: kernel.NetworkNone, Read: []string{"release"}, Write: []string{"scratch", "/tmp/x"}, Processes: 8, MemoryMiB: 256, CPUSeconds: 10, FileMiB: 16}},
		Withheld: []Withheld{{Command: "a.b", Reason: "r", Fix: "f"}, {Command: "c.d", Reason: "r2"}}}
}

func reflectCommand(raw []byte) (*BoundCommand, error) {
	var bc BoundCommand
	err := json.Unmarshal(raw, &bc, json.RejectUnknownMembers(false))
	return &bc, err
}

func reflectMeta(raw []byte) (EndpointMeta, error) {
	var m EndpointMeta
	err := json.Unmarshal(raw, &m, json.RejectUnknownMembers(false))
	return m, err
}

// The records rukh writes read the same member by member as by reflection.
func TestPlainRecordsReadAsReflection(t *testing.T) {
	marshal := func(v any) []byte {
		b, err := json.Marshal(v, json.Deterministic(true))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	minimal := BoundCommand{Release: "a@1", Digest: "d", Declaration: kernel.Command{ID: "a.b", Path: []string{"a"}, Execute: kernel.Execute{Program: "p"}}}
	commands := map[string][]byte{
		"full":           marshal(fullCommand()),
		"minimal":        marshal(minimal),
		"indented":       []byte("{\n  \"release\": \"a@1\",\n  \"declaration\": {\"id\": \"x\", \"params\": [ {\"id\":\"p\", \"default\": { \"a\" : [1, 2] }} ]}\n}\n"),
		"unknown member": []byte(`{"release":"a@1","future":{"x":[1,null]},"declaration":{"id":"x","later":true,"execute":{"program":"p","soon":1}}}`),
		"empty arrays":   []byte(`{"settings":[],"declaration":{"path":[],"aliases":[],"params":[],"execute":{"args":[]},"machine":{"requiredFeatures":[]}}}`),
	}
	for name, raw := range commands {
		got, ok := plainCommand(raw)
		if !ok {
			t.Errorf("%s: not read as plain: %s", name, raw)
			continue
		}
		want, err := reflectCommand(raw)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
	metas := map[string][]byte{
		"full":       marshal(fullMeta()),
		"unconfined": marshal(EndpointMeta{Namespace: "x", Template: Template{TimeoutMs: 1}}),
		"unknown":    []byte(`{"namespace":"x","template":{"timeoutMs":5,"new":"y"},"other":[]}`),
	}
	for name, raw := range metas {
		got, ok := plainEndpointMeta(raw)
		if !ok {
			t.Errorf("meta %s: not read as plain: %s", name, raw)
			continue
		}
		want, err := reflectMeta(raw)
		if err != nil {
			t.Fatalf("meta %s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("meta %s:\n got %+v\nwant %+v", name, got, want)
		}
	}
}

// What is not plain is left to reflection, which decodes or refuses it as
// it always has.
func TestNotPlainRecordsFallBack(t *testing.T) {
	commands := []string{
		`null`,
		`[]`,
		`{"release":null}`,
		`{"release":1}`,
		`{"eligible":"yes"}`,
		`{"declaration":{"params":[{"position":1.5}]}}`,
		`{"declaration":{"params":[{"position":99999999999999999999}]}}`,
		`{"declaration":{"params":[{"default":null}]}}`,
		`{"declaration":{"hints":null}}`,
		`{"release":"a","release":"b"}`,
		`{"release":"a"} {}`,
		`{"release":"a"`,
		"{\"release\":\"\xff\"}",
	}
	for _, raw := range commands {
		if _, ok := plainCommand([]byte(raw)); ok {
			t.Errorf("%s: read as plain", raw)
		}
		got, gotErr := DecodeCommand([]byte(raw))
		want, wantErr := reflectCommand([]byte(raw))
		if (gotErr == nil) != (wantErr == nil) {
			t.Errorf("%s: error %v, reflection's %v", raw, gotErr, wantErr)
		}
		if gotErr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", raw, got, want)
		}
	}
	metas := []string{
		`{"template":{"confine":{"network":"none","future":true}}}`, // Confine refuses what it cannot apply
		`{"template":{"confine":null}}`,
		`{"template":{"timeoutMs":"5"}}`,
		`{"withheld":[{"command":1}]}`,
	}
	for _, raw := range metas {
		if _, ok := plainEndpointMeta([]byte(raw)); ok {
			t.Errorf("meta %s: read as plain", raw)
		}
		_, gotErr := DecodeEndpointMeta([]byte(raw))
		_, wantErr := reflectMeta([]byte(raw))
		if (gotErr == nil) != (wantErr == nil) {
			t.Errorf("meta %s: error %v, reflection's %v", raw, gotErr, wantErr)
		}
	}
}

// Whatever the plain readers accept, reflection decodes to the same value.
func FuzzPlainRecords(f *testing.F) {
	for _, v := range []any{fullCommand(), fullMeta()} {
		b, _ := json.Marshal(v, json.Deterministic(true))
		f.Add(b)
	}
	f.Add([]byte(`{"template":{"confine":{"read":["release"]}}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if got, ok := plainCommand(raw); ok {
			want, err := reflectCommand(raw)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("command %q: plain %+v, reflection %+v (%v)", raw, got, want, err)
			}
		}
		if got, ok := plainEndpointMeta(raw); ok {
			want, err := reflectMeta(raw)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("meta %q: plain %+v, reflection %+v (%v)", raw, got, want, err)
			}
		}
	})
}
