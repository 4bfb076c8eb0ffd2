package main

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	stdjson "encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/rukh-dev/rukh/localoidc"
)

// The OAuth tests run serve-http as a resource server of a real OpenID
// provider (localoidc, in this process): the profile's endpoints accept the
// provider's access tokens, and the tests call them with tokens it issued,
// tokens forged to fail one check each, and through go-sdk's OAuth client.

// oauthProfile publishes the auth fixture on three endpoints of the one
// issuer: remote (oauth, the three levels), second (oauth, another
// audience, the agent named by sub) and both (rukh+oauth: a Rukh one-time token reaches strict).
const oauthProfile = `{"endpoints":{
 "remote":{"namespace":"auth-remote","transports":["http"],"httpAuth":"oauth","publish":{"packages":["auth.fake"]},
  "oauth":{"issuer":%[1]q,"scopes":{"standard":["rukh.call"],"elevated":["rukh.elevated"]},"shortLivedSeconds":900},
  "security":{"default":"standard","commands":{"auth.elev":"elevated","auth.strict":"strict","auth.other":"strict"}}},
 "second":{"namespace":"auth-second","transports":["http"],"httpAuth":"oauth","oauth":{"issuer":%[1]q,"agentClaim":"sub"},
  "publish":{"packages":["auth.fake"]}},
 "both":{"namespace":"auth-both","transports":["http"],"httpAuth":"rukh+oauth","publish":{"packages":["auth.fake"]},
  "oauth":{"issuer":%[1]q,"scopes":{"standard":["rukh.call"]}},
  "security":{"commands":{"auth.strict":"strict"}}}}}`

const oauthSecret = "the-client-secret-0123456789"

// oauthServer is serve-http over the auth fixture with oauth endpoints, and
// the provider that issues their tokens.
type oauthServer struct {
	*authServer
	idp *localoidc.Provider
}

// freeAddr is a loopback address nobody listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// newOAuthServer starts the provider and serve-http; serve-http's address
// is chosen first, since the audiences are its endpoints' URLs.
func newOAuthServer(t *testing.T) *oauthServer {
	bin := buildRukh(t)
	addr := freeAddr(t)
	base := "http://" + addr
	ep := func(name string) string { return base + "/mcp/v1/auth-" + name + "/" + name }
	scopes := []string{"rukh.call", "rukh.elevated"}
	idp, err := localoidc.Start("",
		localoidc.Client{ID: "agent-a", Secret: oauthSecret, Audience: []string{ep("remote"), ep("both")}, Scopes: scopes},
		localoidc.Client{ID: "agent-long", Secret: oauthSecret, Audience: []string{ep("remote")}, Scopes: scopes, Lifetime: 2 * time.Hour},
		localoidc.Client{ID: "agent-second", Secret: oauthSecret, Audience: []string{ep("second")}, Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idp.Stop() })

	dir := t.TempDir()
	pkg := copyInteropFixture(t, "testdata/auth/pkg", dir)
	home := filepath.Join(dir, "home")
	profile := filepath.Join(dir, "profile.json")
	if err := os.WriteFile(profile, []byte(fmt.Sprintf(oauthProfile, idp.Issuer)), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRukh(t, bin, home, "install", "--allow-unsigned", pkg)
	mustRukh(t, bin, home, "activate", "auth.fake")
	mustRukh(t, bin, home, "policy", "set", profile)
	mustRukh(t, bin, home, "publish")
	s := &oauthServer{authServer: &authServer{t: t, bin: bin, home: home, dir: dir, tools: map[string]map[string]string{}}, idp: idp}
	got, stderr := startHTTPServer(t, bin, home, "--listen", addr, "--public-url", base, "--rate", "0", "--metrics-listen", "127.0.0.1:0", "--oauth-refresh", "2s")
	if got != base {
		t.Fatalf("serve-http listens on %s, want %s", got, base)
	}
	s.base, s.stderr = base, stderr
	return s
}

// token asks the provider for a token, as an agent would, and remembers it
// (and its signature alone) for the search at the end.
func (s *oauthServer) token(client, resource string, scopes ...string) string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tok, err := s.idp.Token(ctx, client, oauthSecret, resource, scopes...)
	if err != nil {
		s.t.Fatal(err)
	}
	s.remember(tok)
	return tok
}

