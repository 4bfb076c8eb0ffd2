package mcpcore_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/mcpcore/mcpcoretest"
	"github.com/rukh-dev/rukh/mcpcore/mcpcoretest/transcript"
	"github.com/rukh-dev/rukh/policy"
)

const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// collect is a Reply that keeps every message.
type collect struct {
	mu   sync.Mutex
	msgs []mcpcore.Message
}

func (c *collect) Respond(m mcpcore.Message) {
	c.mu.Lock()
	c.msgs = append(c.msgs, m)
	c.mu.Unlock()
	m.Finish()
}
func (c *collect) Send(m mcpcore.Message) { c.Respond(m) }
func (c *collect) Hint(m mcpcore.Message) bool {
	c.Respond(m)
	return true
}
func (c *collect) Context() context.Context { return nil }

// profile edits b's profile for endpoint "local": progressive (when
// progressive), with the job family for test.ok.
func profile(t *testing.T, b *policy.Binding, progressive bool) {
	t.Helper()
	var p map[string]map[string]map[string]any
	if err := json.Unmarshal(b.Profile, &p); err != nil {
		t.Fatal(err)
	}
	if progressive {
		p["endpoints"]["local"]["discovery"] = map[string]any{"mode": "progressive"}
	}
	p["endpoints"]["local"]["tasks"] = map[string]any{"commands": []string{"test.ok"}, "maxTasks": 16, "ttlMs": 60000, "timeoutMs": 5000, "jobTools": true}
	data, err := json.Marshal(p, json.Deterministic(true))
	if err != nil {
		t.Fatal(err)
	}
	b.Profile = data
}

var errLevel = errors.New("this credential may not call commands of level admin")

// server is an endpoint serving revisions 1 and 2 of the test catalogue
// ("local", progressive or not), where test.noisy has level admin and
// Authorize refuses that level.
type server struct {
	active atomic.Uint64
	s      *mcpcore.Session
	tasks  *transcript.Tasks
	legacy bool
	per    bool // a PerRequest session (HTTP's), requests classified by HandleEra
	n      int
}

func newServer(t *testing.T, progressive, legacy, per bool) *server {
	srv := &server{legacy: legacy, per: per}
	srv.active.Store(1)
	revs := map[uint64]*policy.Binding{}
	for rev := uint64(1); rev <= 2; rev++ {
		b := mcpcoretest.Binding(rev, 0, mcpcoretest.Template)
		for i := range b.Endpoints[0].Tools {
			if b.Endpoints[0].Tools[i].Command == "test.noisy" {
				b.Endpoints[0].Tools[i].Security = "admin"
			}
		}
		profile(t, b, progressive)
		revs[rev] = b
	}
	inv := &transcript.Invoker{}
	srv.tasks = transcript.NewTasks(inv)
	t.Cleanup(srv.tasks.Close)
	cfg := mcpcore.Config{
		Endpoint: "local", ServerName: "rukh", ServerVersion: "test",
		Active:  func() (uint64, error) { return srv.active.Load(), nil },
		Load:    mcpcoretest.BindingsFor("local", func(n uint64) (*policy.Binding, error) { return revs[n], nil }),
		Secret:  []byte("test secret"),
		Invoker: inv,
		Tasks:   srv.tasks,
		NewID:   transcript.CounterIDs(),
		Authorize: func(_ *mcpcore.Request, _, level string) (func() error, error) {
			if level == "admin" {
				return nil, errLevel
			}
			return nil, nil
		},
	}
	srv.s = mcpcore.NewEndpoint(cfg).NewSession(context.Background(), mcpcore.SessionConfig{PerRequest: per})
	if legacy && !per {
		srv.do(t, `"method":"initialize","params":{"protocolVersion":"2025-11-25"}`)
	}
	return srv
}

