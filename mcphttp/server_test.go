package mcphttp

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/policy"
)

// catalog is one revision with one tool per security level.
type catalog struct{ launch *policy.Launch }

var levels = map[string]string{"std": "", "elev": policy.SecurityElevated, "strict": policy.SecurityStrict}

func (c catalog) HasEndpoint() bool { return true }
func (c catalog) Pages() int        { return 1 }
func (c catalog) Page(i int, fn func(name string, body []byte) error) error {
	for _, n := range []string{"elev", "std", "strict"} {
		if err := fn(n, []byte(`{"inputSchema":{"type":"object"}}`)); err != nil {
			return err
		}
	}
	return nil
}
func (c catalog) Resolve(name string) (*mcpcore.Resolved, error) {
	level, ok := levels[name]
	if !ok {
		return nil, nil
	}
	return &mcpcore.Resolved{Command: &kernel.Command{ID: "t." + name, Execute: kernel.Execute{Mode: kernel.ModeManaged}},
		Release: &policy.BoundRelease{Name: "t", Version: "1"}, Template: c.launch.Template, Security: level}, nil
}
func (c catalog) Digest() ([32]byte, error)    { return mcpcore.DigestPages(c) }
func (c catalog) Endpoints() []string          { return []string{"e"} }
func (c catalog) Revision() string             { return "r1" }
func (c catalog) Launch() *policy.Launch       { return c.launch }
func (c catalog) Template() policy.Template    { return c.launch.Template }
func (c catalog) Discovery() *policy.Discovery { return c.launch.Discovery }
func (c catalog) Tool(name string) ([]byte, bool, error) {
	if _, ok := levels[name]; !ok {
		return nil, false, nil
	}
	return policy.AppendToolWire(nil, name, []byte(`{"inputSchema":{"type":"object"}}`)), true, nil
}
func (c catalog) Search(string, int) ([]mcpcore.SearchHit, error) {
	return []mcpcore.SearchHit{{Name: "elev"}, {Name: "std"}, {Name: "strict"}}, nil
}

// creds is a credential store of static, short-lived and one-time tokens
// whose one-time consumption is atomic.
type creds struct {
	mu   sync.Mutex
	byTk map[string]kernel.Credential
	// down makes every lookup fail as a store that cannot be reached does;
	// downConsume only consumption.
	down, downConsume atomic.Bool
	// consuming, when set, is told of each consumption and the
	// consumption waits for its answer (a store that is slow to write).
	consuming chan chan struct{}
}

var errStoreDown = kernel.Errorf(kernel.CodeUnavailable, "the etcd store is unavailable")

