package kernel

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestLineSplitter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		input string
		max   int
		lines []string
		err   error
	}{
		{"lines", "a\nbc\n", 5, []string{"a", "bc"}, nil},
		{"last line without newline", "a\nbc", 5, []string{"a", "bc"}, nil},
		{"exactly max", "abcde\n", 5, []string{"abcde"}, nil},
		{"over max", "abcdef\n", 5, nil, errLineTooLong},
		{"over max without newline", "abcdef", 5, nil, errLineTooLong},
		{"long after short", "ab\n" + strings.Repeat("x", 200<<10), 100 << 10, []string{"ab"}, errLineTooLong},
		{"long line across reads", strings.Repeat("y", 150<<10) + "\n", 150 << 10, []string{strings.Repeat("y", 150<<10)}, nil},
		{"empty line", "\n", 5, []string{""}, nil},
		{"empty lines", "\n\na\n", 5, []string{"", "", "a"}, nil},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1, 3, 8 << 10} {
			t.Run(tt.name+"/"+strconv.Itoa(chunk), func(t *testing.T) {
				t.Parallel()
				l := lineSplitter{max: tt.max}
				var got []string
				var err error
				in := []byte(tt.input)
			feed:
				for len(in) > 0 {
					data := in[:min(chunk, len(in))]
					in = in[len(data):]
					for len(data) > 0 {
						var line []byte
						if line, data, err = l.next(data); err != nil {
							break feed
						}
						if line != nil {
							got = append(got, string(line))
						}
					}
				}
				if err == nil {
					if line := l.rest(); line != nil {
						got = append(got, string(line))
					}
				}
				if !errors.Is(err, tt.err) {
					t.Errorf("error %v, want %v", err, tt.err)
				}
				if strings.Join(got, "|") != strings.Join(tt.lines, "|") || len(got) != len(tt.lines) {
					t.Errorf("lines %q, want %q", got, tt.lines)
				}
			})
		}
	}
}

func TestParseChannelLine(t *testing.T) {
	t.Parallel()
	text := &resultChecker{kind: ResultText, maxBytes: 64}
	tests := []struct {
		name      string
		line      string
		violation string // substring; "" means none
		progress  string
		result    string
	}{
		{"progress full", `{"type":"progress","message":"m","progress":1.5,"total":3}`, "", "m 1.5/3", ""},
		{"progress empty", `{"type":"progress"}`, "", " -/-", ""},
		{"progress unknown member", `{"type":"progress","percent":5}`, `unknown member "percent"`, "", ""},
		{"progress wrong type", `{"type":"progress","progress":"5"}`, "invalid progress message", "", ""},
		{"progress long message", `{"type":"progress","message":"` + strings.Repeat("m", MaxReasonBytes+1) + `"}`, "over the limit of 4096", "", ""},
		{"report compacted", `{"type":"report","invocationId":"inv_a","outcome":"succeeded","commandResult":{ "kind" : "text", "text":"x" }}`, "", "", `{"kind":"text","text":"x"}`},
		{"report no id", `{"type":"report","outcome":"succeeded"}`, "report without invocationId", "", ""},
		{"report long reason", `{"type":"report","invocationId":"inv_a","outcome":"command_failed","reason":"` + strings.Repeat("r", MaxReasonBytes+1) + `"}`, "report reason is 4097 bytes", "", ""},
		{"report null result", `{"type":"report","invocationId":"inv_a","outcome":"succeeded","commandResult":null}`, "commandResult: must be an object, not null", "", ""},
		{"report result too big", `{"type":"report","invocationId":"inv_a","outcome":"succeeded","commandResult":{"kind":"text","text":"` + strings.Repeat("b", 64) + `"}}`, "over the limit of 64", "", ""},
		{"report text not string", `{"type":"report","invocationId":"inv_a","outcome":"succeeded","commandResult":{"kind":"text","text":5}}`, "text must be a string, not number", "", ""},
		{"report no kind", `{"type":"report","invocationId":"inv_a","outcome":"succeeded","commandResult":{"text":"x"}}`, `missing "kind"`, "", ""},
		{"not an object", `["report"]`, "not a JSON object", "", ""},
		{"no type", `{"message":"x"}`, `without "type"`, "", ""},
		{"core message", `{"type":"cancel","reason":"x"}`, `"cancel" is sent by the core`, "", ""},
		{"invalid utf-8", "{\"type\":\"progress\",\"message\":\"\xff\"}", "invalid UTF-8", "", ""},
		{"two values", `{"type":"progress"} {}`, "invalid channel message: several top-level JSON values (the channel carries one complete JSON object per line, ending in a newline; this line holds more than one value)", "", ""},
		{"empty", ``, "one complete JSON object per line, ending in a newline; this line is empty", "", ""},
		{"pretty-printed first line", `{`, "invalid channel message: unexpected end of JSON input (the channel carries one complete JSON object per line, ending in a newline; this line starts a value it does not finish: pretty-printed or truncated JSON?)", "", ""},
		{"truncated", `{"type":"report","invocationId":"inv_a","outc`, "one complete JSON object per line, ending in a newline; this line starts a value it does not finish", "", ""},
		{"pretty-printed member line", `  "type": "report",`, "one complete JSON object per line, ending in a newline; this line does not start with '{': part of a pretty-printed or split message?", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ev := parseChannelLine([]byte(tt.line), "inv_a", text)
			if tt.violation == "" && ev.violation != "" || !strings.Contains(ev.violation, tt.violation) {
				t.Fatalf("violation %q, want %q", ev.violation, tt.violation)
			}
			if tt.progress != "" {
				if ev.progress == nil {
					t.Fatal("no progress")
				}
				p := *ev.progress
				got := p.Message + " " + fmtOpt(p.Progress) + "/" + fmtOpt(p.Total)
				if got != tt.progress {
					t.Errorf("progress %q, want %q", got, tt.progress)
				}
			}
			if tt.result != "" && (ev.report == nil || string(ev.report.result) != tt.result) {
				t.Errorf("report %+v, want result %s", ev.report, tt.result)
			}
		})
	}
}

