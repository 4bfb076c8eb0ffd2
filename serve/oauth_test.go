package serve

import (
	"context"
	"testing"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/mcphttp"
	"github.com/rukh-dev/rukh/policy"
)

// setAuths records what applyAuth set, by endpoint.
type setAuths map[string]*mcphttp.OAuthEndpoint

func (s setAuths) SetAuth(endpoint, httpAuth string, o *mcphttp.OAuthEndpoint) bool {
	s[endpoint] = o
	return true
}

func launch(endpoint, httpAuth string, o *policy.OAuth) *policy.Launch {
	return &policy.Launch{Endpoint: endpoint, Namespace: "acme", Transports: []string{"http"}, HTTPAuth: httpAuth, OAuth: o}
}

// A republish keeps an endpoint's verifier (and so the keys it fetched)
// while its issuer, audience, agent claim and short-lived bound stay; any
// of them changed makes a new one, and one no endpoint uses is dropped.
func TestOAuthVerifiersAcrossRepublishes(t *testing.T) {
	const iss = "https://idp.example.com/realms/acme"
	block := func(scope string) *policy.OAuth {
		return &policy.OAuth{Issuer: iss, Scopes: map[string][]string{"standard": {scope}}}
	}
	vs := newOAuthVerifiers("https://mcp.example.com", func(k verifierKey) (mcphttp.TokenVerifier, error) { return newTokenVerifier(k, 0, nil) })
	eps := []mcphttp.Endpoint{{Namespace: "acme", Core: mcpcore.Config{Endpoint: "web"}}, {Namespace: "acme", Core: mcpcore.Config{Endpoint: "ops"}}}
	var first mcphttp.TokenVerifier
	for _, tc := range []struct {
		name     string
		web      *policy.Launch // nil: the revision has no endpoint web
		same     bool           // web keeps the first verifier
		kept     int            // verifiers kept
		resource string
	}{
		{"start", launch("web", policy.HTTPAuthOAuth, block("rukh.call")), true, 1, "https://mcp.example.com/mcp/v1/acme/web"},
		{"the same block republished", launch("web", policy.HTTPAuthOAuth, block("rukh.call")), true, 1, "https://mcp.example.com/mcp/v1/acme/web"},
		{"other scopes", launch("web", policy.HTTPAuthRukhOAuth, block("rukh.read")), true, 1, "https://mcp.example.com/mcp/v1/acme/web"},
		{"the endpoint dropped", nil, true, 1, ""},
		{"another audience", launch("web", policy.HTTPAuthOAuth, &policy.OAuth{Issuer: iss, Audience: "https://api.example.com/acme"}), false, 1, "https://api.example.com/acme"},
		{"another issuer", launch("web", policy.HTTPAuthOAuth, &policy.OAuth{Issuer: "https://other.example.com"}), false, 1, "https://mcp.example.com/mcp/v1/acme/web"},
		{"bearer again", launch("web", policy.HTTPAuthBearer, nil), false, 0, ""},
	} {
		set := setAuths{}
		launches := map[string]*policy.Launch{"ops": launch("ops", policy.HTTPAuthBearer, nil)}
		if tc.web != nil {
			launches["web"] = tc.web
		}
		if err := vs.applyAuth(set, eps, launches); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if o, ok := set["ops"]; !ok || o != nil {
			t.Errorf("%s: the bearer endpoint got %+v (set: %v)", tc.name, o, ok)
		}
		o, ok := set["web"]
		switch {
		case tc.web == nil:
			if ok {
				t.Errorf("%s: an endpoint the revision dropped was set", tc.name)
			}
		case tc.web.OAuth == nil:
			if o != nil {
				t.Errorf("%s: %+v, want no OAuth", tc.name, o)
			}
		default:
			if o == nil {
				t.Fatalf("%s: no OAuth endpoint", tc.name)
			}
			if first == nil {
				first = o.Verifier
			}
			if (o.Verifier == first) != tc.same {
				t.Errorf("%s: the same verifier: %v, want %v", tc.name, o.Verifier == first, tc.same)
			}
			if o.Policy != tc.web.OAuth || o.Resource != tc.resource || o.AcceptRukh != (tc.web.HTTPAuth == policy.HTTPAuthRukhOAuth) ||
				o.MetadataURL != "https://mcp.example.com/.well-known/oauth-protected-resource/mcp/v1/acme/web" {
				t.Errorf("%s: %+v", tc.name, o)
			}
		}
		if n := len(vs.m); n != tc.kept {
			t.Errorf("%s: %d verifier(s) kept, want %d", tc.name, n, tc.kept)
		}
	}
}

// A failed read of the published endpoints' authentication is retried
// until one succeeds, and what it read is applied once; ctx ending stops
// the retries.
func TestApplyRetrying(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fails   int
		nothing bool // nothing published
		applied int
	}{
		{"first read", 0, false, 1},
		{"after failed reads", 3, false, 1},
		{"nothing published", 1, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reads, applied := 0, 0
			read := func() (map[string]*policy.Launch, error) {
				reads++
				if reads <= tc.fails {
					return nil, kernel.Errorf(kernel.CodeUnavailable, "the store is unavailable")
				}
				if tc.nothing {
					return nil, nil
				}
				return map[string]*policy.Launch{"web": launch("web", policy.HTTPAuthBearer, nil)}, nil
			}
			applyRetrying(context.Background(), read, func(l map[string]*policy.Launch) {
				if l["web"] == nil {
					t.Errorf("applied %v", l)
				}
				applied++
			}, t.Logf, time.Millisecond, 4*time.Millisecond)
			if reads != tc.fails+1 || applied != tc.applied {
				t.Errorf("%d read(s), %d applied; want %d, %d", reads, applied, tc.fails+1, tc.applied)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	reads := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		applyRetrying(ctx, func() (map[string]*policy.Launch, error) {
			if reads++; reads == 2 {
				cancel()
			}
			return nil, kernel.Errorf(kernel.CodeUnavailable, "the store is unavailable")
		}, func(map[string]*policy.Launch) { t.Error("applied a failed read") }, t.Logf, time.Millisecond, time.Millisecond)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("retries went on after ctx ended")
	}
}
