package mcphttp

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/policy"
)

// fakeVerifier stands for an identity provider's verifier: known tokens
// give their credential; down makes every answer CodeUnavailable.
type fakeVerifier struct {
	tokens map[string]kernel.Credential
	down   atomic.Bool
	calls  atomic.Int64
}

func (f *fakeVerifier) Verify(ctx context.Context, token string) (kernel.Credential, error) {
	f.calls.Add(1)
	if f.down.Load() {
		return kernel.Credential{}, kernel.Errorf(kernel.CodeUnavailable, "the issuer's keys cannot be fetched")
	}
	switch token {
	case "jwt.other.aud":
		return kernel.Credential{}, kernel.Errorf(kernel.CodeDenied, "the token's audience is not this endpoint")
	}
	c, ok := f.tokens[token]
	if !ok {
		return kernel.Credential{}, kernel.Errorf(kernel.CodeDenied, `the token is not a signed JWT ("quoted")`)
	}
	return c, nil
}

const (
	testIssuer   = "https://idp.example.com/realms/acme"
	testResource = "https://mcp.example.com/mcp/v1/ns/e"
	testMetadata = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp/v1/ns/e"
)

func oauthCred(agent string, shortLived bool, scopes ...string) kernel.Credential {
	return kernel.Credential{Agent: agent, Kind: kernel.CredentialOAuth, Issuer: testIssuer, Subject: "sub-" + agent,
		Scopes: scopes, ShortLived: shortLived, Hash: kernel.TokenHash{byte(len(agent)), byte(len(scopes))}}
}

func testPolicy() *policy.OAuth {
	return &policy.OAuth{Issuer: testIssuer, Scopes: map[string][]string{
		policy.SecurityStandard: {"rukh.call"}, policy.SecurityElevated: {"rukh.elevated"}}}
}

// newOAuthServer serves endpoint ns/e with httpAuth mode through v; it
// returns the endpoint's URL and the handler.
func newOAuthServer(t *testing.T, mode string, p *policy.OAuth, v TokenVerifier, c *creds, inv kernel.Invoker) (string, *Handler) {
	t.Helper()
	var h *Handler
	url := newTestServerWrapped(t, c, inv, nil, func(cfg *Config) {
		cfg.Endpoints[0].HTTPAuth = mode
		cfg.Endpoints[0].OAuth = oauthEndpoint(mode, p, v)
	}, func(hh http.Handler) http.Handler { h = hh.(*Handler); return hh })
	return url, h
}

func oauthEndpoint(mode string, p *policy.OAuth, v TokenVerifier) *OAuthEndpoint {
	return &OAuthEndpoint{Verifier: v, Policy: p, Resource: testResource, MetadataURL: testMetadata, AcceptRukh: mode == policy.HTTPAuthRukhOAuth}
}

// callOAuth is call, parted into the status, the challenge and the body.
func callOAuth(t *testing.T, url, token, tool string, id int) (int, string, string) {
	t.Helper()
	status, got := call(t, url, token, tool, id)
	for _, w := range []string{" unauthorized:", " forbidden:", " {", " the "} {
		if i := strings.Index(got, w); i >= 0 {
			return status, got[:i], got[i+1:]
		}
	}
	return status, got, ""
}