func fmtOpt(f *float64) string {
	if f == nil {
		return "-"
	}
	return strconv.FormatFloat(*f, 'g', -1, 64)
}

// TestQuickReportAgreesWithFullChecks: the one-pass report decoder takes
// only what the full checks accept, and decodes it the same: over reports
// with members reordered, spaced, escaped, repeated, mistyped, unknown,
// null or too deep, every line gives the same event both ways.
func TestQuickReportAgreesWithFullChecks(t *testing.T) {
	t.Parallel()
	members := []string{
		`"type":"report"`, `"type":"progress"`, `"type":"rep\u006frt"`, `"type":5`,
		`"invocationId":"inv_a"`, `"invocationId":"inv_b"`, `"invocationId":null`, `"invocationId":"inv\u005fa"`,
		`"outcome":"succeeded"`, `"outcome":"command_failed"`, `"outcome":"maybe"`, `"outcome":1`,
		`"reason":""`, `"reason":"r\n\"q\""`, `"reason":null`, `"reason":"` + strings.Repeat("r", MaxReasonBytes+1) + `"`,
		`"commandResult":{"kind":"text","text":"ok"}`, `"commandResult" : { "kind" : "text" , "text" : "o\u006b" }`,
		`"commandResult":{"text":"ok","kind":"text"}`, `"commandResult":{"kind":"text","text":null}`,
		`"commandResult":{"kind":"text","text":"a","text":"b"}`, `"commandResult":{"kind":"text","text":"ok","extra":1}`,
		`"commandResult":{"kind":"structured","data":{"a":[1,{"b":"}"}]}}`, `"commandResult":{"kind":"text","data":{}}`,
		`"commandResult":{"kind":"structured","data":{"id":7}}`, `"commandResult":{"data":{ "id" : 8 },"kind":"structured"}`,
		`"commandResult":{"kind":null,"text":"ok"}`, `"commandResult":[]`, `"commandResult":null`, `"commandResult":"x"`,
		`"commandResult":{"kind":"text","text":"` + strings.Repeat("[", 70) + `"}`,
		`"commandResult":{"kind":"structured","data":` + strings.Repeat("[", 63) + strings.Repeat("]", 63) + `}`,
		`"commandResult":{"kind":"structured","data":` + strings.Repeat("[", 62) + strings.Repeat("]", 62) + `}`,
		`"Type":"report"`, `"extra":"x"`, `"message":"m"`,
	}
	checkers := map[string]*resultChecker{
		"text": {kind: ResultText, maxBytes: 1 << 20},
		"none": {maxBytes: 1 << 20},
	}
	schema, err := CompileResultSchema([]byte(`{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"],"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	checkers["structured"] = &resultChecker{kind: ResultStructured, schema: schema, maxBytes: 1 << 20}
	r := rand.New(rand.NewPCG(6, 9))
	lines := []string{`{}`, `{"type":"report","invocationId":"inv_a","outcome":"succeeded"} `, ` {"type":"report","invocationId":"inv_a","outcome":"succeeded"}` + "\n"}
	for range 4000 {
		n := 1 + r.IntN(6)
		var parts []string
		for range n {
			parts = append(parts, members[r.IntN(len(members))])
		}
		sep := []string{",", " , ", ",\t"}[r.IntN(3)]
		line := "{" + strings.Join(parts, sep) + "}"
		switch r.IntN(8) {
		case 0:
			line += " {}"
		case 1:
			line = "  " + line + "\n"
		}
		lines = append(lines, line)
	}
	// And lines of one member of each kind, in any order, some left out.
	for range 2000 {
		var parts []string
		for _, kind := range []string{`"type"`, `"invocationId"`, `"outcome"`, `"reason"`, `"commandResult"`} {
			var of []string
			for _, m := range members {
				if strings.HasPrefix(m, kind) {
					of = append(of, m)
				}
			}
			if r.IntN(5) > 0 || kind == `"type"` {
				parts = append(parts, of[r.IntN(len(of))])
			}
		}
		r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
		lines = append(lines, "{"+strings.Join(parts, ",")+"}")
	}
	quick := 0
	for _, line := range lines {
		if _, ok := quickReport([]byte(line)); ok {
			quick++
		}
		for name, rc := range checkers {
			got, want := parseChannelLine([]byte(line), "inv_a", rc), parseChannelLineFully([]byte(line), "inv_a", rc)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s result, line %s:\n one pass %+v %+v\n full     %+v %+v", name, line, got, got.report, want, want.report)
			}
		}
	}
	if quick < len(lines)/20 {
		t.Errorf("only %d of %d lines took the one pass", quick, len(lines))
	}
}

// BenchmarkParseReport prices the usual report line both ways.
func BenchmarkParseReport(b *testing.B) {
	line := []byte(`{"type":"report","invocationId":"inv_a","outcome":"succeeded","commandResult":{"kind":"text","text":"ok"}}`)
	rc := &resultChecker{kind: ResultText, maxBytes: 1 << 20}
	for _, bb := range []struct {
		name  string
		parse func([]byte, string, *resultChecker) channelEvent
	}{{"one-pass", parseChannelLine}, {"full", parseChannelLineFully}} {
		b.Run(bb.name, func(b *testing.B) {
			for b.Loop() {
				if ev := bb.parse(line, "inv_a", rc); ev.report == nil {
					b.Fatal(ev.violation)
				}
			}
		})
	}
}
