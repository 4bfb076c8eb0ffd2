package mcpstdio

import (
	"reflect"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

func TestIsLegacy(t *testing.T) {
	tests := []struct {
		line        string
		initialized bool
		want        bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`, false, true},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, false, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, false, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, true, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":1}}}`, true, true},
		{`{"jsonrpc":"2.0","id":1,"method":"server/discover"}`, true, false},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":{` + modernMeta + `}}`, true, false},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{` + modernMeta + `}}`, false, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + modernMeta + `}}`, true, false},
	}
	for _, tt := range tests {
		req, _, rerr := decodeLine([]byte(tt.line))
		if rerr != nil {
			t.Fatalf("%s: %s", tt.line, rerr.message)
		}
		s := &server{legacyInitialized: tt.initialized}
		if got := s.isLegacy(req); got != tt.want {
			t.Errorf("isLegacy(%s, initialized=%v) = %v, want %v", tt.line, tt.initialized, got, tt.want)
		}
	}
}

func TestInitializeNegotiation(t *testing.T) {
	for requested, want := range map[string]string{
		"2025-11-25": "2025-11-25",
		"2025-06-18": "2025-06-18",
		"2025-03-26": "2025-11-25",
		"2024-11-05": "2025-11-25",
		"2026-07-28": "2025-11-25",
		"":           "2025-11-25",
	} {
		s := newServer(Config{ServerName: "rukh", ServerVersion: "test"})
		req, _, _ := decodeLine([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + requested + `","clientInfo":{"name":"root"}}}`))
		r, rerr := s.initialize(req)
		if rerr != nil {
			t.Fatalf("%q: %s", requested, rerr.message)
		}
		var got struct {
			ProtocolVersion string         `json:"protocolVersion"`
			Capabilities    jsontext.Value `json:"capabilities"`
			ServerInfo      jsontext.Value `json:"serverInfo"`
		}
		if err := json.Unmarshal([]byte("{"+string(finishLegacy(r))+"}"), &got, json.RejectUnknownMembers(true)); err != nil {
			t.Fatal(err)
		}
		if got.ProtocolVersion != want || string(got.Capabilities) != `{"tools":{}}` || string(got.ServerInfo) != `{"name":"rukh","version":"test"}` {
			t.Errorf("initialize(%q) = %+v", requested, got)
		}
		if !s.legacyInitialized {
			t.Error("initialize did not switch the process to the legacy era")
		}
	}
}

func TestEraDecoration(t *testing.T) {
	s := newServer(Config{ServerName: "rukh", ServerVersion: "test"})
	list := result{body: []byte(`"tools":[]`), cacheable: true}
	call := result{body: []byte(`"content":[],"isError":false`)}
	tests := []struct {
		e    era
		r    result
		want string
	}{
		{eraLegacy, list, `"tools":[]`},
		{eraLegacy, call, `"content":[],"isError":false`},
		{eraLegacy, result{}, ``},
		{eraModern, list, `"tools":[],"ttlMs":0,"cacheScope":"private","resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"rukh","version":"test"}}`},
		{eraModern, call, `"content":[],"isError":false,"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"rukh","version":"test"}}`},
		{eraModern, result{}, `"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"rukh","version":"test"}}`},
	}
	for _, tt := range tests {
		if got := string(s.finish(tt.e, tt.r)); got != tt.want {
			t.Errorf("finish(%v, %s) = %s, want %s", tt.e, tt.r.body, got, tt.want)
		}
	}
}

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

		mOut, _, mInv := session(t, nil, func(h *harness) { h.send(t, modern) })
		lOut, _, lInv := session(t, nil, func(h *harness) { h.send(t, init, legacy) })

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
		mi, li := mInv.invocations(), lInv.invocations()
		if len(mi) != len(li) {
			t.Fatalf("%s: modern ran %d, legacy %d", c.name, len(mi), len(li))
		}
		for i := range mi {
			a, b := mi[i].inv, li[i].inv
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