func get(t *testing.T, url string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	r, _ := http.NewRequest("GET", url, nil)
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func TestOAuthMetadata(t *testing.T) {
	for _, tc := range []struct {
		name, mode string
		policy     *policy.OAuth
		status     int
		body       string
	}{
		{"scopes", policy.HTTPAuthOAuth, testPolicy(), 200,
			`{"resource":"` + testResource + `","authorization_servers":["` + testIssuer + `"],"scopes_supported":["rukh.call","rukh.elevated"],"bearer_methods_supported":["header"],"resource_name":"rukh ns/e"}`},
		{"no scopes", policy.HTTPAuthRukhOAuth, &policy.OAuth{Issuer: testIssuer}, 200,
			`{"resource":"` + testResource + `","authorization_servers":["` + testIssuer + `"],"bearer_methods_supported":["header"],"resource_name":"rukh ns/e"}`},
		{"bearer endpoint", policy.HTTPAuthBearer, testPolicy(), 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, _ := newOAuthServer(t, tc.mode, tc.policy, &fakeVerifier{}, &creds{}, &countingInvoker{})
			meta := strings.Replace(url, PathPrefix, MetadataPrefix+PathPrefix, 1)
			// A browser-based host fetches it from its own origin.
			res, body := get(t, meta, map[string]string{"Origin": "https://claude.ai"})
			if res.StatusCode != tc.status {
				t.Fatalf("%d %s, want %d", res.StatusCode, body, tc.status)
			}
			if tc.status != 200 {
				return
			}
			if body != tc.body {
				t.Errorf("metadata\n%s\nwant\n%s", body, tc.body)
			}
			for k, want := range map[string]string{"Content-Type": "application/json", "Cache-Control": "public, max-age=300", "Access-Control-Allow-Origin": "*"} {
				if got := res.Header.Get(k); got != want {
					t.Errorf("%s: %q, want %q", k, got, want)
				}
			}
			// The MCP path itself still checks Origin.
			if status, _ := postWithOrigin(t, url, "https://claude.ai"); status != 403 {
				t.Errorf("a POST from another origin: %d, want 403", status)
			}
		})
	}
	url, _ := newOAuthServer(t, policy.HTTPAuthOAuth, testPolicy(), &fakeVerifier{}, &creds{}, &countingInvoker{})
	if res, _ := get(t, strings.Replace(url, PathPrefix+"ns/e", MetadataPrefix+PathPrefix+"ns/nope", 1), nil); res.StatusCode != 404 {
		t.Errorf("metadata of an endpoint not served: %d, want 404", res.StatusCode)
	}
}