func (s *oauthServer) remember(tok string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens = append(s.tokens, tok)
	if i := strings.LastIndexByte(tok, '.'); i >= 0 && len(tok)-i > 20 {
		s.tokens = append(s.tokens, tok[i+1:])
	}
}

// claims are a valid token's claims for remote, for forging variants.
func (s *oauthServer) claims(client string) map[string]any {
	now := time.Now().Unix()
	return map[string]any{"iss": s.idp.Issuer, "sub": "sa-" + client, "aud": []string{s.url("remote")},
		"client_id": client, "scope": "rukh.call", "iat": now, "nbf": now, "exp": now + 300, "jti": "forged"}
}

// forge signs claims with the provider's current key, or encodes them with
// the header and signature given ("" signature: none).
func (s *oauthServer) forge(claims map[string]any) string {
	s.t.Helper()
	key, kid := s.idp.PrivateKey()
	tok, err := localoidc.Sign(key, kid, claims)
	if err != nil {
		s.t.Fatal(err)
	}
	s.remember(tok)
	return tok
}

func b64(v any) string {
	b, _ := stdjson.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

// expectOAuth checks a reply's status and its challenge on an oauth
// endpoint, and that a call ran exactly when it succeeded; a 403 must name
// scope in its challenge ("-": a refusal no scope cures, challenge unchecked).
func (s *oauthServer) expectOAuth(what string, rep authReply, status int, command string, ranBefore int, scope string) {
	s.t.Helper()
	if rep.status != status {
		s.t.Errorf("%s: status %d, want %d\n%s", what, rep.status, status, rep.body)
	}
	endpoint := "remote"
	if strings.Contains(what, "[second]") {
		endpoint = "second"
	}
	metadata := fmt.Sprintf(`resource_metadata="%s/.well-known/oauth-protected-resource/mcp/v1/auth-%s/%s"`, s.base, endpoint, endpoint)
	switch status {
	case 401:
		if !strings.HasPrefix(rep.auth, "Bearer ") || !strings.Contains(rep.auth, metadata) || !strings.Contains(rep.auth, `error="invalid_token"`) {
			s.t.Errorf("%s: WWW-Authenticate %q", what, rep.auth)
		}
	case 403:
		if scope == "-" { // refused for a reason no scope cures
			break
		}
		if !strings.Contains(rep.auth, `error="insufficient_scope"`) || !strings.Contains(rep.auth, metadata) ||
			scope != "" && !strings.Contains(rep.auth, `scope="`) || !strings.Contains(rep.auth, scope) {
			s.t.Errorf("%s: WWW-Authenticate %q, want insufficient_scope naming %q", what, rep.auth, scope)
		}
	case 200:
		if !strings.Contains(rep.body, `"outcome":"succeeded"`) {
			s.t.Errorf("%s: %s", what, rep.body)
		}
	}
	want := ranBefore
	if status == 200 {
		want++
	}
	if got := s.runs(command); got != want {
		s.t.Errorf("%s: %d call(s) of %s ran, want %d", what, got-ranBefore, command, want-ranBefore)
	}
}

// callers are the callers of the calls of command that ran, from their
// invoke lines.
func (s *oauthServer) callers(command string) []map[string]string {
	s.t.Helper()
	files, _ := filepath.Glob(filepath.Join(s.dir, "calls", "*.invoke"))
	var out []map[string]string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			s.t.Fatal(err)
		}
		var inv struct {
			Command string            `json:"command"`
			Caller  map[string]string `json:"caller"`
		}
		if err := stdjson.Unmarshal(b, &inv); err != nil {
			s.t.Fatalf("%s: %v", f, err)
		}
		if inv.Command == command {
			out = append(out, inv.Caller)
		}
	}
	return out
}

// waitStatus repeats a call until it gets want or a minute passes; every
// other answer must be one of also, and nothing may run meanwhile.
func (s *oauthServer) waitStatus(what, endpoint, token, command string, want int, also ...int) authReply {
	s.t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		before := s.runs(command)
		rep := s.call(endpoint, token, command)
		if rep.status == want {
			return rep
		}
		if !slices.Contains(also, rep.status) {
			s.t.Fatalf("%s: status %d, want %d or %v\n%s", what, rep.status, want, also, rep.body)
		}
		if s.runs(command) != before {
			s.t.Fatalf("%s: a call ran with status %d", what, rep.status)
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: still %d after two minutes\n%s", what, rep.status, rep.body)
		}
	}
}

