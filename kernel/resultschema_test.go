package kernel

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

func TestCheckResultSchema(t *testing.T) {
	tests := []struct {
		name, schema string
		path, msg    string // msg "" means valid
	}{
		{"object", `{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"],"additionalProperties":false}`, "", ""},
		{"all types", `{"type":"object","title":"t","description":"d","additionalProperties":false,"properties":{
			"s":{"type":"string","minLength":1,"maxLength":3,"enum":["a","abc"]},
			"b":{"type":"boolean","enum":[true]},
			"i":{"type":"integer","minimum":-9223372036854775808,"maximum":9007199254740993,"enum":[9007199254740993]},
			"n":{"type":"number","minimum":0.5,"maximum":1.5},
			"z":{"type":"null"},
			"a":{"type":"array","items":{"type":"string"},"minItems":0,"maxItems":3}}}`, "", ""},
		{"no type", `{"properties":{}}`, "", `missing "type"`},
		{"two types", `{"type":["string","null"]}`, "/type", ""},
		{"unknown keyword", `{"type":"string","pattern":"x"}`, "/pattern", `"pattern" is not allowed here`},
		{"ref", `{"type":"object","properties":{"a":{"$ref":"#"}},"additionalProperties":false}`, "/properties/a", `missing "type"`},
		{"ref with type", `{"type":"string","$ref":"#"}`, "/$ref", "not allowed"},
		{"defs", `{"type":"string","$defs":{}}`, "/$defs", "not allowed"},
		{"format", `{"type":"string","format":"email"}`, "/format", "not allowed"},
		{"default", `{"type":"string","default":"x"}`, "/default", "not allowed"},
		{"oneOf", `{"type":"string","oneOf":[]}`, "/oneOf", "not allowed"},
		{"object without additionalProperties", `{"type":"object","properties":{}}`, "", `missing "additionalProperties"`},
		{"object additionalProperties true", `{"type":"object","properties":{},"additionalProperties":true}`, "/additionalProperties", ""},
		{"object without properties", `{"type":"object","additionalProperties":false}`, "", `missing "properties"`},
		{"required undeclared", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a","b"],"additionalProperties":false}`, "/required/1", `required "b" is not a declared property`},
		{"required duplicate", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a","a"],"additionalProperties":false}`, "/required", ""},
		{"array without maxItems", `{"type":"array","items":{"type":"string"}}`, "", `missing "maxItems"`},
		{"array without items", `{"type":"array","maxItems":1}`, "", `missing "items"`},
		{"minLength on integer", `{"type":"integer","minLength":1}`, "/minLength", "not allowed"},
		{"negative counter", `{"type":"string","maxLength":-1}`, "/maxLength", ""},
		{"fraction counter", `{"type":"string","maxLength":1.5}`, "/maxLength", ""},
		{"enum empty", `{"type":"string","enum":[]}`, "/enum", ""},
		{"enum wrong type", `{"type":"string","enum":["a",1]}`, "/enum/1", ""},
		{"enum duplicate", `{"type":"integer","enum":[1,1.0]}`, "/enum", ""},
		{"enum below minimum", `{"type":"integer","minimum":2,"enum":[2,1]}`, "/enum/1", "less than minimum"},
		{"enum above exact maximum", `{"type":"integer","maximum":9007199254740993,"enum":[9007199254740994]}`, "/enum/0", "greater than maximum"},
		{"enum too long", `{"type":"string","maxLength":1,"enum":["é","ab"]}`, "/enum/1", "longer than maxLength"},
		{"bounds reversed", `{"type":"number","minimum":2,"maximum":1}`, "/maximum", "less than minimum"},
		{"length reversed", `{"type":"string","minLength":2,"maxLength":1}`, "/maxLength", "less than minLength"},
		{"items reversed", `{"type":"array","items":{"type":"null"},"minItems":2,"maxItems":1}`, "/maxItems", "less than minItems"},
		{"nested error path", `{"type":"object","additionalProperties":false,"properties":{"a/b":{"type":"array","maxItems":2,"items":{"type":"string","if":{}}}}}`, "/properties/a~1b/items/if", "not allowed"},
		{"too deep", strings.Repeat(`{"type":"array","maxItems":1,"items":`, 16) + `{"type":"null"}` + strings.Repeat("}", 16), strings.Repeat("/items", 16), "nested deeper than 16"},
		{"too big", `{"type":"string","description":"` + strings.Repeat("x", 64<<10) + `"}`, "", "over the limit of 65536"},
		{"duplicate key", `{"type":"string","type":"integer"}`, "", "duplicate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckResultSchema(jsontext.Value(tt.schema))
			if tt.msg == "" && tt.path == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			checkErr(t, err, CodeInvalid, tt.path, tt.msg)
		})
	}
}

func TestResultSchemaCheck(t *testing.T) {
	s, err := CompileResultSchema(jsontext.Value(`{"type":"object","additionalProperties":false,"required":["id"],"properties":{
		"id":{"type":"integer","maximum":9007199254740993},
		"tags":{"type":"array","maxItems":3,"items":{"type":"string","maxLength":2}},
		"kind":{"type":"string","enum":["a","b"]},
		"x":{"type":"number"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, data string
		max        int
		path, msg  string
	}{
		{"ok", `{"id":9007199254740993,"tags":["ab","é😀"],"kind":"a","x":1.5}`, 0, "", ""},
		{"integer as 3.0", `{"id":3.0}`, 0, "", ""},
		{"exact maximum", `{"id":9007199254740994}`, 0, "/id", ""},
		{"fraction", `{"id":1.5}`, 0, "/id", ""},
		{"missing", `{}`, 0, "", ""},
		{"extra member", `{"id":1,"y":2}`, 0, "/y", "not allowed"},
		{"too many items", `{"id":1,"tags":["a","b","c","d"]}`, 0, "/tags", ""},
		{"too long item", `{"id":1,"tags":["abc"]}`, 0, "/tags/0", ""},
		{"enum", `{"id":1,"kind":"c"}`, 0, "/kind", ""},
		{"null", `{"id":null}`, 0, "/id", ""},
		{"duplicate", `{"id":1,"id":2}`, 0, "", "duplicate"},
		{"invalid utf8", "{\"id\":1,\"kind\":\"\xff\"}", 0, "/kind", "UTF-8"},
		{"over maxBytes", `{"id":1,"kind":"a"}`, 10, "", "over the limit of 10"},
		{"over default bytes", `{"id":1,"kind":"` + strings.Repeat("a", 128<<10) + `"}`, 0, "", "over the limit of 131072"},
		{"trailing", `{"id":1} 1`, 0, "", "several"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Check(jsontext.Value(tt.data), tt.max)
			if tt.name == "ok" || tt.name == "integer as 3.0" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			checkErr(t, err, CodeInvalid, tt.path, tt.msg)
		})
	}
}

func TestResultCheckLimits(t *testing.T) {
	s, err := CompileResultSchema(jsontext.Value(`{"type":"array","maxItems":4000,"items":{"type":"integer"}}`))
	if err != nil {
		t.Fatal(err)
	}
	big := "[" + strings.TrimSuffix(strings.Repeat("1,", 2049), ",") + "]"
	checkErr(t, s.Check(jsontext.Value(big), 0), CodeInvalid, "/2048", "more than 2048")
	ok := "[" + strings.TrimSuffix(strings.Repeat("1,", 2048), ",") + "]"
	if err := s.Check(jsontext.Value(ok), 0); err != nil {
		t.Fatal(err)
	}
	deep := strings.Repeat("[", 17) + strings.Repeat("]", 17)
	checkErr(t, s.Check(jsontext.Value(deep), 0), CodeInvalid, strings.Repeat("/0", 16), "nested deeper than 16")
}

// TestResultCheckTimeBound: a check that outlives the bound is an error
// (never a success found late), and one that ends on the bound is not. The
// clock is the test's, so the verdict does not depend on the host's speed.
func TestResultCheckTimeBound(t *testing.T) {
	s, err := CompileResultSchema(jsontext.Value(`{"type":"array","maxItems":4000,"items":{"type":"integer","minimum":0}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer func(d time.Duration, c func() time.Time) { resultCheckTime, resultClock = d, c }(resultCheckTime, resultClock)
	resultCheckTime = ResultCheckTime
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	// A small result is timed at its start and end only; a long one on the
	// way too.
	for _, size := range []struct {
		items, readings int
	}{{3, 2}, {2048, 3}} {
		data := jsontext.Value("[" + strings.TrimSuffix(strings.Repeat("1,", size.items), ",") + "]")
		readings := 0 // of a whole check, counted by the first case
		for _, tt := range []struct {
			name    string
			elapsed func(reading int) time.Duration // the time at the n-th clock reading
			late    bool
		}{
			{"instant", func(int) time.Duration { return 0 }, false},
			{"ends on the bound", func(n int) time.Duration { return min(time.Duration(n), 1) * ResultCheckTime }, false},
			{"just over", func(n int) time.Duration { return min(time.Duration(n), 1) * (ResultCheckTime + 1) }, true},
			{"over at the last reading", func(n int) time.Duration {
				if n == readings-1 {
					return ResultCheckTime + 1
				}
				return 0
			}, true},
		} {
			t.Run(fmt.Sprintf("%d items/%s", size.items, tt.name), func(t *testing.T) {
				n := 0
				resultClock = func() time.Time { n++; return start.Add(tt.elapsed(n - 1)) }
				err := s.Check(data, 0)
				if readings == 0 {
					readings = n
					if n < size.readings {
						t.Fatalf("the clock was read %d times, want at least %d", n, size.readings)
					}
				}
				if tt.late {
					checkErr(t, err, CodeInvalid, "", "result check took longer than 100ms")
				} else if err != nil {
					t.Fatalf("within the bound: %v", err)
				}
			})
		}
	}
}