func postWithOrigin(t *testing.T, url, origin string) (int, string) {
	t.Helper()
	r, _ := http.NewRequest("POST", url, strings.NewReader(`{}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Origin", origin)
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// Every answer to an OAuth endpoint's token: the status, the exact
// challenge (a prefix where the description is the policy's words), and
// that nothing ran unless it was admitted.
func TestOAuthTokens(t *testing.T) {
	v := &fakeVerifier{tokens: map[string]kernel.Credential{
		"jwt.std":        oauthCred("bot", false, "rukh.call"),
		"jwt.none":       oauthCred("bot", false),
		"jwt.elev.short": oauthCred("bot", true, "rukh.call", "rukh.elevated"),
		"jwt.elev.long":  oauthCred("bot", false, "rukh.call", "rukh.elevated"),
		"jwt.std.short":  oauthCred("bot", true, "rukh.call"),
		"jwt.rukh.kind":  {Agent: "bot", Kind: kernel.CredentialStatic},
	}}
	c := &creds{byTk: map[string]kernel.Credential{
		"rukh_key_good": {Agent: "a", Endpoint: "e", Kind: kernel.CredentialStatic, Hash: kernel.TokenHash{1}},
		"rukh_agt_good": {Agent: "a", Endpoint: "e", Kind: kernel.CredentialShortLived, Hash: kernel.TokenHash{2}},
	}}
	const (
		challenge401 = `Bearer resource_metadata="` + testMetadata + `", scope="rukh.call"`
		invalid      = challenge401 + `, error="invalid_token", error_description="`
		scope403     = `Bearer error="insufficient_scope", scope="rukh.call", resource_metadata="` + testMetadata + `", error_description="`
		elev403      = `Bearer error="insufficient_scope", scope="rukh.call rukh.elevated", resource_metadata="` + testMetadata + `", error_description="`
	)
	for _, tc := range []struct {
		name, mode, token, tool string
		status                  int
		challenge               string // the exact WWW-Authenticate, or its prefix when it ends with `="`
	}{
		{"no token", policy.HTTPAuthOAuth, "", "std", 401, challenge401},
		{"no token rukh+oauth", policy.HTTPAuthRukhOAuth, "", "std", 401, challenge401},
		{"not a JWT", policy.HTTPAuthOAuth, "garbage", "std", 401, invalid + `the token is not a signed JWT ('quoted')"`},
		{"another endpoint's audience", policy.HTTPAuthOAuth, "jwt.other.aud", "std", 401, invalid + `the token's audience is not this endpoint"`},
		{"a verifier giving another kind", policy.HTTPAuthOAuth, "jwt.rukh.kind", "std", 401, invalid},
		{"standard", policy.HTTPAuthOAuth, "jwt.std", "std", 200, ""},
		{"missing scope", policy.HTTPAuthOAuth, "jwt.none", "std", 403, scope403},
		{"elevated without its scope", policy.HTTPAuthOAuth, "jwt.std.short", "elev", 403, elev403},
		{"elevated long-lived", policy.HTTPAuthOAuth, "jwt.elev.long", "elev", 403, `Bearer error="insufficient_scope", resource_metadata="` + testMetadata + `", error_description="`}, // no scope cures it
		{"elevated short-lived", policy.HTTPAuthOAuth, "jwt.elev.short", "elev", 200, ""},
		{"strict never", policy.HTTPAuthOAuth, "jwt.elev.short", "strict", 403, `Bearer error="insufficient_scope", resource_metadata="` + testMetadata + `", error_description="`},
		{"rukh token on oauth", policy.HTTPAuthOAuth, "rukh_key_good", "std", 401, invalid + `this endpoint accepts only access tokens of its identity provider, not Rukh tokens"`},
		{"rukh key on rukh+oauth", policy.HTTPAuthRukhOAuth, "rukh_key_good", "std", 200, ""},
		{"rukh short-lived elevated on rukh+oauth", policy.HTTPAuthRukhOAuth, "rukh_agt_good", "elev", 200, ""},
		{"rukh key elevated on rukh+oauth", policy.HTTPAuthRukhOAuth, "rukh_key_good", "elev", 403, `Bearer realm="rukh", error="insufficient_scope"`},
		{"unknown rukh token on rukh+oauth", policy.HTTPAuthRukhOAuth, "rukh_key_nope", "std", 401, invalid + `the Rukh token is not valid for this endpoint"`},
		{"jwt on rukh+oauth", policy.HTTPAuthRukhOAuth, "jwt.std", "std", 200, ""},
		{"bad jwt on rukh+oauth", policy.HTTPAuthRukhOAuth, "jwt.other.aud", "std", 401, invalid + `the token's audience is not this endpoint"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := &countingInvoker{}
			url, _ := newOAuthServer(t, tc.mode, testPolicy(), v, c, inv)
			status, hdr, body := callOAuth(t, url, tc.token, tc.tool, 1)
			if status != tc.status {
				t.Fatalf("%d, want %d: %s %s", status, tc.status, hdr, body)
			}
			if strings.HasSuffix(tc.challenge, `="`) {
				if !strings.HasPrefix(hdr, tc.challenge) || !strings.HasSuffix(hdr, `"`) {
					t.Errorf("WWW-Authenticate\n%s\nwant a prefix\n%s", hdr, tc.challenge)
				}
			} else if tc.status != 200 && hdr != tc.challenge {
				t.Errorf("WWW-Authenticate\n%s\nwant\n%s", hdr, tc.challenge)
			}
			if ran := inv.n.Load(); ran != map[bool]int64{true: 1, false: 0}[tc.status == 200] {
				t.Errorf("%d call(s) ran: %s", ran, body)
			}
		})
	}
}

