package mcpcore

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcpcore/mcpcoretest"
	"github.com/rukh-dev/rukh/policy"
)

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func TestRevisionCacheKeepsOnlyTheNewest(t *testing.T) {
	loads := map[uint64]int{}
	c := &revisionCache{load: mcpcoretest.Bindings(func(n uint64) (*policy.Binding, error) {
		loads[n]++
		return mcpcoretest.Binding(n, 0, mcpcoretest.Template), nil
	})}
	for _, n := range []uint64{1, 1, 2, 2, 3, 1, 3} {
		r, err := c.get(n)
		if err != nil || r.n != n {
			t.Fatalf("get(%d) = %v, %v", n, r, err)
		}
	}
	// 1 and 2 are dropped once a newer revision is active; an old number
	// (a stale request racing a publish) is served but never cached.
	want := map[uint64]int{1: 2, 2: 1, 3: 1}
	if fmt.Sprint(loads) != fmt.Sprint(want) {
		t.Errorf("loads = %v, want %v", loads, want)
	}
	if c.cur == nil || c.cur.n != 3 {
		t.Errorf("cached revision = %v, want 3", c.cur)
	}
}

func TestWireIsCompactedForFraming(t *testing.T) {
	b := mcpcoretest.Binding(1, 0, mcpcoretest.Template)
	b.Endpoints[0].Tools[0].Wire = jsontext.Value("{\n  \"name\": \"big__r1\",\n  \"inputSchema\": {\"type\": \"object\"}\n}")
	r, err := prepareRevision(1, mcpcoretest.View(t, b))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(policy.AppendToolWire(nil, "big__r1", r.bodies[0])); got != `{"name":"big__r1","inputSchema":{"type":"object"}}` {
		t.Errorf("wire = %s", got)
	}
	if !bytes.ContainsRune(b.Endpoints[0].Tools[0].Wire, '\n') {
		t.Error("the caller's binding was modified")
	}
}

func TestListPageByteBound(t *testing.T) {
	b := mcpcoretest.Binding(1, 5, mcpcoretest.Template)
	many := &b.Endpoints[1]
	pad := strings.Repeat("x", 400<<10)
	for i := range many.Tools {
		many.Tools[i].Wire = jsontext.Value(fmt.Sprintf(`{"name":%q,"description":%q,"inputSchema":{"type":"object"}}`, many.Tools[i].Name, pad))
	}
	s := newTestSession(Config{Endpoint: "many", Active: func() (uint64, error) { return 1, nil },
		Load: mcpcoretest.BindingsFor("many", func(uint64) (*policy.Binding, error) { return b, nil })})
	var sizes []int
	var cursor jsontext.Value
	for {
		r, rerr := s.listTools(cursor)
		if rerr != nil {
			t.Fatal(rerr.message)
		}
		var page struct {
			Tools      []jsontext.Value `json:"tools"`
			NextCursor *string          `json:"nextCursor"`
		}
		if err := json.Unmarshal(append(append([]byte("{"), r.body...), '}'), &page); err != nil {
			t.Fatal(err)
		}
		if len(r.body) > pageBytes+64 {
			t.Errorf("page of %d bytes", len(r.body))
		}
		sizes = append(sizes, len(page.Tools))
		if page.NextCursor == nil {
			break
		}
		cursor = jsontext.Value(`"` + *page.NextCursor + `"`)
	}
	if fmt.Sprint(sizes) != "[2 2 1]" {
		t.Errorf("page sizes = %v, want [2 2 1] (two 400 KiB tools per 1 MiB page)", sizes)
	}
}

func TestProgressNeverBlocks(t *testing.T) {
	rep := &fakeReply{room: 3}
	c := &call{}
	p := &progressSink{s: newTestSession(Config{}), rep: rep, token: jsontext.Value(`"t"`), c: c}
	for i := 1; i <= 100; i++ {
		v := float64(i)
		p.send(kernel.Progress{Progress: &v}) // must return even when the transport refuses
	}
	v := 1000.0
	p.close()
	p.send(kernel.Progress{Progress: &v}) // after the response: nothing
	if len(rep.hints) != 3 || p.dropped != 97 {
		t.Errorf("%d notifications taken, %d dropped; want 3 and 97", len(rep.hints), p.dropped)
	}
	for _, h := range rep.hints {
		if strings.Contains(string(h), `"progress":1000`) {
			t.Error("progress sent after the call ended")
		}
	}
}

// fakeReply takes room hints and refuses the rest, as a full queue does.
type fakeReply struct {
	room      int
	hints     [][]byte
	responses [][]byte
}

func (f *fakeReply) Respond(m Message)        { f.responses = append(f.responses, m.Data); m.Finish() }
func (f *fakeReply) Send(m Message)           { f.responses = append(f.responses, m.Data) }
func (f *fakeReply) Context() context.Context { return nil }
func (f *fakeReply) Hint(m Message) bool {
	if len(f.hints) >= f.room {
		return false
	}
	f.hints = append(f.hints, m.Data)
	return true
}

func newTestSession(cfg Config) *Session {
	return NewEndpoint(cfg).NewSession(context.Background(), SessionConfig{})
}

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
		s := &Session{legacyInitialized: tt.initialized}
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
		s := newTestSession(Config{ServerName: "rukh", ServerVersion: "test"})
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
		if err := json.Unmarshal([]byte("{"+string(appendLegacy(nil, r))+"}"), &got, json.RejectUnknownMembers(true)); err != nil {
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
	s := newTestSession(Config{ServerName: "rukh", ServerVersion: "test"})
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
		want := `{"jsonrpc":"2.0","id":7,"result":{` + tt.want + "}}\n"
		if got := string(s.response(jsontext.Value("7"), tt.e, tt.r)); got != want {
			t.Errorf("response(7, %v, %s) = %s, want %s", tt.e, tt.r.body, got, want)
		}
	}
}