// do sends one request (method and params members) in the server's era and
// returns what came back, ids of invocations and tasks masked.
func (srv *server) do(t *testing.T, members string) []mcpcore.Message {
	t.Helper()
	srv.n++
	line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,%s}`, srv.n, members)
	req, _, rerr := mcpcore.Decode([]byte(line))
	if rerr != nil || req == nil {
		t.Fatalf("%s: %v", line, rerr)
	}
	rep := &collect{}
	if srv.per {
		srv.s.HandleEra(req, rep, srv.legacy, nil)()
	} else {
		srv.s.Handle(req, rep)
	}
	srv.s.Wait()
	for i := range rep.msgs {
		rep.msgs[i].Data = masked.ReplaceAllFunc(rep.msgs[i].Data, func(m []byte) []byte {
			if m[0] == '"' {
				return []byte(`"id":0`)
			}
			return m[:2]
		})
		rep.msgs[i].Done = nil
	}
	return rep.msgs
}

var masked = regexp.MustCompile(`inv_\d+|t-[0-9a-f]{32}|"id":\d+`)

// call is a tools/call of name with arguments (JSON, "" for none).
func (srv *server) call(t *testing.T, name, args string) []mcpcore.Message {
	t.Helper()
	p := `"name":` + quoteJSON(name)
	if args != "" {
		p += `,"arguments":` + args
	}
	if !srv.legacy {
		p += "," + meta
	}
	return srv.do(t, `"method":"tools/call","params":{`+p+`}`)
}

// text is the messages' data, for failures.
func text(ms []mcpcore.Message) string {
	var s string
	for _, m := range ms {
		s += string(m.Data)
	}
	return s
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// through calls name through the call tool.
func (srv *server) through(t *testing.T, name, args string) []mcpcore.Message {
	t.Helper()
	inner := `{"name":` + quoteJSON(name)
	if args != "" {
		inner += `,"arguments":` + args
	}
	return srv.call(t, callTool, inner+"}")
}

// The discovery tools' names on "local" (the profile's default mode,
// namespace test-ns).
var (
	searchTool   = policy.DiscoveryToolName("", "test-ns", policy.DiscoverySearch)
	describeTool = policy.DiscoveryToolName("", "test-ns", policy.DiscoveryDescribe)
	callTool     = policy.DiscoveryToolName("", "test-ns", policy.DiscoveryCall)
)

func sameMessages(t *testing.T, what string, direct, through []mcpcore.Message) {
	t.Helper()
	if len(direct) != len(through) {
		t.Fatalf("%s: %d messages directly, %d through the call tool", what, len(direct), len(through))
	}
	for i := range direct {
		d, c := direct[i], through[i]
		if string(d.Data) != string(c.Data) || d.Code != c.Code || fmt.Sprint(d.Refused) != fmt.Sprint(c.Refused) {
			t.Errorf("%s: directly\n  %s (code %d, refused %v)\nthrough the call tool\n  %s (code %d, refused %v)", what, d.Data, d.Code, d.Refused, c.Data, c.Code, c.Refused)
		}
	}
}

// TestCallToolIsToolsCall: a call through the call tool answers what the
// tools/call of the tool it names answers, on both eras, on a session of
// ids (stdio's) and on one of requests (HTTP's).
func TestCallToolIsToolsCall(t *testing.T) {
	cases := []struct {
		what, slug, args string
		want             string // a fragment of the direct answer: the case is what it says
	}{
		{"success", "echo", `{"title":"hi"}`, `"outcome\":\"succeeded`},
		{"command failure", "fail", "{}", `"outcome\":\"command_failed`},
		{"bad input", "echo", `{"title":"too long"}`, `"outcome\":\"rejected`},
		{"no arguments", "echo", "", `required parameter`},
		{"interaction", "interactive", "{}", `"outcome\":\"rejected`},
		{"level refusal", "noisy", "{}", `may not call commands of level admin`},
		{"task", "ok", "", `"outcome\":\"started`},
		{"execution failure", "crash", "", `execution_failed`},
	}
	for _, era := range []struct {
		name        string
		legacy, per bool
	}{{"modern", false, false}, {"legacy", true, false}, {"modern per request", false, true}, {"legacy per request", true, true}} {
		t.Run(era.name, func(t *testing.T) {
			srv := newServer(t, true, era.legacy, era.per)
			for _, c := range cases {
				name := mcpcoretest.ToolName(c.slug, 1)
				direct := srv.call(t, name, c.args)
				if len(direct) == 0 || !regexp.MustCompile(regexp.QuoteMeta(c.want)).Match(direct[len(direct)-1].Data) {
					t.Fatalf("%s: the direct call answered %s, not %s", c.what, text(direct), c.want)
				}
				sameMessages(t, c.what, direct, srv.through(t, name, c.args))
			}
			// unknown, then stale after a publish between search and call
			sameMessages(t, "unknown name", srv.call(t, "nope", ""), srv.through(t, "nope", ""))
			found := srv.call(t, searchTool, `{"query":"ok"}`)
			if len(found) != 1 || !regexp.MustCompile(`ok__r1`).Match(found[0].Data) {
				t.Fatalf("search for ok: %s", text(found))
			}
			srv.active.Store(2)
			stale := srv.call(t, mcpcoretest.ToolName("ok", 1), "")
			if len(stale) != 1 || stale[0].Code != -32602 {
				t.Fatalf("a stale tools/call answered %s", text(stale))
			}
			sameMessages(t, "stale name", stale, srv.through(t, mcpcoretest.ToolName("ok", 1), ""))
		})
	}
}

// TestDescribeIsTheDirectListEntry: describe answers each tool's object
// byte for byte as a direct endpoint's tools/list shows it.
func TestDescribeIsTheDirectListEntry(t *testing.T) {
	direct := newServer(t, false, false, false)
	prog := newServer(t, true, false, false)
	listed := direct.do(t, `"method":"tools/list","params":{`+meta+`}`)
	var page struct {
		Tools []jsontext.Value `json:"tools"`
	}
	if err := json.Unmarshal(listed[0].Data, &struct {
		Result *struct {
			Tools *[]jsontext.Value `json:"tools"`
		} `json:"result"`
	}{Result: &struct {
		Tools *[]jsontext.Value `json:"tools"`
	}{Tools: &page.Tools}}, json.RejectUnknownMembers(false)); err != nil {
		t.Fatal(err)
	}
	if len(page.Tools) < 10 {
		t.Fatalf("direct list has %d tools", len(page.Tools))
	}
	for _, tool := range page.Tools {
		var o struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(tool, &o, json.RejectUnknownMembers(false)); err != nil {
			t.Fatal(err)
		}
		got := prog.call(t, describeTool, `{"name":`+quoteJSON(o.Name)+`}`)
		var res struct {
			Result struct {
				StructuredContent jsontext.Value `json:"structuredContent"`
				IsError           bool           `json:"isError"`
			} `json:"result"`
		}
		if len(got) != 1 || json.Unmarshal(got[0].Data, &res, json.RejectUnknownMembers(false)) != nil || res.Result.IsError {
			t.Fatalf("describe %s: %s", o.Name, text(got))
		}
		if string(res.Result.StructuredContent) != string(tool) {
			t.Errorf("describe %s =\n  %s\nlisted directly as\n  %s", o.Name, res.Result.StructuredContent, tool)
		}
	}
}
