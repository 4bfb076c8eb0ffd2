package kernel

import (
	"bytes"
	stdjson "encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
)

// baseManifest is valid; each case changes it at JSON pointers.
const baseManifest = `{
  "apiVersion": "rukh.extension/2",
  "name": "acme.notes",
  "version": "1.2.0",
  "publisher": "acme",
  "description": "Team notes",
  "commands": [{
    "id": "notes.add",
    "path": ["notes", "add"],
    "aliases": [["note", "add"]],
    "summary": "Add a note",
    "params": [
      {"id": "title", "type": "string", "flag": "title", "short": "t", "required": true, "maxLength": 200},
      {"id": "tags", "type": "list", "items": {"type": "string"}, "flag": "tag", "maxItems": 16},
      {"id": "priority", "type": "integer", "flag": "priority", "default": 3, "minimum": 1, "maximum": 5},
      {"id": "amount", "type": "decimal", "flag": "amount"},
      {"id": "body", "type": "string", "position": 0}
    ],
    "execute": {
      "program": "bin/notes",
      "args": ["add"],
      "mode": "managed",
      "lifetime": "foreground",
      "result": {"kind": "structured", "schema": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"], "additionalProperties": false}}
    },
    "machine": {"eligible": true, "interaction": "none", "requiredFeatures": [{"id": "command-result", "version": 1}]},
    "hints": {"title": "Add note", "readOnly": false, "destructive": false, "idempotent": false, "openWorld": false}
  }, {
    "id": "notes.list",
    "path": ["notes", "list"],
    "execute": {"program": "bin/notes", "args": ["list"]}
  }]
}`

const del = "\x00delete"

// mutate applies sets (JSON pointer → value; del removes; a pointer ending
// in "/-" appends) to baseManifest and returns the JSON text.
func mutate(t *testing.T, sets map[string]any) []byte {
	t.Helper()
	d := stdjson.NewDecoder(strings.NewReader(baseManifest))
	d.UseNumber()
	var root any
	if err := d.Decode(&root); err != nil {
		t.Fatal(err)
	}
	for ptr, v := range sets {
		if s, ok := v.(string); ok && strings.HasPrefix(s, "{") || ok && strings.HasPrefix(s, "[") {
			d := stdjson.NewDecoder(strings.NewReader(s))
			d.UseNumber()
			if err := d.Decode(&v); err != nil {
				t.Fatalf("bad JSON in case: %s", s)
			}
		}
		toks := strings.Split(ptr, "/")[1:]
		cur := root
		for i, tok := range toks {
			last := i == len(toks)-1
			switch c := cur.(type) {
			case map[string]any:
				if last {
					if v == del {
						delete(c, tok)
					} else {
						c[tok] = v
					}
				} else {
					cur = c[tok]
				}
			case []any:
				if last && tok == "-" {
					setParent(root, toks[:i], append(c, v))
					continue
				}
				n, _ := strconv.Atoi(tok)
				if last {
					c[n] = v
				} else {
					cur = c[n]
				}
			default:
				t.Fatalf("bad pointer %s", ptr)
			}
		}
	}
	var b bytes.Buffer
	e := stdjson.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(root); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func setParent(root any, toks []string, v any) {
	cur := root
	for i, tok := range toks {
		last := i == len(toks)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[tok] = v
			}
			cur = c[tok]
		case []any:
			n, _ := strconv.Atoi(tok)
			if last {
				c[n] = v
			}
			cur = c[n]
		}
	}
}

func TestParseManifestValid(t *testing.T) {
	m, err := ParseManifest([]byte(baseManifest))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Commands) != 2 || m.Commands[0].ID != "notes.add" || m.Commands[1].Execute.Mode != ModeManaged ||
		m.Commands[1].Execute.Lifetime != LifetimeForeground || m.Commands[0].Machine.Interaction != InteractionNone {
		t.Fatalf("unexpected manifest %+v", m)
	}
	if got := string(m.Commands[0].Params[2].Default); got != "3" {
		t.Fatalf("default kept as %q", got)
	}
	v1 := mutate(t, map[string]any{"/apiVersion": "rukh.extension/1",
		"/commands/0/execute/result": del, "/commands/0/machine": del, "/commands/0/hints": del})
	if _, err := ParseManifest(v1); err != nil {
		t.Fatalf("v1: %v", err)
	}
}