func TestHTTPOAuth(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: an OpenID provider and serve-http, with the provider stopped and started")
	}
	s := newOAuthServer(t)
	const std, elev = "auth.std", "auth.elev"
	good := s.token("agent-a", "", "rukh.call")
	both := s.token("agent-a", s.url("both"), "rukh.call")
	// On rukh+oauth a Rukh key lists without the provider, so a call can
	// meet the outage.
	s.tool("both", s.mint("agent", "add", "bot", "--endpoint", "both"), std)

	// The provider down before serve-http ever reached it: 503 with
	// Retry-After, never 401 for a token that may be valid, and nothing
	// runs; back up, the same tokens work without restarting serve-http.
	if err := s.idp.Stop(); err != nil {
		t.Fatal(err)
	}
	before := s.runs(std)
	for _, rep := range []authReply{s.do("remote", good, "tools/list", "", 1), s.call("both", both, std)} {
		if rep.status != 503 || rep.retry == "" {
			t.Fatalf("provider down: status %d, Retry-After %q, want 503 with one\n%s", rep.status, rep.retry, rep.body)
		}
	}
	if s.runs(std) != before {
		t.Fatal("a call ran while the provider was down")
	}
	if err := s.idp.Restart(); err != nil {
		t.Fatal(err)
	}
	// A client waits as Retry-After says; serve-http asks the provider
	// again at most every so often.
	for deadline, rep := time.Now().Add(2*time.Minute), s.call("both", both, std); rep.status != 200; rep = s.call("both", both, std) {
		wait, err := strconv.Atoi(rep.retry)
		if rep.status != 503 || err != nil || wait < 1 || wait > 60 || s.runs(std) != before {
			t.Fatalf("provider back: status %d, Retry-After %q, %d calls ran\n%s", rep.status, rep.retry, s.runs(std)-before, rep.body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("provider back: still 503 after two minutes\n%s", rep.body)
		}
		time.Sleep(time.Duration(wait) * time.Second)
	}
	if s.runs(std) != before+1 {
		t.Fatalf("provider back: %d calls ran, want 1", s.runs(std)-before)
	}
	before = s.runs(std)
	s.expectOAuth("a token of the provider", s.call("remote", good, std), 200, std, before, "")
	want := map[string]string{"transport": "http", "endpoint": "remote", "agent": "agent-a", "credential": "oauth",
		"issuer": s.idp.Issuer, "subject": "sa-agent-a"}
	callers := s.callers(std)
	if len(callers) != 2 || !slices.ContainsFunc(callers, func(c map[string]string) bool { return fmt.Sprint(c) == fmt.Sprint(want) }) {
		t.Errorf("the extension's callers %v, want one %v", callers, want)
	}

	// The protected resource metadata, where the 401 points.
	t.Run("metadata", func(t *testing.T) {
		res, err := http.Get(s.base + "/.well-known/oauth-protected-resource/mcp/v1/auth-remote/remote")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var md struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
			ScopesSupported      []string `json:"scopes_supported"`
			BearerMethods        []string `json:"bearer_methods_supported"`
		}
		if err := stdjson.NewDecoder(res.Body).Decode(&md); err != nil || res.StatusCode != 200 {
			t.Fatalf("metadata: %s %v", res.Status, err)
		}
		if md.Resource != s.url("remote") || fmt.Sprint(md.AuthorizationServers) != "["+s.idp.Issuer+"]" ||
			fmt.Sprint(md.ScopesSupported) != "[rukh.call rukh.elevated]" || fmt.Sprint(md.BearerMethods) != "[header]" {
			t.Errorf("metadata %+v", md)
		}
		if res.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("metadata CORS %q", res.Header.Get("Access-Control-Allow-Origin"))
		}
		res, err = http.Get(s.base + "/.well-known/oauth-protected-resource/mcp/v1/auth-remote/nowhere")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 404 {
			t.Errorf("metadata of no endpoint: %s", res.Status)
		}
		rep := s.do("remote", "", "tools/list", "", 1)
		if rep.status != 401 || !strings.Contains(rep.auth, `resource_metadata="`+s.base+"/.well-known/oauth-protected-resource/mcp/v1/auth-remote/remote") ||
			!strings.Contains(rep.auth, `scope="rukh.call"`) {
			t.Errorf("no token: %d %q", rep.status, rep.auth)
		}
	})

	// Tokens that fail one check each: the right status, and nothing runs.
	other, err := localoidc.Start("", localoidc.Client{ID: "agent-a", Secret: oauthSecret, Audience: []string{s.url("remote")}, Scopes: []string{"rukh.call"}})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Stop()
	otherTok, err := other.Token(context.Background(), "agent-a", oauthSecret, "", "rukh.call")
	if err != nil {
		t.Fatal(err)
	}
	s.remember(otherTok)
	key, kid := s.idp.PrivateKey()
	stranger, _ := rsa.GenerateKey(rand.Reader, 2048)
	now := time.Now().Unix()
	with := func(change map[string]any) map[string]any {
		c := s.claims("agent-a")
		for k, v := range change {
			if v == nil {
				delete(c, k)
			} else {
				c[k] = v
			}
		}
		return c
	}
	none := b64(map[string]string{"alg": "none", "typ": "JWT", "kid": kid}) + "." + b64(s.claims("agent-a")) + "."
	pub, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	hsInput := b64(map[string]string{"alg": "HS256", "typ": "JWT", "kid": kid}) + "." + b64(s.claims("agent-a"))
	mac := hmac.New(sha256.New, pub)
	mac.Write([]byte(hsInput))
	hs256 := hsInput + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	unknownKid, _ := localoidc.Sign(stranger, "not-published", s.claims("agent-a"))
	parts := strings.Split(s.forge(s.claims("agent-a")), ".")
	tampered := parts[0] + "." + b64(with(map[string]any{"client_id": "someone-else"})) + "." + parts[2]
	for _, tok := range []string{none, hs256, unknownKid, tampered} {
		s.remember(tok)
	}
	for _, c := range []struct {
		what, token, command string
		status               int
		scope                string
	}{
		{"wrong issuer (another provider)", otherTok, std, 401, ""}, // its kid is unknown: 503 until the keys can be fetched again
		{"wrong issuer (the provider's key)", s.forge(with(map[string]any{"iss": s.idp.Issuer + "/other"})), std, 401, ""},
		{"wrong audience", s.forge(with(map[string]any{"aud": "https://elsewhere.example/mcp"})), std, 401, ""},
		{"another endpoint's audience", s.token("agent-second", "", "rukh.call"), std, 401, ""},
		{"another endpoint's resource", s.token("agent-a", s.url("both"), "rukh.call"), std, 401, ""},
		{"expired", s.forge(with(map[string]any{"iat": now - 7200, "nbf": now - 7200, "exp": now - 3600})), std, 401, ""},
		{"no exp", s.forge(with(map[string]any{"exp": nil})), std, 401, ""},
		{"not yet valid", s.forge(with(map[string]any{"nbf": now + 3600, "exp": now + 7200})), std, 401, ""},
		{"issued in the future", s.forge(with(map[string]any{"iat": now + 3600, "exp": now + 7200})), std, 401, ""},
		{"alg none", none, std, 401, ""},
		{"HS256 signed with the public key", hs256, std, 401, ""},
		{"unknown kid", unknownKid, std, 401, ""},
		{"a changed payload", tampered, std, 401, ""},
		{"no agent claim", s.forge(with(map[string]any{"client_id": nil})), std, 401, ""},
		{"not a JWT", "opaque-token-from-somewhere", std, 401, ""},
		{"a Rukh token on an oauth endpoint", "rukh_agt_0000000000000000000000000000000000", std, 401, ""},
		{"no scope for standard", s.forge(with(map[string]any{"scope": nil})), std, 403, "rukh.call"},
		{"standard scope only, elevated command", good, elev, 403, "rukh.elevated"},
		{"long-lived token, elevated command", s.token("agent-long", "", "rukh.call", "rukh.elevated"), elev, 403, ""},
		{"short-lived with both scopes, strict command", s.token("agent-a", "", "rukh.call", "rukh.elevated"), "auth.strict", 403, "-"},
	} {
		before := s.runs(c.command)
		rep := s.call("remote", c.token, c.command)
		if rep.status == 503 && c.status == 401 && (c.token == otherTok || c.token == unknownKid) {
			// A key not among those fetched moments ago may be newly
			// rotated in: unavailable until the keys can be fetched again.
			rep = s.waitStatus(c.what, "remote", c.token, c.command, 401, 503)
		}
		s.expectOAuth(c.what, rep, c.status, c.command, before, c.scope)
	}
	// The same token that failed elevated for want of a scope passes with it.
	before = s.runs(elev)
	s.expectOAuth("short-lived with both scopes, elevated", s.call("remote", s.token("agent-a", "", "rukh.call", "rukh.elevated"), elev), 200, elev, before, "")
	// Another endpoint's token is good on its own endpoint.
	before = s.runs(std)
	s.expectOAuth("[second] its own token", s.call("second", s.token("agent-second", "", "rukh.call"), std), 200, std, before, "")
	if !slices.ContainsFunc(s.callers(std), func(c map[string]string) bool {
		return c["endpoint"] == "second" && c["agent"] == "sa-agent-second" && c["subject"] == "sa-agent-second"
	}) {
		t.Errorf("second's agent is not its token's sub: %v", s.callers(std))
	}

	// rukh+oauth: the provider's token for standard, a Rukh one-time token
	// for strict, which no provider's token reaches.
	once := s.mint("agent", "token", "bot", "--once")
	before = s.runs(std)
	if rep := s.call("both", both, std); rep.status != 200 || s.runs(std) != before+1 {
		t.Errorf("rukh+oauth, the provider's token: %d %s", rep.status, rep.body)
	}
	before = s.runs("auth.strict")
	if rep := s.call("both", both, "auth.strict"); rep.status != 403 || s.runs("auth.strict") != before {
		t.Errorf("rukh+oauth, the provider's token on strict: %d %s", rep.status, rep.body)
	}
	if rep := s.call("both", once, "auth.strict"); rep.status != 200 || s.runs("auth.strict") != before+1 {
		t.Errorf("rukh+oauth, a one-time token on strict: %d %s", rep.status, rep.body)
	}

	// A key rotated at the provider: a token signed by the new key is
	// accepted once the key set is fetched again (at most every so often,
	// so an answer before that is 503 and runs nothing).
	if _, err := s.idp.RotateKey(); err != nil {
		t.Fatal(err)
	}
	rotated := s.token("agent-a", "", "rukh.call")
	before = s.runs(std)
	s.waitStatus("a rotated key", "remote", rotated, std, 200, 503)
	if s.runs(std) != before+1 {
		t.Errorf("a rotated key: %d calls ran", s.runs(std)-before)
	}
	// The key that unknown-kid named is still unknown after that refresh.
	before = s.runs(std)
	s.expectOAuth("unknown kid, after a refresh", s.waitStatus("unknown kid, after a refresh", "remote", unknownKid, std, 401, 503), 401, std, before, "")

	// The provider down once its keys are known: a token they verify still
	// works; back up, so do new ones.
	if err := s.idp.Stop(); err != nil {
		t.Fatal(err)
	}
	before = s.runs(std)
	s.expectOAuth("provider down, a known key", s.call("remote", rotated, std), 200, std, before, "")
	if err := s.idp.Restart(); err != nil {
		t.Fatal(err)
	}
	before = s.runs(std)
	s.expectOAuth("provider back, a new token", s.call("remote", s.token("agent-a", "", "rukh.call"), std), 200, std, before, "")

	s.oauthAudit()
	metrics := s.metrics()
	if !strings.Contains(metrics, `rukh_tool_calls_by_credential_total{credential="oauth",endpoint="remote"} `) {
		t.Errorf("no oauth calls counted in the metrics:\n%s", metrics)
	}
	s.noTokenLeaks()
}