func (c *creds) Authenticate(token string) (kernel.Credential, error) {
	if c.down.Load() {
		return kernel.Credential{}, errStoreDown
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cr, ok := c.byTk[token]
	if !ok {
		return kernel.Credential{}, fmt.Errorf("unknown token")
	}
	return cr, nil
}

func (c *creds) ConsumeOnce(h kernel.TokenHash, command string) (kernel.Credential, error) {
	if c.down.Load() || c.downConsume.Load() {
		return kernel.Credential{}, errStoreDown
	}
	if c.consuming != nil {
		proceed := make(chan struct{})
		c.consuming <- proceed
		<-proceed
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for tk, cr := range c.byTk {
		if cr.Hash == h && cr.Kind == kernel.CredentialOneTime {
			delete(c.byTk, tk)
			return cr, nil
		}
	}
	return kernel.Credential{}, fmt.Errorf("unknown token")
}

type countingInvoker struct {
	n      atomic.Int64
	caller sync.Map // invocation id → kernel.Caller
}

func (i *countingInvoker) Invoke(ctx context.Context, inv *kernel.Invocation) kernel.Result {
	i.n.Add(1)
	i.caller.Store(inv.ID, inv.Caller)
	return kernel.Result{Outcome: kernel.Succeeded, CommandResult: jsontext.Value(`{"kind":"text","text":"ok"}`)}
}

func newTestServer(t testing.TB, c *creds, inv kernel.Invoker) string {
	t.Helper()
	return newTestServerWith(t, c, inv, nil)
}

func newTestServerWith(t testing.TB, c *creds, inv kernel.Invoker, diag func(*kernel.Invocation, kernel.Result)) string {
	t.Helper()
	return newTestServerCfg(t, c, inv, diag, nil)
}

// newTestServerCfg is newTestServerWith whose Config adjust may change.
func newTestServerCfg(t testing.TB, c *creds, inv kernel.Invoker, diag func(*kernel.Invocation, kernel.Result), adjust func(*Config)) string {
	t.Helper()
	return newTestServerWrapped(t, c, inv, diag, adjust, nil)
}

// newTestServerWrapped serves the handler through wrap, when not nil.
func newTestServerWrapped(t testing.TB, c *creds, inv kernel.Invoker, diag func(*kernel.Invocation, kernel.Result), adjust func(*Config), wrap func(http.Handler) http.Handler) string {
	t.Helper()
	l := &policy.Launch{Endpoint: "e", Namespace: "ns", Subject: "owner", Transports: []string{"http"}, HTTPAuth: policy.HTTPAuthBearer,
		Template: policy.Template{TimeoutMs: 5000, MaxConcurrent: 64, MaxHeld: 64, DiagnosticsBytes: 64, ResultBytes: 1 << 16}}
	cat := catalog{launch: l}
	cfg := Config{
		Endpoints: []Endpoint{{Namespace: "ns", HTTPAuth: l.HTTPAuth, Core: mcpcore.Config{
			Endpoint: "e", Launch: l, ServerName: "rukh", ServerVersion: "test",
			Active:      func() (uint64, error) { return 1, nil },
			View:        func(n uint64, fn func(uint64, mcpcore.Catalog) error) error { return fn(1, cat) },
			Invoker:     inv,
			Diagnostics: diag,
		}}},
		Loopback:    true,
		Credentials: c,
	}
	if adjust != nil {
		adjust(&cfg)
	}
	h := New(cfg)
	var handler http.Handler = h
	if wrap != nil {
		handler = wrap(h)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(func() { srv.Close(); h.Close() })
	return srv.URL + PathPrefix + "ns/e"
}

func call(t *testing.T, url, token, tool string, id int) (int, string) {
	t.Helper()
	return callWith(t, url, token, tool, id, `{}`)
}

func callWith(t *testing.T, url, token, tool string, id int, args string) (int, string) {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, id, tool, args)
	r, _ := http.NewRequest("POST", url, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Mcp-Method", "tools/call")
	r.Header.Set("Mcp-Name", tool)
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("WWW-Authenticate") + " " + string(b)
}

// A call runs on its request's goroutine, but its bookkeeping (the audit
// record, saved diagnostics) still waits for nothing: the response is on
// its way while the bookkeeping has not finished.
func TestResponseBeforeBookkeeping(t *testing.T) {
	c := &creds{byTk: map[string]kernel.Credential{
		"key": {Agent: "a", Endpoint: "e", Kind: kernel.CredentialStatic, Hash: kernel.TokenHash{1}},
	}}
	answered, saved := make(chan struct{}), make(chan struct{})
	url := newTestServerWith(t, c, &countingInvoker{}, func(*kernel.Invocation, kernel.Result) {
		select {
		case <-answered:
		case <-time.After(10 * time.Second):
			t.Error("the response waited for the bookkeeping")
		}
		close(saved)
	})
	status, body := call(t, url, "key", "std", 1)
	close(answered)
	if status != 200 || !strings.Contains(body, `"outcome":"succeeded"`) {
		t.Fatalf("%d: %s", status, body)
	}
	<-saved
}

// Bookkeeping the core is told is quick (an audit record queued, nothing
// saved) runs in place, without a goroutine: it is done when the response
// arrives. Told it is not quick, it runs after the response (above).
func TestQuickBookkeepingInPlace(t *testing.T) {
	c := &creds{byTk: map[string]kernel.Credential{
		"key": {Agent: "a", Endpoint: "e", Kind: kernel.CredentialStatic, Hash: kernel.TokenHash{1}},
	}}
	var done, quickAsked atomic.Int64
	url := newTestServerCfg(t, c, &countingInvoker{}, func(*kernel.Invocation, kernel.Result) {
		time.Sleep(50 * time.Millisecond) // a goroutine would let the response go first
		done.Add(1)
	}, func(cfg *Config) {
		cfg.Endpoints[0].Core.Quick = func(*kernel.Invocation, kernel.Result) bool { quickAsked.Add(1); return true }
	})
	for i := range 3 {
		status, body := call(t, url, "key", "std", i+1)
		if status != 200 || !strings.Contains(body, `"outcome":"succeeded"`) {
			t.Fatalf("%d: %s", status, body)
		}
		if n := done.Load(); n != int64(i+1) {
			t.Fatalf("after %d responses the bookkeeping ran %d times", i+1, n)
		}
	}
	if quickAsked.Load() != 3 {
		t.Fatalf("Quick asked %d times, want 3", quickAsked.Load())
	}
}

// TestLevelsThroughCallTool: on a progressive endpoint, a call through the
// call tool is authorised as the tools/call of the tool it names: the same
// status, challenge and body for every credential and level.
func TestLevelsThroughCallTool(t *testing.T) {
	c := &creds{byTk: map[string]kernel.Credential{
		"key": {Agent: "a", Endpoint: "e", Kind: kernel.CredentialStatic, Hash: kernel.TokenHash{1}},
		"agt": {Agent: "a", Endpoint: "e", Kind: kernel.CredentialShortLived, Hash: kernel.TokenHash{2}},
	}}
	inv := &countingInvoker{}
	url := newTestServerCfg(t, c, inv, nil, func(cfg *Config) {
		l := *cfg.Endpoints[0].Core.Launch
		l.Discovery = &policy.Discovery{Mode: policy.DiscoveryProgressive}
		cfg.Endpoints[0].Core.Launch = &l
		cat := catalog{launch: &l}
		cfg.Endpoints[0].Core.View = func(n uint64, fn func(uint64, mcpcore.Catalog) error) error { return fn(1, cat) }
	})
	callTool := policy.DiscoveryToolName("", "ns", policy.DiscoveryCall)
	inv1 := regexp.MustCompile(`"invocationId\\?":\\?"[^"\\]*`)
	for _, token := range []string{"key", "agt"} {
		for _, tool := range []string{"std", "elev", "strict"} {
			before := inv.n.Load()
			ds, db := call(t, url, token, tool, 1)
			direct := inv.n.Load() - before
			ts, tb := callWith(t, url, token, callTool, 1, fmt.Sprintf(`{"name":%q,"arguments":{}}`, tool))
			through := inv.n.Load() - before - direct
			db, tb = inv1.ReplaceAllString(db, "ID"), inv1.ReplaceAllString(tb, "ID")
			if ds != ts || db != tb || direct != through {
				t.Errorf("%s on %s: directly %d (%d ran) %s\nthrough the call tool %d (%d ran) %s", token, tool, ds, direct, db, ts, through, tb)
			}
		}
	}
}

// TestOneTimeThroughCallTool: a one-time token sent with a call through
// the call tool is claimed and released like one sent with tools/call: a
// call refused before it runs leaves it usable, a call that runs spends it.
func TestOneTimeThroughCallTool(t *testing.T) {
	c := &creds{byTk: map[string]kernel.Credential{"otk": {Agent: "a", Endpoint: "e", Kind: kernel.CredentialOneTime, Hash: kernel.TokenHash{9}}}}
	inv := &countingInvoker{}
	url := newTestServerCfg(t, c, inv, nil, func(cfg *Config) {
		l := *cfg.Endpoints[0].Core.Launch
		l.Discovery = &policy.Discovery{Mode: policy.DiscoveryProgressive}
		cfg.Endpoints[0].Core.Launch = &l
		cat := catalog{launch: &l}
		cfg.Endpoints[0].Core.View = func(n uint64, fn func(uint64, mcpcore.Catalog) error) error { return fn(1, cat) }
	})
	callTool := policy.DiscoveryToolName("", "ns", policy.DiscoveryCall)
	if status, body := callWith(t, url, "otk", callTool, 1, `{"name":"strict","arguments":{"nope":1}}`); status != 200 || !strings.Contains(body, `"outcome":"rejected"`) {
		t.Fatalf("undeclared argument through the call tool: %d %s", status, body)
	}
	if status, body := call(t, url, "otk", "strict", 2); status != 200 || !strings.Contains(body, `"outcome":"succeeded"`) {
		t.Fatalf("the token after a call through the call tool that did not run: %d %s", status, body)
	}
	if status, _ := callWith(t, url, "otk", callTool, 3, `{"name":"strict","arguments":{}}`); status != 401 {
		t.Errorf("a spent token through the call tool: %d, want 401", status)
	}
	if n := inv.n.Load(); n != 1 {
		t.Errorf("%d calls ran, want 1", n)
	}
}

func TestLevels(t *testing.T) {
	c := &creds{byTk: map[string]kernel.Credential{
		"key": {Agent: "a", Endpoint: "e", Kind: kernel.CredentialStatic, Hash: kernel.TokenHash{1}},
		"agt": {Agent: "a", Endpoint: "e", Kind: kernel.CredentialShortLived, Hash: kernel.TokenHash{2}},
		"bad": {Agent: "b", Endpoint: "other", Kind: kernel.CredentialStatic, Hash: kernel.TokenHash{3}},
	}}
	inv := &countingInvoker{}
	url := newTestServer(t, c, inv)
	for _, tc := range []struct {
		token, tool string
		status      int
	}{
		{"key", "std", 200}, {"key", "elev", 403}, {"key", "strict", 403},
		{"agt", "std", 200}, {"agt", "elev", 200}, {"agt", "strict", 403},
		{"", "std", 401}, {"nope", "std", 401}, {"bad", "std", 401},
	} {
		before := inv.n.Load()
		status, body := call(t, url, tc.token, tc.tool, 1)
		if status != tc.status {
			t.Errorf("%s on %s: %d, want %d: %s", tc.token, tc.tool, status, tc.status, body)
		}
		if ran := inv.n.Load() - before; ran != map[bool]int64{true: 1, false: 0}[tc.status == 200] {
			t.Errorf("%s on %s: %d call(s) ran", tc.token, tc.tool, ran)
		}
		if tc.status == 403 && !strings.Contains(body, `error="insufficient_scope"`) || tc.status == 401 && !strings.HasPrefix(body, `Bearer realm="rukh" `) {
			t.Errorf("%s on %s: %s", tc.token, tc.tool, body)
		}
	}
	inv.caller.Range(func(_, v any) bool {
		if c := v.(kernel.Caller); c.Transport != "http" || c.Agent != "a" || c.Endpoint != "e" || c.Subject != "owner" || c.Credential == "" {
			t.Errorf("caller %+v", c)
		}
		return true
	})
}

// A store that cannot be reached is a 503, never a 401: the token may be
// good, and a one-time token is not spent by a refusal.
func TestStoreUnavailable(t *testing.T) {
	c := &creds{byTk: map[string]kernel.Credential{
		"key": {Agent: "a", Endpoint: "e", Kind: kernel.CredentialStatic, Hash: kernel.TokenHash{1}},
		"otk": {Agent: "a", Endpoint: "e", Kind: kernel.CredentialOneTime, Hash: kernel.TokenHash{4}},
	}}
	inv := &countingInvoker{}
	url := newTestServer(t, c, inv)
	c.down.Store(true)
	for _, tk := range []string{"key", "otk"} {
		if status, body := call(t, url, tk, "std", 1); status != 503 || !strings.Contains(body, "unavailable") {
			t.Errorf("%s with the store down: %d %s, want 503", tk, status, body)
		}
	}
	c.down.Store(false)
	c.downConsume.Store(true)
	if status, body := call(t, url, "otk", "strict", 2); status != 503 {
		t.Errorf("a one-time token whose consumption failed: %d %s, want 503", status, body)
	}
	c.downConsume.Store(false)
	if status, body := call(t, url, "otk", "strict", 3); status != 200 {
		t.Errorf("the one-time token once the store is back: %d %s, want 200", status, body)
	}
	if n := inv.n.Load(); n != 1 {
		t.Errorf("%d calls ran, want 1", n)
	}
}

// TestOneTimeRace: many agents' sessions at once, one one-time token
// shared by 32 concurrent requests of one agent: exactly one call runs.
func TestOneTimeRace(t *testing.T) {
	c := &creds{byTk: map[string]kernel.Credential{"otk": {Agent: "a", Endpoint: "e", Kind: kernel.CredentialOneTime, Hash: kernel.TokenHash{9}}}}
	for i := range 8 {
		c.byTk[fmt.Sprintf("key%d", i)] = kernel.Credential{Agent: fmt.Sprintf("agent%d", i), Endpoint: "e", Kind: kernel.CredentialStatic, Hash: kernel.TokenHash{byte(i + 10)}}
	}
	inv := &countingInvoker{}
	url := newTestServer(t, c, inv)
	var wg sync.WaitGroup
	var ok, refused atomic.Int64
	for i := range 32 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			switch status, body := call(t, url, "otk", "strict", i); status {
			case 200:
				ok.Add(1)
			case 401:
				refused.Add(1)
			default:
				t.Errorf("status %d: %s", status, body)
			}
		}()
		go func() {
			defer wg.Done()
			if status, body := call(t, url, fmt.Sprintf("key%d", i%8), "std", i); status != 200 {
				t.Errorf("status %d: %s", status, body)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 1 || refused.Load() != 31 {
		t.Errorf("%d ran, %d refused; want 1 and 31", ok.Load(), refused.Load())
	}
	if n := inv.n.Load(); n != 33 {
		t.Errorf("%d calls ran, want 33", n)
	}
}

// TestOneTimeSpentOnlyByARun: a call rejected before it runs (its input)
// leaves the one-time token as it was.
func TestOneTimeSpentOnlyByARun(t *testing.T) {
	c := &creds{byTk: map[string]kernel.Credential{"otk": {Agent: "a", Endpoint: "e", Kind: kernel.CredentialOneTime, Hash: kernel.TokenHash{9}}}}
	inv := &countingInvoker{}
	url := newTestServer(t, c, inv)
	if status, body := callWith(t, url, "otk", "strict", 1, `{"nope":1}`); status != 200 || !strings.Contains(body, `"outcome":"rejected"`) {
		t.Fatalf("undeclared argument: %d %s", status, body)
	}
	if status, body := call(t, url, "otk", "strict", 2); status != 200 || !strings.Contains(body, `"outcome":"succeeded"`) {
		t.Fatalf("the token was spent by a call that did not run: %d %s", status, body)
	}
	if status, _ := call(t, url, "otk", "strict", 3); status != 401 {
		t.Errorf("a spent token: %d, want 401", status)
	}
	if n := inv.n.Load(); n != 1 {
		t.Errorf("%d calls ran, want 1", n)
	}
}