// TestResponseInPlace: a list page built with room before it is framed in
// its own buffer, to the same bytes as a copy; an id longer than the room
// falls back to the copy.
func TestResponseInPlace(t *testing.T) {
	s := newTestSession(Config{ServerName: "rukh", ServerVersion: "test"})
	page := `"tools":[{"name":"a"}],"nextCursor":"c"`
	long := jsontext.Value(`"` + strings.Repeat("i", listRoom) + `"`)
	for _, e := range []era{eraLegacy, eraModern} {
		for _, id := range []jsontext.Value{jsontext.Value("7"), jsontext.Value(`"req-12"`), long} {
			buf := append(make([]byte, listRoom, listRoom+len(page)+len(s.info)+160), page...)
			inPlace := result{body: buf[listRoom:], cacheable: true, buf: buf, room: listRoom}
			copied := result{body: []byte(page), cacheable: true}
			want := string(s.response(id, e, copied))
			got := s.response(id, e, inPlace)
			if string(got) != want {
				t.Errorf("era %v, id %s: in place %s, want %s", e, id, got, want)
			}
			shared := &got[:cap(got)][cap(got)-1] == &buf[:cap(buf)][cap(buf)-1]
			if framed := len(responseHead)+len(id)+len(resultOpen) <= listRoom; shared != framed {
				t.Errorf("era %v, id %s: framed in the page's buffer: %v, want %v", e, id, shared, framed)
			}
		}
	}
}

// wirePages is a catalogue that also has each page as tools/list writes
// its tools; last is what it handed out last.
type wirePages struct {
	Catalog
	last []byte
}

func (w *wirePages) PageWire(i int) ([]byte, error) {
	var b []byte
	err := w.Page(i, func(name string, body []byte) error {
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = policy.AppendToolWire(b, name, body)
		return nil
	})
	w.last = b
	return b, err
}

// TestSplicedListIsTheBuiltList: a list page written in parts from the
// catalogue's bytes (or joined, where the transport takes no parts) is
// byte for byte the page built tool by tool, in both eras, on every page
// (the last one carries the job tools).
func TestSplicedListIsTheBuiltList(t *testing.T) {
	b := mcpcoretest.Binding(1, 40, mcpcoretest.Template)
	cfg := Config{Endpoint: "many", Active: func() (uint64, error) { return 1, nil },
		Load: mcpcoretest.BindingsFor("many", func(uint64) (*policy.Binding, error) { return b, nil })}
	wp := &wirePages{}
	view := viewFromLoad(cfg.Active, &revisionCache{load: cfg.Load})
	plainPages := false // the catalogue as it is, without wire pages
	wcfg := cfg
	wcfg.View = func(n uint64, fn func(uint64, Catalog) error) error {
		return view(n, func(n uint64, c Catalog) error {
			if c == nil || plainPages {
				return fn(n, c)
			}
			wp.Catalog = c
			return fn(n, wp)
		})
	}
	ep := NewEndpoint(wcfg) // one endpoint: its cursors are its own
	plain := ep.NewSession(context.Background(), SessionConfig{})
	spliced := ep.NewSession(context.Background(), SessionConfig{Spliced: true})
	joined := ep.NewSession(context.Background(), SessionConfig{})
	for _, e := range []era{eraModern, eraLegacy} {
		var cursor jsontext.Value
		for pages := 0; ; pages++ {
			answer := func(s *Session) Message {
				t.Helper()
				r, rerr := s.listTools(cursor)
				if rerr != nil {
					t.Fatal(rerr.message)
				}
				var got Message
				s.reply(&Request{id: jsontext.Value(`"x7"`), rep: replyFunc(func(m Message) { got = m })}, e, r)
				return got
			}
			plainPages = true
			want := answer(plain)
			plainPages = false
			if len(want.More) != 0 {
				t.Fatal("a catalogue without wire pages answered in parts")
			}
			sm := answer(spliced)
			if len(sm.More) != 2 || len(wp.last) > 0 && &sm.More[0][0] != &wp.last[0] {
				t.Errorf("era %d page %d: %d parts, the page's bytes not handed on as they are", e, pages, len(sm.More))
			}
			if got := sm.Bytes(); string(got) != string(want.Data) || sm.Len() != len(want.Data) {
				t.Errorf("era %d page %d: spliced\n%s\nwant\n%s", e, pages, got, want.Data)
			}
			var buf bytes.Buffer
			if sm.WriteTo(&buf); buf.String() != string(want.Data) {
				t.Errorf("era %d page %d: written\n%s\nwant\n%s", e, pages, buf.Bytes(), want.Data)
			}
			if jm := answer(joined); len(jm.More) != 0 || string(jm.Data) != string(want.Data) {
				t.Errorf("era %d page %d: joined\n%s\nwant\n%s", e, pages, jm.Data, want.Data)
			}
			var page struct {
				Result struct {
					NextCursor *string `json:"nextCursor"`
				} `json:"result"`
			}
			if err := json.Unmarshal(want.Data, &page); err != nil {
				t.Fatal(err)
			}
			if page.Result.NextCursor == nil {
				if pages == 0 {
					t.Fatal("one page only: the test needs more")
				}
				break
			}
			cursor = jsontext.Value(`"` + *page.Result.NextCursor + `"`)
		}
	}
}

type replyFunc func(Message)

func (f replyFunc) Respond(m Message)        { f(m) }
func (f replyFunc) Send(m Message)           { f(m) }
func (f replyFunc) Hint(Message) bool        { return false }
func (f replyFunc) Context() context.Context { return nil }
