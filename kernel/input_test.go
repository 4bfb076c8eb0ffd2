package kernel

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

const inputManifest = `{"apiVersion":"rukh.extension/2","name":"t","version":"1.0.0","commands":[{
  "id":"t.run","path":["run"],
  "params":[
    {"id":"title","type":"string","flag":"title","required":true,"maxLength":5},
    {"id":"tags","type":"list","items":{"type":"string"},"flag":"tag","maxItems":3},
    {"id":"priority","type":"integer","flag":"priority","default":3,"minimum":1,"maximum":5},
    {"id":"n","type":"integer","flag":"n"},
    {"id":"amount","type":"decimal","flag":"amount","minimum":"-10","maximum":"1e3"},
    {"id":"ratio","type":"number","flag":"ratio"},
    {"id":"verbose","type":"boolean","flag":"verbose"},
    {"id":"color","type":"string","flag":"color","enum":["red","green"],"default":"red"},
    {"id":"nums","type":"list","items":{"type":"integer","minimum":0},"flag":"num"},
    {"id":"body","type":"string","position":0}
  ],
  "execute":{"program":"bin/t"}}]}`

func inputCommand(t *testing.T) *Command {
	t.Helper()
	m, err := ParseManifest([]byte(inputManifest))
	if err != nil {
		t.Fatal(err)
	}
	return &m.Commands[0]
}

func cli(pairs ...string) []CLIValue {
	var out []CLIValue
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, CLIValue{Param: pairs[i], Text: pairs[i+1]})
	}
	return out
}

func boolean(id string, v bool) CLIValue { return CLIValue{Param: id, Bool: &v} }

