package policy_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
)

const oauthEndpoint = `{"endpoints":{"e":{"namespace":"n","transports":["http"],"httpAuth":"oauth","oauth":`

// The oauth block is read strictly, every error at its JSON pointer.
func TestOAuthProfile(t *testing.T) {
	for _, tc := range []struct{ in, path, msg string }{
		{`{"httpAuth":"oauth"}`, "/endpoints/e", `missing member "oauth": httpAuth "oauth" needs the identity provider`},
		{`{"httpAuth":"rukh+oauth"}`, "/endpoints/e", `missing member "oauth"`},
		{`{"oauth":{"issuer":"https://idp.example"}}`, "/endpoints/e/oauth", `oauth is only for httpAuth "oauth" or "rukh+oauth", not "bearer"`},
		{`{"httpAuth":"none","oauth":{"issuer":"https://idp.example"}}`, "/endpoints/e/oauth", `not "none"`},
		{`{"httpAuth":"oauth","oauth":{}}`, "/endpoints/e/oauth", `missing member "issuer"`},
		{`{"httpAuth":"oauth","oauth":{"issuer":"https://idp.example","clientSecret":"x"}}`, "/endpoints/e/oauth/clientSecret", "unknown"},
		{`{"httpAuth":"oauth","oauth":{"issuer":""}}`, "/endpoints/e/oauth/issuer", "empty issuer"},
		{`{"httpAuth":"oauth","oauth":{"issuer":"http://idp.example"}}`, "/endpoints/e/oauth/issuer", "must be an https URL (http only on a loopback host)"},
		{`{"httpAuth":"oauth","oauth":{"issuer":"https://idp.example/?a=b"}}`, "/endpoints/e/oauth/issuer", "has a query"},
		{`{"httpAuth":"oauth","oauth":{"issuer":"https://idp.example/#x"}}`, "/endpoints/e/oauth/issuer", "has a fragment"},
		{`{"httpAuth":"oauth","oauth":{"issuer":"https://u:p@idp.example"}}`, "/endpoints/e/oauth/issuer", "user information"},
		{`{"httpAuth":"oauth","oauth":{"issuer":"idp.example"}}`, "/endpoints/e/oauth/issuer", "not an absolute URL"},
		{`{"httpAuth":"oauth","oauth":{"issuer":"https:///x"}}`, "/endpoints/e/oauth/issuer", "has no host"},
		{`{"httpAuth":"oauth","oauth":{"issuer":"https://idp.example/a b"}}`, "/endpoints/e/oauth/issuer", "has a space"},
		{`{"httpAuth":"oauth","oauth":{"issuer":7}}`, "/endpoints/e/oauth/issuer", ""},
		{`{"httpAuth":"oauth","oauth":{"issuer":"https://idp.example","audience":""}}`, "/endpoints/e/oauth/audience", "empty audience"},
		{`{"httpAuth":"oauth","oauth":{"issuer":"https://idp.example","audience":"mcp"}}`, "/endpoints/e/oauth/audience", "not an absolute URL"},
		{`{"httpAuth":"oauth","oauth":{"issuer":"https://idp.example","audience":"https://mcp.example/x#f"}}`, "/endpoints/e/oauth/audience", "has a fragment"},
		{`{"httpAuth":"oauth","oauth":{"issuer":"https://idp.example","agentClaim":""}}`, "/endpoints/e/oauth/agentClaim", "empty agentClaim"},
		{`{"httpAuth":"oauth","oauth":{"issuer":"https://idp.example","agentClaim":"a b"}}`, "/endpoints/e/oauth/agentClaim", `invalid agentClaim "a b"`},
		{`{"httpAuth":"oauth","oauth":{"issuer":"https://idp.example","agentClaim":"` + strings.Repeat("a", 65) + `"}}`, "/endpoints/e/oauth/agentClaim", "invalid agentClaim"},
		{`{"httpAuth":"oauth","oauth":{"issuer":"https://idp.example","shortLivedSeconds":0}}`, "/endpoints/e/oauth/shortLivedSeconds", "at least 1"},
		{`{"httpAuth":"oauth","oauth":{"issuer":"https://idp.example","shortLivedSeconds":86401}}`, "/endpoints/e/oauth/shortLivedSeconds", "not between 1 and 86400"},
		{`{"httpAuth":"oauth","oauth":{"issuer":"https://idp.example","shortLivedSeconds":1.5}}`, "/endpoints/e/oauth/shortLivedSeconds", "not an integer"},
		{`{"httpAuth":"oauth","oauth":{"issuer":"https://idp.example","scopes":{"strict":["x"]}}}`, "/endpoints/e/oauth/scopes/strict", "strict takes no scopes"},
		{`{"httpAuth":"oauth","oauth":{"issuer":"https://idp.example","scopes":{"admin":["x"]}}}`, "/endpoints/e/oauth/scopes/admin", `unknown level "admin"`},
		{`{"httpAuth":"oauth","oauth":{"issuer":"https://idp.example","scopes":{"standard":["a","b","a"]}}}`, "/endpoints/e/oauth/scopes/standard/2", `duplicate scope "a"`},
		{`{"httpAuth":"oauth","oauth":{"issuer":"https://idp.example","scopes":{"standard":["a b"]}}}`, "/endpoints/e/oauth/scopes/standard/0", `invalid scope "a b"`},
		{`{"httpAuth":"oauth","oauth":{"issuer":"https://idp.example","scopes":{"elevated":["ok","q\"x"]}}}`, "/endpoints/e/oauth/scopes/elevated/1", "invalid scope"},
		{`{"httpAuth":"oauth","oauth":{"issuer":"https://idp.example","scopes":{"standard":[""]}}}`, "/endpoints/e/oauth/scopes/standard/0", "invalid scope"},
		{`{"httpAuth":"oauth","oauth":{"issuer":"https://idp.example","scopes":{"standard":[` + manyScopes(33) + `]}}}`, "/endpoints/e/oauth/scopes/standard", "33 scopes, over the limit of 32"},
		{`{"httpAuth":"oauth","oauth":{"issuer":"https://idp.example","scopes":{"standard":"a"}}}`, "/endpoints/e/oauth/scopes/standard", ""},
	} {
		in := `{"endpoints":{"e":{"namespace":"n",` + strings.TrimPrefix(tc.in, "{") + "}}"
		_, err := policy.ParseProfile([]byte(in))
		var ke *kernel.Error
		if !errors.As(err, &ke) || ke.Code != kernel.CodeInvalid {
			t.Errorf("%s: %v, want an invalid error", tc.in, err)
			continue
		}
		if ke.Path != tc.path || !strings.Contains(ke.Message, tc.msg) {
			t.Errorf("%s: path %q message %q, want %q containing %q", tc.in, ke.Path, ke.Message, tc.path, tc.msg)
		}
	}
}

