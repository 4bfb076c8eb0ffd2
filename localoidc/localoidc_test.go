package localoidc

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// keySet fetches the provider's published keys through its discovery
// document, as a resource server does.
func keySet(t *testing.T, p *Provider) jose.JSONWebKeySet {
	t.Helper()
	var disc struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	get(t, p.Issuer+"/.well-known/openid-configuration", &disc)
	if disc.Issuer != p.Issuer {
		t.Fatalf("discovery issuer %q, want %q", disc.Issuer, p.Issuer)
	}
	var ks jose.JSONWebKeySet
	get(t, disc.JWKSURI, &ks)
	return ks
}

func get(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

type claims struct {
	jwt.Claims
	Scope    string `json:"scope"`
	ClientID string `json:"client_id"`
}

func verify(t *testing.T, ks jose.JSONWebKeySet, tok string) claims {
	t.Helper()
	parsed, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		t.Fatal(err)
	}
	var c claims
	if err := parsed.Claims(ks, &c); err != nil {
		t.Fatalf("token does not verify against the published keys: %v", err)
	}
	return c
}

func TestProvider(t *testing.T) {
	const aud1, aud2 = "http://127.0.0.1:1/mcp/v1/a/one", "http://127.0.0.1:1/mcp/v1/a/two"
	p, err := Start("", Client{ID: "agent", Secret: "s3cret", Audience: []string{aud1, aud2}, Scopes: []string{"rukh.call", "rukh.elevated"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	ctx := context.Background()

	tok, err := p.Token(ctx, "agent", "s3cret", aud2, "rukh.call")
	if err != nil {
		t.Fatal(err)
	}
	c := verify(t, keySet(t, p), tok)
	if c.Issuer != p.Issuer || c.Subject != "sa-agent" || c.ClientID != "agent" || c.Scope != "rukh.call" ||
		len(c.Audience) != 1 || c.Audience[0] != aud2 || c.Expiry.Time().Sub(c.IssuedAt.Time()) != 5*60e9 {
		t.Fatalf("claims %+v", c)
	}
	if tok, err = p.Token(ctx, "agent", "s3cret", ""); err != nil {
		t.Fatal(err)
	} else if c := verify(t, keySet(t, p), tok); len(c.Audience) != 2 {
		t.Fatalf("default audience %v", c.Audience)
	}

	for name, f := range map[string]func() error{
		"wrong secret":         func() error { _, err := p.Token(ctx, "agent", "nope", ""); return err },
		"scope not allowed":    func() error { _, err := p.Token(ctx, "agent", "s3cret", "", "admin"); return err },
		"resource not allowed": func() error { _, err := p.Token(ctx, "agent", "s3cret", "http://other/"); return err },
	} {
		if err := f(); err == nil {
			t.Errorf("%s: a token was issued", name)
		}
	}

	// Rotation: new tokens carry the new kid, and the key set has both.
	old := strings.Split(tok, ".")[0]
	kid, err := p.RotateKey()
	if err != nil {
		t.Fatal(err)
	}
	tok2, _ := p.Token(ctx, "agent", "s3cret", "")
	if strings.Split(tok2, ".")[0] == old {
		t.Fatal("the token after rotation has the old header")
	}
	if ks := keySet(t, p); len(ks.Key(kid)) != 1 || len(ks.Keys) != 2 {
		t.Fatalf("key set after rotation: %d keys", len(ks.Keys))
	}
	verify(t, keySet(t, p), tok2)
	p.RetireOldKeys()
	if ks := keySet(t, p); len(ks.Keys) != 1 {
		t.Fatalf("key set after retiring: %d keys", len(ks.Keys))
	}

	// Down, then back on the same address with the same keys.
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(p.Issuer + "/.well-known/openid-configuration"); err == nil {
		t.Fatal("the stopped provider answered")
	}
	if err := p.Restart(); err != nil {
		t.Fatal(err)
	}
	verify(t, keySet(t, p), tok2)
}
