package kernel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rogpeppe/go-internal/txtar"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The product checks result schemas and results with its own validator for
// the result-schema subset (resultschema.go). A general JSON Schema 2020-12
// validator is the oracle here, and testdata/resultschema.meta.json states
// the subset as a closed meta-schema: over many generated schemas and
// results, valid and invalid, both must reach the same verdict.

// denyLoader refuses every URL: schemas never reach the network or files.
type denyLoader struct{}

func (denyLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("loading %q is not allowed", url)
}

func newSchemaCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(denyLoader{})
	c.AssertFormat()
	return c
}

const resultMetaURL = "urn:rukh:result-schema-meta/1"

var oracleMeta = sync.OnceValues(func() (*jsonschema.Schema, error) {
	raw, err := os.ReadFile("testdata/resultschema.meta.json")
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := newSchemaCompiler()
	if err := c.AddResource(resultMetaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(resultMetaURL)
})

func oracleCompile(t *testing.T, raw string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := newSchemaCompiler()
	if err := c.AddResource("urn:test", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("urn:test")
	if err != nil {
		t.Fatalf("oracle does not compile %s: %v", raw, err)
	}
	return s
}

func oracleValid(t *testing.T, s *jsonschema.Schema, raw string) (bool, error) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(raw))
	if err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	err = s.Validate(inst)
	return err == nil, err
}

// gen builds random schemas of the subset and values near them.
type gen struct{ r *rand.Rand }

var genTypes = []string{"object", "array", "string", "boolean", "integer", "number", "null"}

func (g gen) pick(list ...string) string { return list[g.r.IntN(len(list))] }

func (g gen) num(integer bool) string {
	switch g.r.IntN(8) {
	case 0:
		return g.pick("9007199254740993", "-9223372036854775809", "18446744073709551616")
	case 1:
		if integer {
			return g.pick("3.0", "1e2", "-2E1", "0.0")
		}
		return g.pick("1.5", "-0.25", "2.5e-3", "1e-2", "0.1")
	case 2:
		return g.pick("0", "-0", "1", "-1")
	}
	n := strconv.Itoa(g.r.IntN(20) - 5)
	if !integer && g.r.IntN(2) == 0 {
		n += "." + strconv.Itoa(g.r.IntN(100))
	}
	return n
}

func (g gen) str() string {
	return g.pick("", "a", "ab", "abc", "é", "é😀", "a/b", "~x", "hello", "zz")
}

func q(s string) string { b, _ := json.Marshal(s); return string(b) }