// A verifier that cannot reach the identity provider is a 503 with
// Retry-After, never a 401, and nothing runs; back, the same token is
// admitted.
func TestOAuthUnavailable(t *testing.T) {
	v := &fakeVerifier{tokens: map[string]kernel.Credential{"jwt.std": oauthCred("bot", false, "rukh.call")}}
	inv := &countingInvoker{}
	url, _ := newOAuthServer(t, policy.HTTPAuthOAuth, testPolicy(), v, &creds{}, inv)
	v.down.Store(true)
	r, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"std","arguments":{}}}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer jwt.std")
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 503 || res.Header.Get("Retry-After") != "12" || res.Header.Get("WWW-Authenticate") != "" ||
		!strings.Contains(string(b), "cannot be reached") {
		t.Errorf("the provider down: %d Retry-After %q WWW-Authenticate %q: %s", res.StatusCode, res.Header.Get("Retry-After"), res.Header.Get("WWW-Authenticate"), b)
	}
	if n := inv.n.Load(); n != 0 {
		t.Errorf("%d call(s) ran while the provider was down", n)
	}
	v.down.Store(false)
	if status, body := call(t, url, "jwt.std", "std", 2); status != 200 {
		t.Errorf("the provider back: %d %s", status, body)
	}
}

// The extension hears of an oauth caller as its agent, issuer and
// subject, and the credential kind; a Rukh agent of the same name keeps
// its own session.
func TestOAuthCaller(t *testing.T) {
	v := &fakeVerifier{tokens: map[string]kernel.Credential{"jwt.std": oauthCred("a", false, "rukh.call")}}
	c := &creds{byTk: map[string]kernel.Credential{"rukh_key_good": {Agent: "a", Endpoint: "e", Kind: kernel.CredentialStatic, Hash: kernel.TokenHash{1}}}}
	inv := &countingInvoker{}
	url, _ := newOAuthServer(t, policy.HTTPAuthRukhOAuth, testPolicy(), v, c, inv)
	for i, tk := range []string{"jwt.std", "rukh_key_good"} {
		if status, body := call(t, url, tk, "std", i+1); status != 200 {
			t.Fatalf("%s: %d %s", tk, status, body)
		}
	}
	var got []kernel.Caller
	inv.caller.Range(func(_, v any) bool { got = append(got, v.(kernel.Caller)); return true })
	want := map[string]kernel.Caller{
		"oauth":  {Transport: "http", Endpoint: "e", Subject: "sub-a", Agent: "a", Credential: "oauth", Issuer: testIssuer},
		"static": {Transport: "http", Endpoint: "e", Subject: "owner", Agent: "a", Credential: "static"},
	}
	if len(got) != 2 {
		t.Fatalf("callers %+v", got)
	}
	for _, c := range got {
		if c != want[c.Credential] {
			t.Errorf("caller %+v, want %+v", c, want[c.Credential])
		}
	}
}

// A published change of httpAuth or of the OAuth settings applies to the
// next request.
func TestOAuthSetAuth(t *testing.T) {
	v := &fakeVerifier{tokens: map[string]kernel.Credential{"jwt.std": oauthCred("bot", false, "rukh.call")}}
	c := &creds{byTk: map[string]kernel.Credential{"rukh_key_good": {Agent: "a", Endpoint: "e", Kind: kernel.CredentialStatic, Hash: kernel.TokenHash{1}}}}
	url, h := newOAuthServer(t, policy.HTTPAuthOAuth, testPolicy(), v, c, &countingInvoker{})
	more := testPolicy()
	more.Scopes[policy.SecurityStandard] = []string{"rukh.call", "rukh.read"}
	for _, tc := range []struct {
		mode         string
		o            *OAuthEndpoint
		jwt, rukhKey int
	}{
		{policy.HTTPAuthOAuth, oauthEndpoint(policy.HTTPAuthOAuth, testPolicy(), v), 200, 401},
		{policy.HTTPAuthRukhOAuth, oauthEndpoint(policy.HTTPAuthRukhOAuth, testPolicy(), v), 200, 200},
		{policy.HTTPAuthOAuth, oauthEndpoint(policy.HTTPAuthOAuth, more, v), 403, 401},
		{policy.HTTPAuthBearer, nil, 401, 200},
		{policy.HTTPAuthOAuth, nil, 503, 401}, // settings that could not be loaded
	} {
		if !h.SetAuth("e", tc.mode, tc.o) {
			t.Fatal("SetAuth: the endpoint is not served")
		}
		if status, hdr, body := callOAuth(t, url, "jwt.std", "std", 1); status != tc.jwt {
			t.Errorf("%s: a JWT: %d, want %d: %s %s", tc.mode, status, tc.jwt, hdr, body)
		}
		if status, hdr, body := callOAuth(t, url, "rukh_key_good", "std", 1); status != tc.rukhKey {
			t.Errorf("%s: a Rukh key: %d, want %d: %s %s", tc.mode, status, tc.rukhKey, hdr, body)
		}
	}
	if h.SetAuth("nope", policy.HTTPAuthBearer, nil) {
		t.Error("SetAuth of an endpoint not served said it is")
	}
}