func TestInputEquivalence(t *testing.T) {
	c := inputCommand(t)
	tests := []struct {
		name string
		cli  []CLIValue
		json string
		want string // the input object and explicit list of the encoded line
	}{
		{"defaults", cli("title", "a"), `{"title":"a"}`,
			`"input":{"color":"red","priority":3,"title":"a"},"explicit":["title"]`},
		{"explicit default value", cli("title", "a", "priority", "3"), `{"priority":3,"title":"a"}`,
			`"input":{"color":"red","priority":3,"title":"a"},"explicit":["title","priority"]`},
		{"explicit in declaration order", cli("body", "b", "priority", "2", "title", "a"), `{"body":"b","title":"a","priority":2}`,
			`"input":{"body":"b","color":"red","priority":2,"title":"a"},"explicit":["title","priority","body"]`},
		{"list items with commas", cli("title", "a", "tags", "x,y", "tags", "z"), `{"title":"a","tags":["x,y","z"]}`,
			`"input":{"color":"red","priority":3,"tags":["x,y","z"],"title":"a"},"explicit":["title","tags"]`},
		{"non-BMP and combining marks", cli("title", "😀e\u0301", "body", "𝄞\u0000\"\\<"), `{"title":"\ud83d\ude00e\u0301","body":"𝄞\u0000\"\\<"}`,
			`"input":{"body":"𝄞\u0000\"\\<","color":"red","priority":3,"title":"😀e` + "\u0301" + `"},"explicit":["title","body"]`},
		{"int64 min", cli("title", "a", "n", "-9223372036854775808"), `{"title":"a","n":-9223372036854775808}`,
			`"input":{"color":"red","n":-9223372036854775808,"priority":3,"title":"a"},"explicit":["title","n"]`},
		{"int64 max", cli("title", "a", "n", "9223372036854775807"), `{"title":"a","n":9223372036854775807}`,
			`"input":{"color":"red","n":9223372036854775807,"priority":3,"title":"a"},"explicit":["title","n"]`},
		{"2^53+1", cli("title", "a", "n", "9007199254740993"), `{"title":"a","n":9007199254740993}`,
			`"input":{"color":"red","n":9007199254740993,"priority":3,"title":"a"},"explicit":["title","n"]`},
		{"integer forms", cli("title", "a", "n", "+010"), `{"title":"a","n":1.0e1}`,
			`"input":{"color":"red","n":10,"priority":3,"title":"a"},"explicit":["title","n"]`},
		{"decimal 01.50", cli("title", "a", "amount", "01.50"), `{"title":"a","amount":"01.50"}`,
			`"input":{"amount":"1.5","color":"red","priority":3,"title":"a"},"explicit":["title","amount"]`},
		{"decimal number text", cli("title", "a", "amount", "1.50"), `{"title":"a","amount":1.50}`,
			`"input":{"amount":"1.5","color":"red","priority":3,"title":"a"},"explicit":["title","amount"]`},
		{"decimal -0", cli("title", "a", "amount", "-0"), `{"title":"a","amount":"-0"}`,
			`"input":{"amount":"0","color":"red","priority":3,"title":"a"},"explicit":["title","amount"]`},
		{"decimal exponent", cli("title", "a", "amount", "1e2"), `{"title":"a","amount":1e2}`,
			`"input":{"amount":"100","color":"red","priority":3,"title":"a"},"explicit":["title","amount"]`},
		{"decimal small", cli("title", "a", "amount", "-0.00120"), `{"title":"a","amount":-12e-4}`,
			`"input":{"amount":"-0.0012","color":"red","priority":3,"title":"a"},"explicit":["title","amount"]`},
		{"number shortest", cli("title", "a", "ratio", "0.10"), `{"title":"a","ratio":1e-1}`,
			`"input":{"color":"red","priority":3,"ratio":0.1,"title":"a"},"explicit":["title","ratio"]`},
		{"number -0", cli("title", "a", "ratio", "-0"), `{"title":"a","ratio":-0.0}`,
			`"input":{"color":"red","priority":3,"ratio":0,"title":"a"},"explicit":["title","ratio"]`},
		{"number large", cli("title", "a", "ratio", "1e300"), `{"title":"a","ratio":1E+300}`,
			`"input":{"color":"red","priority":3,"ratio":1e+300,"title":"a"},"explicit":["title","ratio"]`},
		{"boolean", []CLIValue{{Param: "title", Text: "a"}, boolean("verbose", false)}, `{"title":"a","verbose":false}`,
			`"input":{"color":"red","priority":3,"title":"a","verbose":false},"explicit":["title","verbose"]`},
		{"integer list", cli("title", "a", "nums", "1", "nums", "0"), `{"title":"a","nums":[1,0e5]}`,
			`"input":{"color":"red","nums":[1,0],"priority":3,"title":"a"},"explicit":["title","nums"]`},
		{"enum given", cli("title", "a", "color", "green"), `{"color":"green","title":"a"}`,
			`"input":{"color":"green","priority":3,"title":"a"},"explicit":["title","color"]`},
		{"max length in code points", cli("title", "😀😀😀😀😀"), `{"title":"😀😀😀😀😀"}`,
			`"input":{"color":"red","priority":3,"title":"😀😀😀😀😀"},"explicit":["title"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc, err := RequestFromCLI(c, tt.cli)
			if err != nil {
				t.Fatalf("cli: %v", err)
			}
			rj, err := RequestFromJSON(c, jsontext.Value(tt.json))
			if err != nil {
				t.Fatalf("json: %v", err)
			}
			bc, bj := rc.Encode("inv-1", false, 30000, Caller{}, nil), rj.Encode("inv-1", false, 30000, Caller{}, nil)
			if string(bc) != string(bj) {
				t.Fatalf("encodings differ\ncli:  %s\njson: %s", bc, bj)
			}
			want := `{"type":"invoke","invocationId":"inv-1","command":"t.run",` + tt.want + `,"interactive":false,"deadlineMs":30000}` + "\n"
			if string(bc) != want {
				t.Fatalf("encoding\ngot:  %s\nwant: %s", bc, want)
			}
		})
	}
}

// The caller goes last, from the core's own launch binding; empty fields
// are left out and a zero caller is no member at all.
func TestEncodeCaller(t *testing.T) {
	r := Request{Command: "t.run", Input: map[string]any{}}
	head := `{"type":"invoke","invocationId":"inv-1","command":"t.run","input":{},"explicit":[],"interactive":false,"deadlineMs":5`
	for _, tt := range []struct {
		caller Caller
		want   string
	}{
		{Caller{}, `}`},
		{CLICaller, `,"caller":{"transport":"cli","subject":"owner"}}`},
		{Caller{Transport: TransportStdio, Endpoint: "local", Subject: "ci-bot"}, `,"caller":{"transport":"stdio","endpoint":"local","subject":"ci-bot"}}`},
		{Caller{Transport: TransportStdio, Endpoint: "a\"b"}, `,"caller":{"transport":"stdio","endpoint":"a\"b"}}`},
		// the identity a credential gives: agent and kind, never the token or its hash
		{Credential{Agent: "bot", Endpoint: "remote", Kind: CredentialShortLived, Hash: TokenHash{0xab, 0xcd}}.Caller(TransportHTTP, "owner"),
			`,"caller":{"transport":"http","endpoint":"remote","subject":"owner","agent":"bot","credential":"short-lived"}}`},
		{Anonymous("remote").Caller(TransportHTTP, "owner"), `,"caller":{"transport":"http","endpoint":"remote","subject":"owner","agent":"anonymous"}}`},
		// an identity provider's token: its subject and issuer, never the token, its hash or its scopes
		{Credential{Agent: "svc-1", Endpoint: "web", Kind: CredentialOAuth, Hash: TokenHash{0xab}, Issuer: "https://idp.example", Subject: "u-42", Scopes: []string{"rukh.call"}, ShortLived: true}.Caller(TransportHTTP, "owner"),
			`,"caller":{"transport":"http","endpoint":"web","subject":"u-42","agent":"svc-1","credential":"oauth","issuer":"https://idp.example"}}`},
	} {
		if got, want := string(r.Encode("inv-1", false, 5, tt.caller, nil)), head+tt.want+"\n"; got != want {
			t.Errorf("caller %+v\n got %s\nwant %s", tt.caller, got, want)
		}
	}
}

func TestInputRejectedAlike(t *testing.T) {
	c := inputCommand(t)
	tests := []struct {
		name string
		cli  []CLIValue
		json string
		path string
		msg  string
	}{
		{"int64 overflow", cli("title", "a", "n", "9223372036854775808"), `{"title":"a","n":9223372036854775808}`, "/n", "must be an integer between -9223372036854775808 and 9223372036854775807"},
		{"int64 underflow", cli("title", "a", "n", "-9223372036854775809"), `{"title":"a","n":-9223372036854775809}`, "/n", "must be an integer between"},
		{"fraction", cli("title", "a", "n", "3.5"), `{"title":"a","n":3.5}`, "/n", "must be an integer"},
		{"out of bounds", cli("title", "a", "priority", "6"), `{"title":"a","priority":6}`, "/priority", "must be an integer between 1 and 5"},
		{"NaN", cli("title", "a", "ratio", "NaN"), `{"title":"a","ratio":"NaN"}`, "/ratio", "must be a finite number"},
		{"Inf", cli("title", "a", "ratio", "+Inf"), `{"title":"a","ratio":1e400}`, "/ratio", "must be a finite number"},
		{"null vs bad text", cli("title", "a", "n", "null"), `{"title":"a","n":null}`, "/n", ""},
		{"unknown param", cli("title", "a", "x", "1"), `{"title":"a","x":1}`, "/x", `unknown parameter "x"`},
		{"over maxLength in code points", cli("title", "😀😀😀😀😀😀"), `{"title":"😀😀😀😀😀😀"}`, "/title", "must be at most 5 characters long"},
		{"missing required", cli("body", "b"), `{"body":"b"}`, "/title", `required parameter "title" is missing`},
		{"enum", cli("title", "a", "color", "blue"), `{"title":"a","color":"blue"}`, "/color", `must be one of "red", "green"`},
		{"decimal above maximum", cli("title", "a", "amount", "1000.01"), `{"title":"a","amount":"1000.01"}`, "/amount", "must be a decimal number between -10 and 1000"},
		{"decimal syntax", cli("title", "a", "amount", "1.2.3"), `{"title":"a","amount":"1.2.3"}`, "/amount", "must be a decimal number"},
		{"list item bound", cli("title", "a", "nums", "1", "nums", "-1"), `{"title":"a","nums":[1,-1]}`, "/nums/1", "must be an integer of at least 0"},
		{"list item type", cli("title", "a", "nums", "1", "nums", "x"), `{"title":"a","nums":[1,"x"]}`, "/nums/1", "must be an integer"},
		{"too many items", cli("title", "a", "tags", "1", "tags", "2", "tags", "3", "tags", "4"), `{"title":"a","tags":["1","2","3","4"]}`, "/tags", "must have at most 3 items"},
		{"hex integer", cli("title", "a", "n", "0x10"), `{"title":"a","n":"0x10"}`, "/n", "must be an integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ec := RequestFromCLI(c, tt.cli)
			_, ej := RequestFromJSON(c, jsontext.Value(tt.json))
			checkErr(t, ec, CodeInvalid, tt.path, tt.msg)
			checkErr(t, ej, CodeInvalid, tt.path, tt.msg)
		})
	}
}

func TestRequestFromJSONOnly(t *testing.T) {
	c := inputCommand(t)
	tests := []struct {
		name, json string
		path, msg  string
	}{
		{"null arguments", `null`, "", "must be a JSON object"},
		{"array arguments", `[]`, "", "must be a JSON object"},
		{"null value", `{"title":null}`, "/title", "null is not allowed"},
		{"null list", `{"title":"a","tags":null}`, "/tags", "null is not allowed"},
		{"null item", `{"title":"a","tags":[null]}`, "/tags/0", "null is not allowed"},
		{"string for integer", `{"title":"a","n":"3"}`, "/n", "must be an integer"},
		{"number for string", `{"title":3}`, "/title", "must be a string"},
		{"duplicate key", `{"title":"a","title":"b"}`, "", `duplicate object member name "title"`},
		{"lone surrogate", `{"title":"\ud800"}`, "/title", "surrogate"},
		{"escaped unknown", `{"title":"a","a/b":1}`, "/a~1b", `unknown parameter "a/b"`},
		{"nested list", `{"title":"a","tags":[["x"]]}`, "/tags/0", "must be a string"},
		{"too many list items early", `{"title":"a","tags":[` + strings.Repeat(`"x",`, 2000) + `"x"]}`, "/tags", "must have at most 3 items"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := RequestFromJSON(c, jsontext.Value(tt.json))
			checkErr(t, err, CodeInvalid, tt.path, tt.msg)
		})
	}
	if _, err := RequestFromJSON(c, nil); err == nil || err.(*Error).Path != "/title" {
		t.Fatalf("absent arguments: got %v, want missing title", err)
	}
}

func TestRequestFromCLIOnly(t *testing.T) {
	c := inputCommand(t)
	tests := []struct {
		name string
		cli  []CLIValue
		path string
		msg  string
	}{
		{"invalid utf8", cli("title", "\xff"), "/title", "valid UTF-8"},
		{"scalar twice", cli("title", "a", "title", "b"), "/title", "given more than once"},
		{"bool for integer", []CLIValue{{Param: "title", Text: "a"}, boolean("n", true)}, "/n", "must be an integer"},
		{"boolean text", cli("title", "a", "verbose", "yes"), "/verbose", "must be true or false"},
		{"number underscores", cli("title", "a", "ratio", "1_000"), "/ratio", "must be a finite number"},
		{"integer spaces", cli("title", "a", "n", " 1"), "/n", "must be an integer"},
		{"integer double sign", cli("title", "a", "n", "--1"), "/n", "must be an integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := RequestFromCLI(c, tt.cli)
			checkErr(t, err, CodeInvalid, tt.path, tt.msg)
		})
	}
	r, err := RequestFromCLI(c, append(cli("title", "a"), boolean("verbose", true), CLIValue{Param: "ratio", Text: "0x1p-2"}))
	if err != nil {
		t.Fatal(err)
	}
	if r.Input["verbose"] != true || r.Input["ratio"] != 0.25 {
		t.Fatalf("input %v", r.Input)
	}
}

func TestInputSizeLimit(t *testing.T) {
	m, err := ParseManifest([]byte(`{"apiVersion":"rukh.extension/2","name":"t","version":"1.0.0","commands":[{
		"id":"t.big","path":["big"],"execute":{"program":"p"},
		"params":[{"id":"a","type":"string","flag":"a"},{"id":"b","type":"string","flag":"b"},{"id":"c","type":"string","flag":"c"},
		  {"id":"d","type":"string","flag":"d"},{"id":"e","type":"string","flag":"e"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	c := &m.Commands[0]
	s := strings.Repeat("x", 60<<10)
	_, err = RequestFromCLI(c, cli("a", s, "b", s, "c", s, "d", s, "e", s))
	checkErr(t, err, CodeInvalid, "", "over the limit of 262144")
	_, err = RequestFromCLI(c, cli("a", strings.Repeat("x", 64<<10+1)))
	checkErr(t, err, CodeInvalid, "/a", "at most 65536 characters long")
	if _, err := RequestFromCLI(c, cli("a", s, "b", s, "c", s, "d", s)); err != nil {
		t.Fatal(err)
	}
}

// TestStringLimitAgreesWithSchema: the input schema advertises maxLength
// 65536 for a string without its own bound, and the check counts exactly
// what maxLength counts, code points, on both sides.
func TestStringLimitAgreesWithSchema(t *testing.T) {
	m, err := ParseManifest([]byte(`{"apiVersion":"rukh.extension/2","name":"t","version":"1.0.0","commands":[{
		"id":"t.s","path":["s"],"execute":{"program":"p"},"params":[{"id":"a","type":"string","flag":"a"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	c := &m.Commands[0]
	schema, err := InputSchema(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(schema), `"maxLength":65536`) {
		t.Fatalf("schema %s does not advertise maxLength 65536", schema)
	}
	wide := strings.Repeat("é", 64<<10) // 65,536 code points, 131,072 bytes
	if _, err := RequestFromCLI(c, cli("a", wide)); err != nil {
		t.Errorf("CLI: 65536 two-byte characters refused: %v", err)
	}
	if _, err := RequestFromJSON(c, jsontext.Value(`{"a":"`+wide+`"}`)); err != nil {
		t.Errorf("JSON: 65536 two-byte characters refused: %v", err)
	}
	over := wide + "é"
	_, ec := RequestFromCLI(c, cli("a", over))
	_, ej := RequestFromJSON(c, jsontext.Value(`{"a":"`+over+`"}`))
	checkErr(t, ec, CodeInvalid, "/a", "at most 65536 characters long")
	checkErr(t, ej, CodeInvalid, "/a", "at most 65536 characters long")
}

func TestParseDecimal(t *testing.T) {
	tests := map[string]string{
		"0": "0", "-0": "0", "+0.000": "0", "01.50": "1.5", "1e2": "100", "1.5E-3": "0.0015",
		"-12.340e1": "-123.4", "100": "100", "0.1": "0.1", "123456789012345678901234567890.5": "123456789012345678901234567890.5",
		"1.": "", ".5": "", "1e": "", "e1": "", "": "", "-": "", "1e1000000": "", "1.2.3": "", "1_0": "", "NaN": "",
	}
	for in, want := range tests {
		got, ok := parseDecimal(in)
		if want == "" && ok || want != "" && string(got) != want {
			t.Errorf("parseDecimal(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}
