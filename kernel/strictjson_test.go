package kernel

import (
	stdjson "encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestCheckJSON(t *testing.T) {
	lim := JSONLimits{MaxBytes: 200, MaxDepth: 3, MaxMembers: 5}
	tests := []struct {
		name, in string
		path     string
		msg      string // substring; "" means valid
	}{
		{"object", `{"a":1,"b":[1,2]}`, "", ""},
		{"scalar", ` 3 `, "", ""},
		{"empty", ``, "", "unexpected end of JSON input"},
		{"duplicate", `{"a":{"b":1,"b":2}}`, "/a", `duplicate object member name "b"`},
		{"invalid utf8", "{\"a\":\"\xff\"}", "/a", "invalid UTF-8"},
		{"lone surrogate", `{"a":["\ud800"]}`, "/a/0", "surrogate"},
		{"trailing garbage", `{"a":1} x`, "", "invalid character"},
		{"two values", `{"a":1} {"b":2}`, "", "several top-level JSON values"},
		{"too deep", `{"a":[[{"b":1}]]}`, "/a/0/0", "nested deeper than 3"},
		{"depth ok", `{"a":[[1]]}`, "", ""},
		{"members exact", `{"a":1,"b":2,"c":[1,2]}`, "", ""},
		{"too many members", `{"a":1,"b":2,"c":[1,2,3]}`, "/c/2", "more than 5 object members"},
		{"too many names", `{"a":{},"b":{},"c":{},"d":{},"e":{},"f":{}}`, "/f", "more than 5"},
		{"too big", `"` + strings.Repeat("x", 300) + `"`, "", "over the limit of 200"},
		{"unterminated", `{"a":`, "", "unexpected end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckJSON([]byte(tt.in), lim)
			if tt.msg == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tt.msg)
			}
			e, ok := err.(*Error)
			if !ok || e.Code != CodeInvalid {
				t.Fatalf("error %T %v, want *Error invalid", err, err)
			}
			if e.Path != tt.path || !strings.Contains(e.Message, tt.msg) {
				t.Fatalf("got path %q message %q, want path %q message containing %q", e.Path, e.Message, tt.path, tt.msg)
			}
		})
	}
}

func TestInFile(t *testing.T) {
	t.Parallel()
	text := "{\n  \"a\": [1,\n    {\"b\": true}],\n  \"c\": \"é\", \"d\": 3\n}\n"
	tests := []struct {
		name string
		data string
		err  error
		want string
	}{
		{"member", text, Errorf(CodeInvalid, "bad").AtPath("/c"), "f.json:4:3: /c: bad"},
		{"after a wide character", text, Errorf(CodeInvalid, "bad").AtPath("/d"), "f.json:4:13: /d: bad"},
		{"array element", text, Errorf(CodeInvalid, "bad").AtPath("/a/1/b"), "f.json:3:6: /a/1/b: bad"},
		{"missing member: the enclosing object", text, Errorf(CodeInvalid, "missing").AtPath("/a/1/x"), "f.json:3:5: /a/1/x: missing"},
		{"no path: the root", text, Errorf(CodeInvalid, "bad"), "f.json:1:1: bad"},
		{"trailing comma", "{\n  \"a\": 1,\n}\n", nil, "f.json:2:9: "},
		{"truncated", "{\n  \"a\": [1,\n", nil, "f.json:2:11: unexpected end of JSON input"},
		{"duplicate name", "{\"a\": 1,\n \"a\": 2}", nil, "f.json:2:2: "},
		{"two values", "{}\n {}", nil, "f.json:2:2: several top-level JSON values"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.err
			if err == nil {
				err = CheckJSON([]byte(tt.data), JSONLimits{})
			}
			got := InFile("f.json", []byte(tt.data), err).Error()
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("got %q, want prefix %q", got, tt.want)
			}
		})
	}
}

func TestAppendJSONFloat(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{math.Copysign(0, -1), "-0"},
		{1, "1"},
		{-2.5, "-2.5"},
		{0.1, "0.1"},
		{1e-6, "0.000001"},
		{1e-7, "1e-7"},
		{-1.5e-10, "-1.5e-10"},
		{1e20, "100000000000000000000"},
		{1e21, "1e+21"},
		{123456789.5, "123456789.5"},
		{9007199254740993, "9007199254740992"},
		{5e-324, "5e-324"},
		{math.MaxFloat64, "1.7976931348623157e+308"},
		{-math.MaxFloat64, "-1.7976931348623157e+308"},
	}
	for _, tt := range tests {
		if got := string(AppendJSONFloat([]byte("x"), tt.in)); got != "x"+tt.want {
			t.Errorf("AppendJSONFloat(%g) = %q, want %q", tt.in, got, "x"+tt.want)
		}
	}
}

// encoding/json prints float64 values the same way: an oracle over
// arbitrary finite values.
func TestAppendJSONFloatOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		want, err := stdjson.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendJSONFloat(nil, f); string(got) != string(want) {
			t.Fatalf("AppendJSONFloat(%b) = %s, encoding/json says %s", f, got, want)
		}
	}
}