// oauthAudit checks the audit log names the issuer and subject of every
// oauth call that ran.
func (s *oauthServer) oauthAudit() {
	s.t.Helper()
	files, _ := filepath.Glob(filepath.Join(s.dir, "calls", "*.invoke"))
	var audit struct {
		Records []struct {
			Agent, Credential, Endpoint, Command, Outcome, Issuer, Subject string
		} `json:"records"`
	}
	oauthRan := 0
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if err := stdjson.Unmarshal([]byte(mustRukh(s.t, s.bin, s.home, "audit", "--limit", "0", "--json")), &audit); err != nil {
			s.t.Fatal(err)
		}
		oauthRan = 0
		for _, r := range audit.Records {
			if r.Outcome == "succeeded" {
				oauthRan++
			}
		}
		if oauthRan >= len(files) || time.Now().After(deadline) {
			break
		}
	}
	if oauthRan != len(files) {
		s.t.Errorf("%d audit records of calls that ran, %d calls ran", oauthRan, len(files))
	}
	refused := 0
	for _, r := range audit.Records {
		if r.Credential != "oauth" {
			continue
		}
		if r.Issuer != s.idp.Issuer || !strings.HasPrefix(r.Subject, "sa-agent-") || !strings.Contains(r.Agent, "agent-") {
			s.t.Errorf("an oauth audit record without its issuer, subject and agent: %+v", r)
		}
		if r.Outcome == "refused" {
			refused++
		}
	}
	if refused == 0 {
		s.t.Error("no refused oauth call is in the audit log")
	}
}