// RetryAfter is when the fake would ask its provider again: the 503's
// Retry-After says so.
func (v *fakeVerifier) RetryAfter() time.Duration { return 12 * time.Second }

// rpc posts one modern request of method with params' members (besides
// _meta) and returns the status, the challenge and the body.
func rpc(t *testing.T, url, token, method, params string) (int, string, string) {
	t.Helper()
	if params != "" {
		params += ","
	}
	body := `{"jsonrpc":"2.0","id":9,"method":"` + method + `","params":{` + params + `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	r, _ := http.NewRequest("POST", url, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Mcp-Method", method)
	if name, ok := strings.CutPrefix(params, `"name":"`); ok {
		name, _, _ = strings.Cut(name, `"`)
		r.Header.Set("Mcp-Name", name)
	}
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("WWW-Authenticate"), string(b)
}

// A token without the standard scopes reaches nothing of the endpoint:
// not its tool list, not any other method; with them, every method
// answers.
func TestOAuthStandardScopesEveryRequest(t *testing.T) {
	v := &fakeVerifier{tokens: map[string]kernel.Credential{
		"jwt.std":  oauthCred("bot", false, "rukh.call"),
		"jwt.none": oauthCred("intruder", false),
		"jwt.elev": oauthCred("elev", true, "rukh.elevated"),
	}}
	const scope403 = `Bearer error="insufficient_scope", scope="rukh.call", resource_metadata="` + testMetadata + `", error_description="the token lacks the scope rukh.call every request of this endpoint needs"`
	var refused []string
	inv := &countingInvoker{}
	url := newTestServerWrapped(t, &creds{}, inv, nil, func(cfg *Config) {
		cfg.Endpoints[0].HTTPAuth = policy.HTTPAuthOAuth
		cfg.Endpoints[0].OAuth = oauthEndpoint(policy.HTTPAuthOAuth, testPolicy(), v)
		cfg.Refused = func(endpoint, tool, command string, cred *kernel.Credential, err error) {
			refused = append(refused, cred.Agent)
		}
	}, nil)
	for _, tc := range []struct {
		method, params string
		status         int // with the standard scope
	}{
		{"tools/list", "", 200},
		{"ping", "", 404}, // removed in this protocol version: still refused first
		{"tools/call", `"name":"std","arguments":{}`, 200},
		{"resources/list", "", 404},
	} {
		for _, tk := range []string{"jwt.none", "jwt.elev"} {
			status, hdr, body := rpc(t, url, tk, tc.method, tc.params)
			if status != 403 || hdr != scope403 || strings.Contains(body, `"std"`) {
				t.Errorf("%s with %s: %d %s\n%s", tc.method, tk, status, hdr, body)
			}
		}
		if status, hdr, body := rpc(t, url, "jwt.std", tc.method, tc.params); status != tc.status {
			t.Errorf("%s with the standard scope: %d %s %s", tc.method, status, hdr, body)
		}
	}
	if n := inv.n.Load(); n != 1 {
		t.Errorf("%d call(s) ran, want the one admitted", n)
	}
	if len(refused) != 8 || refused[0] != "intruder" {
		t.Errorf("refusals recorded: %v", refused)
	}
}

