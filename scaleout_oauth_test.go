//go:build etcd

package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/rukh-dev/rukh/localoidc"
)

// TestScaleOutOAuth: two replicas on one etcd store behind a round-robin
// proxy, both with --public-url the proxy's URL. An OAuth client that knows
// only the proxy gets its token for that URL, and each replica verifies it
// on its own: calls run on both.
func TestScaleOutOAuth(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd, an OpenID provider, two replicas and a proxy")
	}
	c := &scaleCluster{t: t, bin: buildRukhTags(t, "etcd"), dir: t.TempDir()}
	srv, err := startEtcd(filepath.Join(c.dir, "etcd"), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	c.storeURL = "etcd://" + srv.Addr + "/oauth"

	// The proxy's address first: it is the public URL, the audience.
	var targets []*url.URL
	var next atomic.Int64
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(targets[int(next.Add(1))%len(targets)])
	}})
	t.Cleanup(proxy.Close)
	resource := proxy.URL + "/mcp/v1/auth-remote/remote"

	idp, err := localoidc.Start("", localoidc.Client{ID: "agent-a", Secret: oauthSecret, Audience: []string{resource},
		Scopes: []string{"rukh.call", "rukh.elevated"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idp.Stop() })
	profile := filepath.Join(c.dir, "profile.json")
	if err := os.WriteFile(profile, []byte(fmt.Sprintf(oauthProfile, idp.Issuer)), 0o644); err != nil {
		t.Fatal(err)
	}
	c.mustRukh("install", "--allow-unsigned", copyInteropFixture(t, "testdata/auth/pkg", c.dir))
	c.mustRukh("activate", "auth.fake")
	c.mustRukh("policy", "set", profile)
	c.mustRukh("publish")
	var works []string
	for i := range 2 {
		name := fmt.Sprintf("replica-%d", i)
		work := filepath.Join(c.dir, name+"-work")
		if err := os.MkdirAll(work, 0o755); err != nil {
			t.Fatal(err)
		}
		base, _, _ := startServeHTTP(t, c.bin, c.env(filepath.Join(c.dir, name)), work, "--rate", "0", "--public-url", proxy.URL)
		u, _ := url.Parse(base)
		targets = append(targets, u)
		works = append(works, work)
	}

	h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
		Credentials: &oauthex.ClientCredentials{ClientID: "agent-a", ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: oauthSecret}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "rukh-oauth", Version: "0.0.1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: resource, OAuthHandler: h, HTTPClient: &http.Client{}}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatalf("connect through the proxy: %v", err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var std string
	for _, tl := range list.Tools {
		if tl.Title == "A standard command" {
			std = tl.Name
		}
	}
	for i := range 6 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: std, Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("call %d through the proxy: %v %+v", i, err, res)
		}
	}
	for i, w := range works {
		files, _ := filepath.Glob(filepath.Join(w, "calls", "*.invoke"))
		if len(files) == 0 {
			t.Errorf("replica %d ran no call: it did not verify the token on its own", i)
		}
	}
}