// TestHTTPOAuthGoSDK: go-sdk's OAuth client for pre-registered agents finds
// the provider from the 401's resource metadata, gets a token by the
// client-credentials grant, lists and calls; on the 403 of an elevated
// command it asks for the scope the challenge names and calls again.
func TestHTTPOAuthGoSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: an OpenID provider, serve-http and go-sdk's OAuth client")
	}
	s := newOAuthServer(t)
	h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
		Credentials: &oauthex.ClientCredentials{ClientID: "agent-a", ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: oauthSecret},
			Issuer: s.idp.Issuer},
	})
	if err != nil {
		t.Fatal(err)
	}
	wire := &lockedBuffer{}
	st := &mcp.StreamableClientTransport{Endpoint: s.url("remote"), OAuthHandler: h,
		HTTPClient: &http.Client{Transport: recordBearer{s}}}
	tr := &mcp.LoggingTransport{Transport: st, Writer: wire}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "rukh-oauth", Version: "0.0.1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("wire:\n%s", truncate(wire.String(), 20000))
		}
	})
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, tl := range list.Tools {
		names[tl.Title] = tl.Name
	}
	if len(names) != 4 {
		t.Fatalf("tools %v", names)
	}
	for _, c := range []struct{ title, command, text string }{
		{"A standard command", "auth.std", "ran std"},
		{"An elevated command", "auth.elev", "ran elev"}, // after a step-up to rukh.elevated
	} {
		before := s.runs(c.command)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: names[c.title], Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("%s: %v", c.command, err)
		}
		if res.IsError || len(res.Content) == 0 {
			t.Fatalf("%s: %+v", c.command, res)
		}
		if tc, ok := res.Content[0].(*mcp.TextContent); !ok || !strings.Contains(tc.Text, c.text) {
			t.Errorf("%s: %+v", c.command, res.Content[0])
		}
		if s.runs(c.command) != before+1 {
			t.Errorf("%s: %d calls ran", c.command, s.runs(c.command)-before)
		}
		caller := s.callers(c.command)
		if len(caller) != 1 || caller[0]["agent"] != "agent-a" || caller[0]["credential"] != "oauth" ||
			caller[0]["issuer"] != s.idp.Issuer || caller[0]["subject"] != "sa-agent-a" {
			t.Errorf("%s: caller %v", c.command, caller)
		}
	}
	// The first token (rukh.call, from the 401's scope) and the step-up's
	// (from the 403's): the elevated call was refused once, then ran.
	s.mu.Lock()
	sent := 0
	for _, tok := range s.tokens {
		if strings.Count(tok, ".") == 2 {
			sent++
		}
	}
	s.mu.Unlock()
	if sent != 2 {
		t.Errorf("the client sent %d distinct tokens, want 2 (one before and one after the step-up)", sent)
	}
	// The strict command stays out of a provider's token's reach, however
	// the client steps up.
	before := s.runs("auth.strict")
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: names["A strict command"], Arguments: map[string]any{}}); err == nil && !res.IsError {
		t.Errorf("strict with a provider's token: %+v", res)
	}
	if s.runs("auth.strict") != before {
		t.Error("the strict command ran")
	}
	if strings.Contains(wire.String(), oauthSecret) {
		t.Error("the client secret is on the MCP wire")
	}

	cs.Close()
	s.noTokenLeaks()
}

// recordBearer remembers every bearer token a client sends serve-http, for
// the search at the end.
type recordBearer struct{ s *oauthServer }

func (r recordBearer) RoundTrip(req *http.Request) (*http.Response, error) {
	if tok, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer "); ok {
		r.s.mu.Lock()
		seen := slices.Contains(r.s.tokens, tok)
		r.s.mu.Unlock()
		if !seen {
			r.s.remember(tok)
		}
	}
	return http.DefaultTransport.RoundTrip(req)
}