// A publish that lands between a request's admission and its call's
// authorization does not change what the call is authorized with: the
// settings it was admitted with decide it, and its credential's issuer
// must be theirs.
func TestOAuthInFlightKeepsAdmission(t *testing.T) {
	v := &fakeVerifier{tokens: map[string]kernel.Credential{
		"jwt.std": oauthCred("bot", false, "rukh.call"),
		"jwt.other": func() kernel.Credential {
			c := oauthCred("bot", false, "rukh.call")
			c.Issuer = "https://other.example"
			return c
		}(),
	}}
	other := &policy.OAuth{Issuer: "https://other.example", Scopes: map[string][]string{policy.SecurityStandard: {"rukh.read"}}}
	for _, tc := range []struct {
		name  string
		token string
		mode  string         // the publish landing mid-request
		o     *OAuthEndpoint // its settings
		want  int
	}{
		{"another issuer published", "jwt.std", policy.HTTPAuthOAuth, oauthEndpoint(policy.HTTPAuthOAuth, other, v), 200},
		{"bearer published", "jwt.std", policy.HTTPAuthBearer, nil, 200},
		{"settings not loaded", "jwt.std", policy.HTTPAuthOAuth, nil, 200},
		{"admitted by a verifier of another issuer", "jwt.other", policy.HTTPAuthOAuth, oauthEndpoint(policy.HTTPAuthOAuth, testPolicy(), v), 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := &countingInvoker{}
			var h *Handler
			url := newTestServerWrapped(t, &creds{}, inv, nil, func(cfg *Config) {
				cfg.Endpoints[0].HTTPAuth = policy.HTTPAuthOAuth
				cfg.Endpoints[0].OAuth = oauthEndpoint(policy.HTTPAuthOAuth, testPolicy(), v)
				cfg.Endpoints[0].Core.Authorize = func(*mcpcore.Request, string, string) (func() error, error) {
					h.SetAuth("e", tc.mode, tc.o) // the publish lands now
					return nil, nil
				}
			}, func(hh http.Handler) http.Handler { h = hh.(*Handler); return hh })
			status, hdr, body := callOAuth(t, url, tc.token, "std", 1)
			if status != tc.want {
				t.Fatalf("%d, want %d: %s %s", status, tc.want, hdr, body)
			}
			if ran := inv.n.Load(); ran != map[bool]int64{true: 1, false: 0}[tc.want == 200] {
				t.Errorf("%d call(s) ran", ran)
			}
		})
	}
}

// sessions is how many agent sessions the endpoint named name holds.
func (h *Handler) sessions(name string) int {
	for _, ep := range h.eps {
		if ep.cfg.Core.Endpoint == name {
			ep.mu.Lock()
			defer ep.mu.Unlock()
			return len(ep.sessions)
		}
	}
	return 0
}

// An identity provider names as many agents as it likes: a session idle
// for sessionIdle is dropped when a new agent comes, one used since is
// kept, and a dropped agent that comes back gets a new one.
func TestIdleSessionsDropped(t *testing.T) {
	v := &fakeVerifier{tokens: map[string]kernel.Credential{}}
	for i := range 10 {
		v.tokens[fmt.Sprint("jwt.", i)] = oauthCred(fmt.Sprint("agent-", i), false, "rukh.call")
	}
	v.tokens["jwt.keep"] = oauthCred("keep", false, "rukh.call")
	v.tokens["jwt.new"] = oauthCred("new", false, "rukh.call")
	var mu sync.Mutex
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	url, h := newOAuthServer(t, policy.HTTPAuthOAuth, testPolicy(), v, &creds{}, &countingInvoker{})
	h.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	ok := func(token string) {
		t.Helper()
		if status, body := call(t, url, token, "std", 1); status != 200 {
			t.Fatalf("%s: %d %s", token, status, body)
		}
	}
	for i := range 10 {
		ok(fmt.Sprint("jwt.", i))
	}
	clock(sessionIdle / 2)
	ok("jwt.keep")
	if n := h.sessions("e"); n != 11 {
		t.Fatalf("%d sessions, want 11", n)
	}
	clock(sessionIdle / 2)
	ok("jwt.new")
	if n := h.sessions("e"); n != 2 {
		t.Errorf("%d sessions after the idle ones' time, want 2 (keep, new)", n)
	}
	ok("jwt.0")
	if n := h.sessions("e"); n != 3 {
		t.Errorf("%d sessions, want 3", n)
	}
}