// schema returns a schema of the subset (it may still break the semantic
// rules: reversed bounds, enum members out of bounds).
func (g gen) schema(depth int) map[string]any {
	t := g.pick(genTypes...)
	if depth <= 0 && (t == "object" || t == "array") {
		t = g.pick("string", "integer", "null", "boolean", "number")
	}
	s := map[string]any{"type": t}
	if g.r.IntN(5) == 0 {
		s["title"] = g.str()
	}
	if g.r.IntN(6) == 0 {
		s["description"] = "d"
	}
	raw := func(v string) json.RawMessage { return json.RawMessage(v) }
	switch t {
	case "object":
		props := map[string]any{}
		var names []string
		for range g.r.IntN(4) {
			n := g.pick("a", "b", "c", "id", "a/b", "~")
			props[n] = g.schema(depth - 1)
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		s["properties"] = props
		s["additionalProperties"] = false
		if len(names) > 0 && g.r.IntN(2) == 0 {
			s["required"] = names[:1+g.r.IntN(len(names))]
		}
	case "array":
		s["items"] = g.schema(depth - 1)
		s["maxItems"] = g.r.IntN(4)
		if g.r.IntN(2) == 0 {
			s["minItems"] = g.r.IntN(3)
		}
	case "string":
		if g.r.IntN(2) == 0 {
			s["maxLength"] = g.r.IntN(4)
		}
		if g.r.IntN(3) == 0 {
			s["minLength"] = g.r.IntN(2)
		}
		if g.r.IntN(3) == 0 {
			s["enum"] = []string{"a", "é😀", "zz"}[:1+g.r.IntN(3)]
		}
	case "integer", "number":
		if g.r.IntN(2) == 0 {
			s["minimum"] = raw(g.num(t == "integer"))
		}
		if g.r.IntN(2) == 0 {
			s["maximum"] = raw(g.num(t == "integer"))
		}
		if g.r.IntN(3) == 0 {
			var e []json.RawMessage
			for range 1 + g.r.IntN(3) {
				e = append(e, raw(g.num(t == "integer")))
			}
			s["enum"] = e
		}
	case "boolean":
		if g.r.IntN(3) == 0 {
			s["enum"] = []bool{true, false}[:1+g.r.IntN(2)]
		}
	case "null":
		if g.r.IntN(3) == 0 {
			s["enum"] = []any{nil}
		}
	}
	return s
}

// mutate breaks one thing somewhere in s, or nothing.
func (g gen) mutate(s map[string]any) {
	if p, ok := s["properties"].(map[string]any); ok && len(p) > 0 && g.r.IntN(2) == 0 {
		keys := slices.Sorted(maps.Keys(p))
		g.mutate(p[keys[g.r.IntN(len(keys))]].(map[string]any))
		return
	}
	if it, ok := s["items"].(map[string]any); ok && g.r.IntN(2) == 0 {
		g.mutate(it)
		return
	}
	raw := func(v string) json.RawMessage { return json.RawMessage(v) }
	switch g.r.IntN(22) {
	case 0:
		delete(s, "type")
	case 1:
		s["type"] = []string{"string", "null"}
	case 2:
		s["type"] = g.pick("integer", "string", "object", "array", "float")
	case 3:
		s[g.pick("pattern", "format", "$ref", "$defs", "default", "const", "oneOf", "if", "examples", "uniqueItems")] = "x"
	case 4:
		s[g.pick("minLength", "maxLength", "minItems", "maxItems", "minimum", "maximum")] = raw(g.pick("-1", "1.5", "2", "2.0", "\"2\"", "1e1", "null", "0"))
	case 5:
		s["enum"] = []any{}
	case 6:
		s["enum"] = []any{"a", 1}
	case 7:
		s["enum"] = []json.RawMessage{raw("1"), raw("1.0")}
	case 8:
		s["enum"] = []any{nil, nil}
	case 9:
		s["enum"] = []any{true, true}
	case 10:
		s["additionalProperties"] = g.pick("true", "{}")
	case 11:
		delete(s, "properties")
	case 12:
		delete(s, "additionalProperties")
	case 13:
		delete(s, "maxItems")
	case 14:
		delete(s, "items")
	case 15:
		s["required"] = []any{"a", "a"}
	case 16:
		s["required"] = []any{1}
	case 17:
		s["title"] = raw(g.pick("1", "null", q(strings.Repeat("é", 4097)), q(strings.Repeat("é", 4096))))
	case 18:
		s["properties"] = raw(g.pick("[]", "1", `{"a":1}`, `{"a":{}}`))
	case 19:
		s["items"] = raw(g.pick("[]", "true", `{"type":"string"}`))
	case 20:
		s["enum"] = raw(g.pick(`"a"`, "[1.5]", "[2]", `["é"]`, "[true]", "[null]"))
	}
}

// value returns a JSON value near schema s (decoded by decodeTree): often
// valid, sometimes not.
func (g gen) value(s map[string]any, depth int) string {
	if g.r.IntN(12) == 0 || depth > 20 {
		return g.pick(`"x"`, "1", "1.5", "null", "true", "[]", "{}", "3.0", "-0")
	}
	if e, ok := s["enum"].([]any); ok && g.r.IntN(2) == 0 {
		switch m := e[g.r.IntN(len(e))].(type) {
		case jnum:
			return string(m)
		case string:
			return q(m)
		case nil:
			return "null"
		default:
			return fmt.Sprint(m)
		}
	}
	switch s["type"] {
	case "object":
		props := s["properties"].(map[string]any)
		var parts []string
		for _, n := range slices.Sorted(maps.Keys(props)) {
			if g.r.IntN(4) != 0 {
				parts = append(parts, q(n)+":"+g.value(props[n].(map[string]any), depth+1))
			}
		}
		if g.r.IntN(10) == 0 {
			parts = append(parts, `"extra":1`)
		}
		g.r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
		return "{" + strings.Join(parts, ",") + "}"
	case "array":
		var parts []string
		for range g.r.IntN(5) {
			parts = append(parts, g.value(s["items"].(map[string]any), depth+1))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case "string":
		return q(g.str())
	case "integer":
		return g.num(g.r.IntN(4) != 0)
	case "number":
		return g.num(false)
	case "boolean":
		return g.pick("true", "false")
	}
	return "null"
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestResultSchemaOracle: the kernel's subset check and the closed
// meta-schema agree on every generated schema, and for every schema both
// accept, the kernel's result check and the oracle's validation agree on
// every generated value.
func TestResultSchemaOracle(t *testing.T) {
	meta, err := oracleMeta()
	if err != nil {
		t.Fatal(err)
	}
	g := gen{rand.New(rand.NewPCG(9, 2))}
	n := 3000
	if testing.Short() {
		n = 500
	}
	var schemas, values, invalidSchemas, invalidValues int
	for range n {
		s := g.schema(3)
		if g.r.IntN(2) == 0 {
			g.mutate(s)
		}
		raw := marshal(t, s)
		doc, err := decodeTree([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		ours := checkSubset(doc, "")
		theirs, oerr := oracleValid(t, meta, raw)
		if (ours == nil) != theirs {
			t.Fatalf("schema %s\nkernel: %v\noracle: %v", raw, ours, oerr)
		}
		schemas++
		if ours != nil {
			invalidSchemas++
			continue
		}
		rs, err := CompileResultSchema(jsontext.Value(raw))
		if err != nil {
			continue // a semantic rule (bounds, enum members): ours alone
		}
		osch := oracleCompile(t, raw)
		for range 12 {
			v := g.value(doc.(map[string]any), 0)
			ours := rs.Check(jsontext.Value(v), 0)
			theirs, oerr := oracleValid(t, osch, v)
			if (ours == nil) != theirs {
				t.Fatalf("schema %s\nvalue %s\nkernel: %v\noracle: %v", raw, v, ours, oerr)
			}
			values++
			if ours != nil {
				invalidValues++
			}
		}
	}
	t.Logf("%d schemas (%d invalid), %d values (%d invalid)", schemas, invalidSchemas, values, invalidValues)
	// The generators must exercise both verdicts, or agreement proves little.
	if invalidSchemas < schemas/5 || invalidSchemas > schemas*4/5 || invalidValues < values/5 || invalidValues > values*4/5 {
		t.Fatalf("generated inputs are lopsided: %d/%d schemas and %d/%d values invalid", invalidSchemas, schemas, invalidValues, values)
	}
}

// TestInputSchemasMeta2020 checks every input and output schema the kernel
// generates for the manifests of this repository (the testscript packages,
// the examples and the schema golden manifest) against the JSON Schema
// 2020-12 meta-schema. The product does not check its own generated schemas
// at publish: they are built from checked declarations, and this test is
// where their validity is proven.
func TestInputSchemasMeta2020(t *testing.T) {
	meta, err := newSchemaCompiler().Compile("https://json-schema.org/draft/2020-12/schema")
	if err != nil {
		t.Fatal(err)
	}
	var manifests [][]byte
	scripts, _ := filepath.Glob("../testdata/script/*.txtar")
	for _, f := range scripts {
		ar, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range ar.Files {
			if path.Base(file.Name) == "rukh-extension.json" {
				manifests = append(manifests, file.Data)
			}
		}
	}
	more, _ := filepath.Glob("../examples/*/rukh-extension.json")
	deeper, _ := filepath.Glob("../examples/*/*/rukh-extension.json")
	more = append(more, deeper...)
	more = append(more, "testdata/schemas/manifest.json")
	for _, f := range more {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		manifests = append(manifests, b)
	}
	schemas := 0
	for _, raw := range manifests {
		m, err := ParseManifest(raw)
		if err != nil {
			continue // a package a script expects to be refused
		}
		for i := range m.Commands {
			c := &m.Commands[i]
			in, err := InputSchema(c)
			if err != nil {
				t.Fatal(err)
			}
			out, err := OutputSchema(c)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []jsontext.Value{in, out} {
				doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(s))
				if err != nil {
					t.Fatal(err)
				}
				if err := meta.Validate(doc); err != nil {
					t.Fatalf("%s: generated schema is not valid JSON Schema 2020-12: %v\n%s", c.ID, err, s)
				}
				compile2020(t, s)
				schemas++
			}
		}
	}
	if schemas < 100 {
		t.Fatalf("only %d generated schemas checked", schemas)
	}
	t.Logf("%d generated schemas from %d manifests", schemas, len(manifests))
}