func TestParseManifestRaw(t *testing.T) {
	tests := []struct {
		name, in string
		code     Code
		path     string
		msg      string
	}{
		{"duplicate key", `{"apiVersion":"rukh.extension/2","name":"a","name":"b"}`, CodeInvalid, "", `duplicate object member name "name"`},
		{"duplicate nested key", strings.Replace(baseManifest, `"summary": "Add a note",`, `"summary": "Add a note", "summary": "x",`, 1), CodeInvalid, "/commands/0", `duplicate object member name "summary"`},
		{"invalid utf8", strings.Replace(baseManifest, `"Team notes"`, "\"Team \xff\"", 1), CodeInvalid, "/description", "invalid UTF-8"},
		{"lone surrogate", strings.Replace(baseManifest, `"Add a note"`, `"Add \ud800"`, 1), CodeInvalid, "/commands/0/summary", "surrogate"},
		{"not object", `[1]`, CodeInvalid, "", "must be a JSON object"},
		{"trailing", baseManifest + `{}`, CodeInvalid, "", "several top-level"},
		{"missing apiVersion", `{"name":"a"}`, CodeInvalid, "/apiVersion", "missing apiVersion"},
		{"apiVersion not string", `{"apiVersion":2}`, CodeInvalid, "/apiVersion", "must be a string"},
		{"unknown apiVersion first", `{"apiVersion":"rukh.extension/3","newThing":{"x":1}}`, CodeUnsupported, "/apiVersion", `unsupported apiVersion "rukh.extension/3"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErr(t, func() error { _, err := ParseManifest([]byte(tt.in)); return err }(), tt.code, tt.path, tt.msg)
		})
	}
}

func checkErr(t *testing.T, err error, code Code, path, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s at %q", code, path)
	}
	e, ok := err.(*Error)
	if !ok {
		t.Fatalf("error %T %v is not *Error", err, err)
	}
	if e.Code != code || e.Path != path || !strings.Contains(e.Message, msg) {
		t.Fatalf("got %s at %q: %q\nwant %s at %q containing %q", e.Code, e.Path, e.Message, code, path, msg)
	}
}

func TestParseManifestRules(t *testing.T) {
	const c0, p = "/commands/0", "/commands/0/params"
	tests := []struct {
		name string
		sets map[string]any
		path string
		msg  string
	}{
		{"unknown top member", map[string]any{"/extra": 1}, "/extra", `unknown member "extra"`},
		{"unknown command member", map[string]any{c0 + "/extra": 1}, c0 + "/extra", "unknown member"},
		{"unknown param member", map[string]any{p + "/0/pattern": "x"}, p + "/0/pattern", "unknown member"},
		{"wrong member type", map[string]any{p + "/0/required": "yes"}, p + "/0/required", ""},
		{"null", map[string]any{c0 + "/summary": nil}, c0 + "/summary", "null is not allowed"},
		{"v1 result", map[string]any{"/apiVersion": "rukh.extension/1", c0 + "/machine": del, c0 + "/hints": del}, c0 + "/execute/result", "not allowed in rukh.extension/1"},
		{"v1 machine", map[string]any{"/apiVersion": "rukh.extension/1", c0 + "/execute/result": del, c0 + "/hints": del}, c0 + "/machine", "not allowed in rukh.extension/1"},
		{"v1 hints", map[string]any{"/apiVersion": "rukh.extension/1", c0 + "/execute/result": del, c0 + "/machine": del}, c0 + "/hints", "not allowed in rukh.extension/1"},
		{"name syntax", map[string]any{"/name": "Acme"}, "/name", "must match"},
		{"name missing", map[string]any{"/name": del}, "/name", "missing name"},
		{"version semver", map[string]any{"/version": "1.2"}, "/version", "not a semantic version"},
		{"version leading zero", map[string]any{"/version": "01.2.0"}, "/version", "not a semantic version"},
		{"no commands", map[string]any{"/commands": "[]"}, "/commands", "at least one command"},
		{"id syntax", map[string]any{c0 + "/id": "Notes"}, c0 + "/id", "must match"},
		{"id duplicate", map[string]any{"/commands/1/id": "notes.add"}, "/commands/1/id", "already declared"},
		{"id rukh", map[string]any{c0 + "/id": "rukh"}, c0 + "/id", "rukh namespace"},
		{"id rukh dot", map[string]any{c0 + "/id": "rukh.install"}, c0 + "/id", "rukh namespace"},
		{"path empty", map[string]any{c0 + "/path": "[]"}, c0 + "/path", "at least one word"},
		{"path word syntax", map[string]any{c0 + "/path/1": "Add"}, c0 + "/path/1", "must match"},
		{"path help", map[string]any{c0 + "/path/1": "help"}, c0 + "/path/1", "reserved"},
		{"path h", map[string]any{c0 + "/path/1": "h"}, c0 + "/path/1", "reserved"},
		{"path completion", map[string]any{c0 + "/path/1": "completion"}, c0 + "/path/1", "reserved"},
		{"path builtin verb", map[string]any{c0 + "/path/0": "install"}, c0 + "/path/0", "built-in"},
		{"path rukh", map[string]any{c0 + "/path/0": "rukh"}, c0 + "/path/0", "built-in"},
		{"alias reserved", map[string]any{c0 + "/aliases/0/1": "help"}, c0 + "/aliases/0/1", "reserved"},
		{"alias builtin", map[string]any{c0 + "/aliases/0/0": "list"}, c0 + "/aliases/0/0", "built-in"},
		{"path duplicate", map[string]any{"/commands/1/path": `["notes","add"]`}, "/commands/1/path", "already declared at /commands/0/path"},
		{"alias duplicates path", map[string]any{"/commands/1/aliases": `[["notes","add"]]`}, "/commands/1/aliases/0", "already declared at /commands/0/path"},
		{"path is group", map[string]any{"/commands/1/path": `["notes"]`}, "/commands/1/path", "is a group of"},
		{"path under command", map[string]any{"/commands/1/path": `["notes","add","x"]`}, "/commands/1/path", "which is a command"},
		{"param id syntax", map[string]any{p + "/0/id": "Title"}, p + "/0/id", "must match"},
		{"param id duplicate", map[string]any{p + "/1/id": "title"}, p + "/1/id", "already declared"},
		{"flag duplicate", map[string]any{p + "/1/flag": "title"}, p + "/1/flag", "already declared"},
		{"flag syntax", map[string]any{p + "/1/flag": "Tag"}, p + "/1/flag", "must match"},
		{"flag help", map[string]any{p + "/1/flag": "help"}, p + "/1/flag", "reserved"},
		{"flag output", map[string]any{p + "/1/flag": "output"}, p + "/1/flag", "reserved"},
		{"flag equals a short", map[string]any{p + "/1/flag": "t"}, p + "/1/flag", "already the short of"},
		{"flag h", map[string]any{p + "/1/flag": "h"}, p + "/1/flag", "reserved"},
		{"short syntax", map[string]any{p + "/0/short": "tt"}, p + "/0/short", "one ASCII letter"},
		{"short h", map[string]any{p + "/0/short": "h"}, p + "/0/short", "reserved"},
		{"short duplicate", map[string]any{p + "/1/short": "t"}, p + "/1/short", "already declared"},
		{"flag and position", map[string]any{p + "/0/position": 1}, p + "/0/position", "not both"},
		{"neither flag nor position", map[string]any{p + "/3/flag": del}, p + "/3", "needs a flag or a position"},
		{"short on positional", map[string]any{p + "/4/short": "b"}, p + "/4/short", "no short"},
		{"position gap", map[string]any{p + "/4/position": 1}, p + "/4/position", "without gaps"},
		{"position duplicate", map[string]any{p + "/3/flag": del, p + "/3/position": 0}, p + "/4/position", "already declared"},
		{"boolean positional", map[string]any{p + "/-": `{"id":"b","type":"boolean","position":1}`}, p + "/5/position", "needs a flag"},
		{"list not last positional", map[string]any{p + "/1/flag": del, p + "/1/position": 0, p + "/4/position": 1}, p + "/1/type", "only the last"},
		{"required after optional", map[string]any{p + "/-": `{"id":"b","type":"string","position":1,"required":true}`}, p + "/5/required", "cannot follow an optional"},
		{"type missing", map[string]any{p + "/3/type": del}, p + "/3/type", "missing type"},
		{"type unknown", map[string]any{p + "/3/type": "float"}, p + "/3/type", "unknown type"},
		{"minLength on integer", map[string]any{p + "/2/minLength": 1}, p + "/2/minLength", "only allowed on a string"},
		{"maxLength on decimal", map[string]any{p + "/3/maxLength": 1}, p + "/3/maxLength", "only allowed on a string"},
		{"minimum on string", map[string]any{p + "/0/minimum": 1}, p + "/0/minimum", "only allowed on integer"},
		{"items on string", map[string]any{p + "/0/items": `{"type":"string"}`}, p + "/0/items", "only allowed on a list"},
		{"maxItems on string", map[string]any{p + "/0/maxItems": 2}, p + "/0/maxItems", "only allowed on a list"},
		{"enum on list", map[string]any{p + "/1/enum": `["a"]`}, p + "/1/enum", "belongs in items"},
		{"enum on boolean", map[string]any{p + "/-": `{"id":"b","type":"boolean","flag":"b","enum":[true]}`}, p + "/5/enum", "not allowed on a boolean"},
		{"list without items", map[string]any{p + "/1/items": del}, p + "/1/items", "needs items"},
		{"list of lists", map[string]any{p + "/1/items": `{"type":"list"}`}, p + "/1/items/type", "scalar type"},
		{"items minLength on integer", map[string]any{p + "/1/items": `{"type":"integer","minLength":1}`}, p + "/1/items/minLength", "only allowed on a string"},
		{"enum empty", map[string]any{p + "/0/enum": `[]`}, p + "/0/enum", "must not be empty"},
		{"enum wrong type", map[string]any{p + "/2/enum": `[1, "2"]`}, p + "/2/enum/1", "enum member must be an integer"},
		{"enum duplicate", map[string]any{p + "/2/enum": `[1, 2, 2.0]`}, p + "/2/enum/2", "repeats"},
		{"enum decimal duplicate", map[string]any{p + "/3/enum": `["1.5", 1.50]`}, p + "/3/enum/1", "repeats"},
		{"enum outside bounds", map[string]any{p + "/2/enum": `[1, 9]`}, p + "/2/enum/1", "between 1 and 5"},
		{"enum too long", map[string]any{p + "/0/maxLength": 2, p + "/0/enum": `["ab","abc"]`}, p + "/0/enum/1", "at most 2 characters"},
		{"items enum duplicate", map[string]any{p + "/1/items": `{"type":"string","enum":["a","a"]}`}, p + "/1/items/enum/1", "repeats"},
		{"bounds reversed", map[string]any{p + "/2/minimum": 6}, p + "/2/maximum", "less than minimum"},
		{"bound not integer", map[string]any{p + "/2/minimum": 1.5}, p + "/2/minimum", "minimum must be an integer"},
		{"decimal bounds reversed", map[string]any{p + "/3/minimum": "2.5", p + "/3/maximum": "2.25"}, p + "/3/maximum", "less than minimum"},
		{"length reversed", map[string]any{p + "/0/minLength": 300}, p + "/0/maxLength", "less than minLength"},
		{"negative maxLength", map[string]any{p + "/0/maxLength": -1}, p + "/0/maxLength", "must not be negative"},
		{"items reversed", map[string]any{p + "/1/minItems": 17}, p + "/1/maxItems", "less than minItems"},
		{"default out of bounds", map[string]any{p + "/2/default": 9}, p + "/2/default", "default must be an integer between 1 and 5"},
		{"default wrong type", map[string]any{p + "/2/default": "3"}, p + "/2/default", "default must be an integer"},
		{"default fraction", map[string]any{p + "/2/default": 3.5}, p + "/2/default", "default must be an integer"},
		{"default too long", map[string]any{p + "/0/maxLength": 2, p + "/0/default": "abc"}, p + "/0/default", "at most 2 characters"},
		{"default not in enum", map[string]any{p + "/0/enum": `["a","b"]`, p + "/0/default": "c"}, p + "/0/default", `must be one of "a", "b"`},
		{"default bad decimal", map[string]any{p + "/3/default": "1.2.3"}, p + "/3/default", "must be a decimal"},
		{"list default item", map[string]any{p + "/1/default": `["a", 1]`}, p + "/1/default/1", "must be a string"},
		{"list default count", map[string]any{p + "/1/maxItems": 1, p + "/1/default": `["a","b"]`}, p + "/1/default", "at most 1 items"},
		{"program missing", map[string]any{c0 + "/execute/program": del}, c0 + "/execute/program", "missing program"},
		{"program absolute", map[string]any{c0 + "/execute/program": "/bin/sh"}, c0 + "/execute/program", "relative path"},
		{"program dotdot", map[string]any{c0 + "/execute/program": "bin/../../x"}, c0 + "/execute/program", "leaves the package"},
		{"program backslash", map[string]any{c0 + "/execute/program": `bin\notes`}, c0 + "/execute/program", "forward slashes"},
		{"program unclean", map[string]any{c0 + "/execute/program": "./bin/notes"}, c0 + "/execute/program", "not a clean path"},
		{"program double slash", map[string]any{c0 + "/execute/program": "bin//notes"}, c0 + "/execute/program", "not a clean path"},
		{"args NUL", map[string]any{c0 + "/execute/args/0": "a\x00"}, c0 + "/execute/args/0", "NUL"},
		{"mode unknown", map[string]any{c0 + "/execute/mode": "daemon"}, c0 + "/execute/mode", "mode must be"},
		{"lifetime background", map[string]any{c0 + "/execute/lifetime": "background"}, c0 + "/execute/lifetime", "lifetime must be"},
		{"result kind unknown", map[string]any{c0 + "/execute/result/kind": "json"}, c0 + "/execute/result/kind", "kind must be"},
		{"result kind missing", map[string]any{c0 + "/execute/result/kind": del}, c0 + "/execute/result/kind", "missing kind"},
		{"structured without schema", map[string]any{c0 + "/execute/result/schema": del}, c0 + "/execute/result/schema", "needs a schema"},
		{"text with schema", map[string]any{c0 + "/execute/result/kind": "text"}, c0 + "/execute/result/schema", "text result has no schema"},
		{"schema keyword", map[string]any{c0 + "/execute/result/schema/properties/id/pattern": "x"}, c0 + "/execute/result/schema/properties/id/pattern", "not allowed"},
		{"schema required undeclared", map[string]any{c0 + "/execute/result/schema/required": `["nope"]`}, c0 + "/execute/result/schema/required/0", "not a declared property"},
		{"needs unknown member", map[string]any{c0 + "/execute/needs": `{"net": true}`}, c0 + "/execute/needs/net", "unknown member"},
		{"needs network not bool", map[string]any{c0 + "/execute/needs": `{"network": "host"}`}, c0 + "/execute/needs/network", ""},
		{"needs null", map[string]any{c0 + "/execute/needs": nil}, c0 + "/execute/needs", "null is not allowed"},
		{"needs relative path", map[string]any{c0 + "/execute/needs": `{"read": ["data"]}`}, c0 + "/execute/needs/read/0", `not an absolute path, "~/...", "release" or "scratch"`},
		{"needs dotdot", map[string]any{c0 + "/execute/needs": `{"write": ["/srv/../etc"]}`}, c0 + "/execute/needs/write/0", `".." segment`},
		{"needs home dotdot", map[string]any{c0 + "/execute/needs": `{"read": ["~/../other"]}`}, c0 + "/execute/needs/read/0", `".." segment`},
		{"needs unclean", map[string]any{c0 + "/execute/needs": `{"read": ["/srv//data/"]}`}, c0 + "/execute/needs/read/0", "not a clean path (want /srv/data)"},
		{"needs unclean home", map[string]any{c0 + "/execute/needs": `{"read": ["~/notes/"]}`}, c0 + "/execute/needs/read/0", "not a clean path (want ~/notes)"},
		{"needs other user", map[string]any{c0 + "/execute/needs": `{"read": ["~bob/x"]}`}, c0 + "/execute/needs/read/0", "not an absolute path"},
		{"needs empty path", map[string]any{c0 + "/execute/needs": `{"read": [""]}`}, c0 + "/execute/needs/read/0", "empty path"},
		{"needs control", map[string]any{c0 + "/execute/needs": `{"read": ["/a\nb"]}`}, c0 + "/execute/needs/read/0", "control character"},
		{"needs duplicate", map[string]any{c0 + "/execute/needs": `{"read": ["release", "release"]}`}, c0 + "/execute/needs/read/1", "already listed at " + c0 + "/execute/needs/read/0"},
		{"needs processes negative", map[string]any{c0 + "/execute/needs": `{"processes": -1}`}, c0 + "/execute/needs/processes", "processes must be 1 to 4096"},
		{"needs processes huge", map[string]any{c0 + "/execute/needs": `{"processes": 100000}`}, c0 + "/execute/needs/processes", "processes must be 1 to 4096"},
		{"needs processes fraction", map[string]any{c0 + "/execute/needs": `{"processes": 1.5}`}, c0 + "/execute/needs/processes", ""},
		{"v1 needs", map[string]any{"/apiVersion": "rukh.extension/1", c0 + "/execute/result": del, c0 + "/machine": del, c0 + "/hints": del, c0 + "/execute/needs": `{"network": true}`}, c0 + "/execute/needs", "not allowed in rukh.extension/1"},
		{"interaction unknown", map[string]any{c0 + "/machine/interaction": "maybe"}, c0 + "/machine/interaction", "interaction must be"},
		{"feature id syntax", map[string]any{c0 + "/machine/requiredFeatures/0/id": "Command"}, c0 + "/machine/requiredFeatures/0/id", "must match"},
		{"feature version", map[string]any{c0 + "/machine/requiredFeatures/0/version": 0}, c0 + "/machine/requiredFeatures/0/version", "positive"},
		{"feature twice", map[string]any{c0 + "/machine/requiredFeatures/-": `{"id":"command-result","version":2}`}, c0 + "/machine/requiredFeatures/1/id", "required twice"},
		{"feature unknown member", map[string]any{c0 + "/machine/requiredFeatures/0/x": 1}, c0 + "/machine/requiredFeatures/0/x", "unknown member"},
		{"hints unknown member", map[string]any{c0 + "/hints/readonly": true}, c0 + "/hints/readonly", "unknown member"},
		{"hints title control", map[string]any{c0 + "/hints/title": "a\nb"}, c0 + "/hints/title", "control character"},
		{"summary control", map[string]any{c0 + "/summary": "a\tb"}, c0 + "/summary", "control character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseManifest(mutate(t, tt.sets))
			checkErr(t, err, CodeInvalid, tt.path, tt.msg)
		})
	}
}

func TestParseManifestAccepts(t *testing.T) {
	p := "/commands/0/params"
	tests := []struct {
		name string
		sets map[string]any
	}{
		{"unknown feature is not an error", map[string]any{"/commands/0/machine/requiredFeatures/0/id": "jobs"}},
		{"passthrough", map[string]any{"/commands/1/execute/mode": "passthrough"}},
		{"text result", map[string]any{"/commands/0/execute/result": `{"kind":"text"}`}},
		{"big integer bounds", map[string]any{p + "/2/minimum": stdjson.Number("-9223372036854775808"), p + "/2/maximum": stdjson.Number("9223372036854775807"), p + "/2/default": stdjson.Number("9007199254740993")}},
		{"decimal default", map[string]any{p + "/3/default": "01.50", p + "/3/minimum": 1, p + "/3/maximum": "1.5"}},
		{"list positional last", map[string]any{p + "/1/flag": del, p + "/1/position": 1}},
		{"required positional first", map[string]any{p + "/4/required": true}},
		{"list default", map[string]any{p + "/1/default": `["a","b"]`}},
		{"alias group-free", map[string]any{"/commands/1/aliases": `[["ls"]]`}},
		{"eligible false without result", map[string]any{"/commands/0/execute/result": del, "/commands/0/machine/eligible": false}},
		{"needs", map[string]any{"/commands/0/execute/needs": `{"network": true, "read": ["/etc/ssl", "~", "~/notes", "release"], "write": ["scratch", "/"], "processes": 8}`}},
		{"needs empty", map[string]any{"/commands/0/execute/needs": `{}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ParseManifest(mutate(t, tt.sets)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestParseManifestNeeds(t *testing.T) {
	m, err := ParseManifest(mutate(t, map[string]any{"/commands/0/execute/needs": `{"network": true, "read": ["~/notes"], "write": ["scratch"], "processes": 8}`}))
	if err != nil {
		t.Fatal(err)
	}
	n := m.Commands[0].Execute.Needs
	if n == nil || !n.Network || n.Read[0] != "~/notes" || n.Write[0] != PathScratch || n.Processes != 8 {
		t.Fatalf("needs read as %+v", n)
	}
	if m.Commands[1].Execute.Needs != nil {
		t.Fatalf("a command without needs got %+v", m.Commands[1].Execute.Needs)
	}
}

func TestConfinePaths(t *testing.T) {
	tests := []struct {
		p, dir string
		within bool
	}{
		{"/srv/data", "/srv", true},
		{"/srv", "/srv", true},
		{"/srvx", "/srv", false},
		{"/srv", "/srv/data", false},
		{"/anything", "/", true},
		{"release", "release", true},
		{"release", "/", false},
		{"scratch", "release", false},
	}
	for _, tt := range tests {
		if got := WithinPath(tt.p, tt.dir); got != tt.within {
			t.Errorf("WithinPath(%q, %q) = %v, want %v", tt.p, tt.dir, got, tt.within)
		}
	}
	for p, want := range map[string]string{"~": "/home/o", "~/n": "/home/o/n", "/x": "/x", "scratch": "scratch"} {
		if got := ResolveHome(p, "/home/o"); got != want {
			t.Errorf("ResolveHome(%q) = %q, want %q", p, got, want)
		}
	}
}

func TestParseManifestKeepsBytes(t *testing.T) {
	in := []byte(baseManifest)
	orig := bytes.Clone(in)
	m, err := ParseManifest(in)
	if err != nil {
		t.Fatal(err)
	}
	m.Commands[0].Params[2].Default[0] = '4'
	if !bytes.Equal(in, orig) {
		t.Fatal("ParseManifest result aliases or modified the input bytes")
	}
}

// DecodeInstalled reads commands and params into slices of their own
// length and otherwise as plain json.Unmarshal does: null, empty and
// absent arrays, and what is not an array, alike.
func TestDecodeInstalledExact(t *testing.T) {
	cmd := func(params string) string {
		return `{"id":"a.b","path":["a"]` + params + `,"execute":{"program":"bin/x","mode":"managed","lifetime":"foreground"}}`
	}
	tests := []struct {
		name, in string
		bad      bool
	}{
		{"base", baseManifest, false},
		{"input", inputManifest, false},
		{"no commands", `{"name":"a"}`, false},
		{"null commands", `{"commands":null}`, false},
		{"empty commands", `{"commands":[]}`, false},
		{"params absent", `{"commands":[` + cmd("") + `]}`, false},
		{"params null", `{"commands":[` + cmd(`,"params":null`) + `]}`, false},
		{"params empty", `{"commands":[` + cmd(`,"params":[]`) + `]}`, false},
		{"params", `{"commands":[` + cmd(`,"params":[{"id":"x","type":"string","flag":"x"},{"id":"y","type":"integer","position":0}]`) + `,` + cmd(`,"params":[{"id":"z","type":"boolean","flag":"z"}]`) + `]}`, false},
		{"commands an object", `{"commands":{}}`, true},
		{"params a string", `{"commands":[` + cmd(`,"params":"x"`) + `]}`, true},
		{"a param a number", `{"commands":[` + cmd(`,"params":[1]`) + `]}`, true},
		{"truncated in params", `{"commands":[` + cmd(`,"params":[{"id":"x"`), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeInstalled([]byte(tt.in))
			var want Manifest
			wantErr := json.Unmarshal([]byte(tt.in), &want)
			if (err != nil) != tt.bad || (wantErr != nil) != tt.bad {
				t.Fatalf("errors %v and %v, want bad=%v", err, wantErr, tt.bad)
			}
			if tt.bad {
				return
			}
			if (got.Commands == nil) != (want.Commands == nil) || cap(got.Commands) != len(got.Commands) {
				t.Fatalf("commands: len %d cap %d nil %v, want nil %v", len(got.Commands), cap(got.Commands), got.Commands == nil, want.Commands == nil)
			}
			for i := range want.Commands {
				g, w := got.Commands[i], &want.Commands[i]
				if (g.Params == nil) != (w.Params == nil) || cap(g.Params) != len(g.Params) {
					t.Fatalf("command %d params: len %d cap %d nil %v, want nil %v", i, len(g.Params), cap(g.Params), g.Params == nil, w.Params == nil)
				}
				// The defaults DecodeInstalled fills in, on the plain decoding.
				if w.Execute.Mode == "" {
					w.Execute.Mode = ModeManaged
				}
				if w.Execute.Lifetime == "" {
					w.Execute.Lifetime = LifetimeForeground
				}
				if w.Machine != nil && w.Machine.Interaction == "" {
					w.Machine.Interaction = InteractionNone
				}
			}
			if !reflect.DeepEqual(got, &want) {
				t.Fatalf("decoded\n%+v\nwant\n%+v", got, &want)
			}
		})
	}
}

// A manifest accepted at install stays readable when a later rule would
// refuse it, and gets the same defaults ParseManifest fills in.
func TestDecodeInstalled(t *testing.T) {
	data := []byte(`{"apiVersion":"rukh.extension/2","name":"a","version":"1.0.0","commands":[
	 {"id":"a.b","path":["a"],"params":[{"id":"o","type":"string","flag":"output"}],
	  "execute":{"program":"bin/x"},"machine":{"eligible":true}}]}`)
	if _, err := ParseManifest(data); err == nil {
		t.Fatal("ParseManifest accepted a reserved flag")
	}
	m, err := DecodeInstalled(data)
	if err != nil {
		t.Fatal(err)
	}
	c := m.Commands[0]
	if c.Execute.Mode != ModeManaged || c.Execute.Lifetime != LifetimeForeground || c.Machine.Interaction != InteractionNone {
		t.Errorf("defaults not applied: %+v %+v", c.Execute, c.Machine)
	}
	if _, err := DecodeInstalled([]byte(`{"commands":`)); err == nil {
		t.Error("truncated JSON accepted")
	}
}
