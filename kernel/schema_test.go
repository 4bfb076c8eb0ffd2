package kernel

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata")

func schemaManifest(t *testing.T) *Manifest {
	t.Helper()
	data, err := os.ReadFile("testdata/schemas/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "schemas", name)
	got = append(bytes.Clone(got), '\n')
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./kernel/ -run TestSchemaGolden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs\ngot:  %s\nwant: %s", name, got, want)
	}
}

// compile2020 compiles s with the 2020-12 metaschema check and a loader
// that refuses every URL.
func compile2020(t *testing.T, s jsontext.Value) *jsonschema.Schema {
	t.Helper()
	if err := CheckJSON(s, JSONLimits{}); err != nil {
		t.Fatalf("generated schema is not strict JSON: %v", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	c := newSchemaCompiler()
	if err := c.AddResource("urn:test", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("urn:test")
	if err != nil {
		t.Fatalf("schema does not compile: %v\n%s", err, s)
	}
	return sch
}

func TestSchemaGolden(t *testing.T) {
	m := schemaManifest(t)
	for i := range m.Commands {
		c := &m.Commands[i]
		t.Run(c.ID, func(t *testing.T) {
			in, err := InputSchema(c)
			if err != nil {
				t.Fatal(err)
			}
			out, err := OutputSchema(c)
			if err != nil {
				t.Fatal(err)
			}
			compile2020(t, in)
			compile2020(t, out)
			golden(t, c.ID+".input.json", in)
			golden(t, c.ID+".output.json", out)
			again, _ := InputSchema(c)
			if !bytes.Equal(in, again) {
				t.Fatal("InputSchema is not deterministic")
			}
		})
	}
}

// TestInputSchemaAgrees checks the generated schema against the kernel's own
// input check: what the kernel accepts the schema accepts, and type and
// bound errors are caught by both.
func TestInputSchemaAgrees(t *testing.T) {
	m := schemaManifest(t)
	c := &m.Commands[1]
	in, err := InputSchema(c)
	if err != nil {
		t.Fatal(err)
	}
	sch := compile2020(t, in)
	tests := []struct {
		args string
		ok   bool
	}{
		{`{"i":1,"d":"1.5"}`, true},
		{`{"i":-9223372036854775808,"d":"0","s":"a","b":true,"big":9007199254740993,"n":1e3,"nums":[0],"rest":["1","2.5"]}`, true},
		{`{"i":1.0,"d":"2"}`, true},
		{`{"d":"1"}`, false},
		{`{"i":1}`, false},
		{`{"i":1,"d":"1","x":1}`, false},
		{`{"i":9223372036854775808,"d":"1"}`, false},
		{`{"i":1.5,"d":"1"}`, false},
		{`{"i":1,"d":"1","s":"c"}`, false},
		{`{"i":1,"d":"1","big":9007199254740992}`, false},
		{`{"i":1,"d":"1","n":1000.5}`, false},
		{`{"i":1,"d":"1","nums":[]}`, false},
		{`{"i":1,"d":"1","nums":[-1]}`, false},
		{`{"i":null,"d":"1"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			_, kerr := RequestFromJSON(c, jsontext.Value(tt.args))
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(tt.args))
			if err != nil {
				t.Fatal(err)
			}
			serr := sch.Validate(inst)
			if (kerr == nil) != tt.ok || (serr == nil) != tt.ok {
				t.Fatalf("kernel: %v; schema: %v; want ok=%v", kerr, serr, tt.ok)
			}
		})
	}
}

func TestOutputSchemaAccepts(t *testing.T) {
	m := schemaManifest(t)
	tests := []struct {
		cmd  int
		data string
		ok   bool
	}{
		{0, `{"invocationId":"x","outcome":"succeeded","commandResult":{"kind":"structured","data":{"id":9007199254740993}}}`, true},
		{0, `{"invocationId":"x","outcome":"rejected","reason":"bad input"}`, true},
		{0, `{"invocationId":"x","outcome":"succeeded","commandResult":{"kind":"structured","data":{"id":"1"}}}`, false},
		{0, `{"invocationId":"x","outcome":"succeeded","commandResult":{"kind":"text","text":"hi"}}`, false},
		{0, `{"invocationId":"x","outcome":"done"}`, false},
		{0, `{"outcome":"succeeded"}`, false},
		{0, `{"invocationId":"x","outcome":"succeeded","extra":1}`, false},
		{1, `{"invocationId":"x","outcome":"command_failed","commandResult":{"kind":"text","text":"hi"}}`, true},
		{1, `{"invocationId":"x","outcome":"succeeded","commandResult":{"kind":"text","text":"hi","data":1}}`, false},
		{2, `{"invocationId":"x","outcome":"cancelled"}`, true},
		{2, `{"invocationId":"x","outcome":"succeeded","commandResult":{"kind":"text","text":"hi"}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.data, func(t *testing.T) {
			out, err := OutputSchema(&m.Commands[tt.cmd])
			if err != nil {
				t.Fatal(err)
			}
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			if err := compile2020(t, out).Validate(inst); (err == nil) != tt.ok {
				t.Fatalf("validate: %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

// Every command of every test manifest yields schemas that compile as
// 2020-12.
func TestGeneratedSchemasCompile(t *testing.T) {
	for _, src := range []string{baseManifest, inputManifest} {
		m, err := ParseManifest([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		for i := range m.Commands {
			c := &m.Commands[i]
			t.Run(c.ID, func(t *testing.T) {
				in, err := InputSchema(c)
				if err != nil {
					t.Fatal(err)
				}
				out, err := OutputSchema(c)
				if err != nil {
					t.Fatal(err)
				}
				compile2020(t, in)
				compile2020(t, out)
			})
		}
	}
}

// The output schemas kept for tools without a result or with a text one
// are the ones built for them, and a caller's copy is its own.
func TestFixedOutputSchemas(t *testing.T) {
	for _, started := range []bool{false, true} {
		for _, r := range []*ResultDecl{nil, {Kind: ResultText}} {
			c := &Command{ID: "a.b", Execute: Execute{Result: r}}
			got, err := outputSchema(c, started)
			want, werr := buildOutputSchema(r, started)
			if err != nil || werr != nil || string(got) != string(want) {
				t.Errorf("started %v, result %v: %s (%v), want %s (%v)", started, r, got, err, want, werr)
			}
			got[0] = 'x'
			if again, _ := outputSchema(c, started); again[0] != '{' {
				t.Errorf("started %v, result %v: a caller changed the kept schema", started, r)
			}
		}
	}
}

// OutputSchema's bytes are the caller's own: changing them changes no
// later schema, shared or not.
func TestOutputSchemaIsACopy(t *testing.T) {
	for _, r := range []*ResultDecl{nil, {Kind: ResultText}} {
		for _, started := range []bool{false, true} {
			c := &Command{ID: "a.b", Execute: Execute{Result: r}}
			want, _ := SharedOutputSchema(c, started)
			want = bytes.Clone(want)
			get := OutputSchema
			if started {
				get = StartedOutputSchema
			}
			v, err := get(c)
			if err != nil || !bytes.Equal(v, want) {
				t.Fatalf("result %v started %v: %s, %v; want %s", r, started, v, err, want)
			}
			clear(v)
			if again, _ := SharedOutputSchema(c, started); !bytes.Equal(again, want) {
				t.Fatalf("result %v started %v: changing a returned schema changed the shared one: %q", r, started, again)
			}
		}
	}
}