// A valid block: the canonical form keeps what the owner stated (scopes
// sorted), the defaults come from the methods, and the launch binding
// carries the block.
func TestOAuthProfileCanonical(t *testing.T) {
	for _, tc := range []struct {
		in, canonical string
		claim         string
		short         time.Duration
		supported     []string
	}{
		{`{"issuer":"http://127.0.0.1:5556/dex"}`, `{"issuer":"http://127.0.0.1:5556/dex"}`, "client_id", 900 * time.Second, []string{}},
		{`{"issuer":"http://[::1]:80","audience":"urn:rukh:acme"}`, `{"issuer":"http://[::1]:80","audience":"urn:rukh:acme"}`, "client_id", 900 * time.Second, []string{}},
		{`{"issuer":"https://idp.example/realms/acme/","agentClaim":"azp","shortLivedSeconds":60,"scopes":{"standard":["rukh.call","a"],"elevated":["rukh.elevated"]}}`,
			`{"issuer":"https://idp.example/realms/acme/","agentClaim":"azp","scopes":{"elevated":["rukh.elevated"],"standard":["a","rukh.call"]},"shortLivedSeconds":60}`,
			"azp", time.Minute, []string{"a", "rukh.call", "rukh.elevated"}},
	} {
		p, err := policy.ParseProfile([]byte(oauthEndpoint + tc.in + "}}}"))
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		var c struct {
			Endpoints map[string]struct {
				OAuth jsontext.Value `json:"oauth"`
			} `json:"endpoints"`
		}
		if err := json.Unmarshal(p.Canonical(), &c); err != nil {
			t.Fatal(err)
		}
		if got := string(c.Endpoints["e"].OAuth); got != tc.canonical {
			t.Errorf("canonical %s\nwant %s", got, tc.canonical)
		}
		o := p.Endpoints["e"].OAuth
		if o.AgentClaimName() != tc.claim || o.ShortLived() != tc.short || !slices.Equal(o.ScopesSupported(), tc.supported) {
			t.Errorf("%s: claim %s short-lived %s supported %v", tc.in, o.AgentClaimName(), o.ShortLived(), o.ScopesSupported())
		}
		again, err := policy.ParseProfile(p.Canonical())
		if err != nil || string(again.Canonical()) != string(p.Canonical()) {
			t.Errorf("the canonical form does not read back: %v", err)
		}
	}

	b, _, err := policy.Build(policy.Input{Revision: "r1", Profile: profile(t, oauthEndpoint+`{"issuer":"https://idp.example","scopes":{"standard":["x"]}}}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(b, json.Deterministic(true))
	if err != nil {
		t.Fatal(err)
	}
	l, err := policy.LaunchFrom(data, "e")
	if err != nil {
		t.Fatal(err)
	}
	if l.HTTPAuth != policy.HTTPAuthOAuth || l.OAuth == nil || l.OAuth.Issuer != "https://idp.example" || !slices.Equal(l.OAuth.Scopes["standard"], []string{"x"}) {
		t.Errorf("launch %+v oauth %+v", l, l.OAuth)
	}
}

func TestAuthorizeOAuth(t *testing.T) {
	o := &policy.OAuth{Issuer: "https://idp", Scopes: map[string][]string{"standard": {"rukh.call"}, "elevated": {"rukh.elevated"}}}
	cred := func(short bool, scopes ...string) kernel.Credential {
		return kernel.Credential{Agent: "svc", Endpoint: "e", Kind: kernel.CredentialOAuth, Issuer: "https://idp", Scopes: scopes, ShortLived: short}
	}
	for _, tc := range []struct {
		name    string
		o       *policy.OAuth
		level   string
		cred    kernel.Credential
		code    kernel.Code
		missing []string
		msg     string
	}{
		{"standard with its scope", o, policy.SecurityStandard, cred(false, "rukh.call"), "", nil, ""},
		{"default level is standard", o, "", cred(false, "rukh.call", "other"), "", nil, ""},
		{"standard without its scope", o, policy.SecurityStandard, cred(true, "rukh.elevated"), kernel.CodeDenied, []string{"rukh.call"}, "the token lacks the scope rukh.call"},
		{"elevated, short-lived, both scopes", o, policy.SecurityElevated, cred(true, "rukh.elevated", "rukh.call"), "", nil, ""},
		{"elevated needs standard's scope too", o, policy.SecurityElevated, cred(true, "rukh.elevated"), kernel.CodeDenied, []string{"rukh.call"}, "lacks the scope rukh.call"},
		{"elevated without scopes", o, policy.SecurityElevated, cred(true), kernel.CodeDenied, []string{"rukh.call", "rukh.elevated"}, "lacks the scopes rukh.call, rukh.elevated"},
		{"elevated, not short-lived", o, policy.SecurityElevated, cred(false, "rukh.call", "rukh.elevated"), kernel.CodeDenied, nil, "needs a short-lived token (a lifetime of at most 900 seconds"},
		{"elevated, no scopes listed, short-lived", &policy.OAuth{Issuer: "https://idp"}, policy.SecurityElevated, cred(true), "", nil, ""},
		{"strict never", o, policy.SecurityStrict, cred(true, "rukh.call", "rukh.elevated"), kernel.CodeDenied, nil, "needs a Rukh one-time token"},
		{"another issuer's token", &policy.OAuth{Issuer: "https://other"}, policy.SecurityStandard, cred(false, "rukh.call"), kernel.CodeDenied, nil, "the token's issuer https://idp is not endpoint e's identity provider https://other"},
		{"a Rukh credential", o, policy.SecurityStandard, kernel.Credential{Kind: kernel.CredentialStatic}, kernel.CodeInternal, nil, ""},
		{"no policy", nil, policy.SecurityStandard, cred(false), kernel.CodeInternal, nil, ""},
		{"unknown level", o, "paranoid", cred(true), kernel.CodeInternal, nil, ""},
	} {
		err := policy.AuthorizeOAuth(tc.o, tc.level, tc.cred, "web.deploy")
		if kernel.ErrorCode(err) != tc.code || (err != nil && !strings.Contains(err.Error(), tc.msg)) {
			t.Errorf("%s: %v (%s), want %s containing %q", tc.name, err, kernel.ErrorCode(err), tc.code, tc.msg)
			continue
		}
		if tc.code == kernel.CodeDenied && !errors.Is(err, policy.ErrInsufficientScope) != strings.Contains(tc.msg, "issuer") {
			t.Errorf("%s: %v: wraps ErrInsufficientScope %v", tc.name, err, errors.Is(err, policy.ErrInsufficientScope))
		}
		var se *policy.ScopeError
		if got := errors.As(err, &se); got != (tc.missing != nil) || (got && (!slices.Equal(se.Missing, tc.missing) || !strings.Contains(se.Msg, tc.msg))) {
			t.Errorf("%s: scope error %+v, want missing %v", tc.name, se, tc.missing)
		}
	}
	if got := o.ScopesFor(policy.SecurityStandard); !slices.Equal(got, []string{"rukh.call"}) {
		t.Errorf("ScopesFor(standard) = %v", got)
	}
}

// A strict command on an oauth-only HTTP endpoint is unreachable: publish
// says so; with rukh+oauth it is not.
func TestOAuthStrictWarning(t *testing.T) {
	m := parseManifest(t, manifestJSON("p", "1.0.0",
		cmdSpec{id: "p.read", path: `["p","read"]`},
		cmdSpec{id: "p.drop", path: `["p","drop"]`},
		cmdSpec{id: "p.wipe", path: `["p","wipe"]`}))
	prof := profile(t, `{"endpoints":{
		"a":{"namespace":"na","transports":["http"],"publish":{"packages":["p"]},"httpAuth":"oauth","oauth":{"issuer":"https://idp"},"security":{"commands":{"p.drop":"strict","p.wipe":"strict"}}},
		"b":{"namespace":"nb","transports":["http"],"publish":{"packages":["p"]},"httpAuth":"rukh+oauth","oauth":{"issuer":"https://idp"},"security":{"default":"strict"}},
		"c":{"namespace":"nc","transports":["stdio"],"publish":{"packages":["p"]},"httpAuth":"oauth","oauth":{"issuer":"https://idp"},"security":{"default":"strict"}}}}`)
	_, warnings, err := policy.Build(policy.Input{Revision: "r1", Profile: prof, Releases: []policy.ReleaseInput{release(m)}})
	if err != nil {
		t.Fatal(err)
	}
	want := `endpoint "a": p.drop, p.wipe are strict, which needs a Rukh one-time token, but httpAuth "oauth" accepts only the identity provider's tokens: no HTTP caller can run them (use httpAuth "rukh+oauth")`
	if len(warnings) != 1 || warnings[0] != want {
		t.Errorf("warnings %q", warnings)
	}
}

func manyScopes(n int) string {
	var q []string
	for i := range n {
		q = append(q, fmt.Sprintf("%q", fmt.Sprint("s", i)))
	}
	return strings.Join(q, ",")
}
