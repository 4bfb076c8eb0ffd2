package mcpstdio

import (
	"reflect"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/mcpcore/mcpcoretest/transcript"
)

// The legacy mapping must not change what a call means: the same call on
// both eras reaches the invoker identically and yields the same content,
// structuredContent and isError; only the era's decoration differs.
func TestLegacyCallMeansTheSame(t *testing.T) {
	calls := []struct{ name, args string }{
		{"echo__r1", `{"title":"hi","count":9007199254740993}`},
		{"echo__r1", `{"title":"much too long"}`},
		{"fail__r1", ""},
		{"crash__r1", ""},
		{"ok__r1", ""},
	}
	for _, c := range calls {
		modern := callLine(1, c.name, c.args)
		p := `"name":"` + c.name + `"`
		if c.args != "" {
			p += `,"arguments":` + c.args
		}
		legacy := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + p + `}}`
		init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`

		mOut, _, mInv := session(t, nil, func(h *transcript.Harness) { h.Send(t, modern) })
		lOut, _, lInv := session(t, nil, func(h *transcript.Harness) { h.Send(t, init, legacy) })

		type callRes struct {
			Content           jsontext.Value `json:"content"`
			StructuredContent jsontext.Value `json:"structuredContent"`
			IsError           bool           `json:"isError"`
			ResultType        *string        `json:"resultType"`
		}
		var m, l callRes
		if err := json.Unmarshal(responses(t, mOut)["1"]["result"], &m); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(responses(t, lOut)["1"]["result"], &l); err != nil {
			t.Fatal(err)
		}
		if string(m.Content) != string(l.Content) || string(m.StructuredContent) != string(l.StructuredContent) || m.IsError != l.IsError {
			t.Errorf("%s %s: modern %+v, legacy %+v", c.name, c.args, m, l)
		}
		if m.ResultType == nil || l.ResultType != nil {
			t.Errorf("%s: resultType modern %v legacy %v", c.name, m.ResultType, l.ResultType)
		}
		mi, li := mInv.Invocations(), lInv.Invocations()
		if len(mi) != len(li) {
			t.Fatalf("%s: modern ran %d, legacy %d", c.name, len(mi), len(li))
		}
		for i := range mi {
			a, b := mi[i].Inv, li[i].Inv
			if a.ID != b.ID || a.Dir != b.Dir || a.Limits != b.Limits || a.Interactive != b.Interactive ||
				!reflect.DeepEqual(a.Request, b.Request) || !reflect.DeepEqual(a.Command, b.Command) {
				t.Errorf("%s: invocations differ:\nmodern %+v\nlegacy %+v", c.name, a, b)
			}
		}
		if strings.Contains(lOut, "resultType") || strings.Contains(lOut, "ttlMs") {
			t.Errorf("legacy output carries modern fields: %s", lOut)
		}
	}
}
