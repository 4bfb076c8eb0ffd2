// Package localoidc runs a real OpenID provider in the calling process, from
// the zitadel/oidc module's op package: for the tests of serve-http as an
// OAuth resource server, where no identity provider is installed. It issues
// JWT access tokens by the client-credentials grant, with the audience a
// client is configured for or the resource it asks for, and the scopes it is
// allowed; it can rotate its signing key and be stopped and started again on
// the same address. It is never linked into rukh: it imports zitadel/oidc
// and go-jose and no rukh package, and only tests import it.
package localoidc

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Client is a confidential client allowed the client-credentials grant.
type Client struct {
	ID, Secret string
	// Subject is the sub of its tokens ("" = "sa-" + ID, the way providers
	// name a client's service account apart from its client_id).
	Subject string
	// Audience is the aud of a token that names no resource; a resource
	// parameter (RFC 8707) must be one of these.
	Audience []string
	// Scopes the client may be granted; asking for another is refused.
	Scopes []string
	// Lifetime of its access tokens (0 = 5 minutes).
	Lifetime time.Duration
}

// Provider is a running OpenID provider.
type Provider struct {
	// Issuer is http://ADDR, the iss of every token.
	Issuer string
	addr   string
	st     *storage
	mu     sync.Mutex
	srv    *http.Server
	done   chan struct{}
}

// Start runs a provider on addr (HOST:PORT; "" picks a free loopback port)
// with the given clients, and returns once it accepts connections.
func Start(addr string, clients ...Client) (*Provider, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	st := &storage{clients: map[string]Client{}}
	for _, c := range clients {
		if c.ID == "" || c.Secret == "" {
			l.Close()
			return nil, errors.New("localoidc: a client needs an ID and a secret")
		}
		if c.Subject == "" {
			c.Subject = "sa-" + c.ID
		}
		if c.Lifetime == 0 {
			c.Lifetime = 5 * time.Minute
		}
		st.clients[c.ID] = c
	}
	if _, err := st.rotate(); err != nil {
		l.Close()
		return nil, err
	}
	p := &Provider{Issuer: "http://" + l.Addr().String(), addr: l.Addr().String(), st: st}
	if err := p.serve(l); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Provider) serve(l net.Listener) error {
	var key [32]byte
	if _, err := rand.Read(key[:]); err != nil {
		l.Close()
		return err
	}
	cfg := &op.Config{CryptoKey: key, CodeMethodS256: true, AuthMethodPost: true}
	o, err := op.NewProvider(cfg, p.st, op.StaticIssuer(p.Issuer), op.WithAllowInsecure())
	if err != nil {
		l.Close()
		return err
	}
	h := http.Handler(o)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The op package hands the storage the client and scopes but not the
		// resource parameter: carry it in the request's context.
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/token") {
			if err := r.ParseForm(); err == nil {
				r = r.WithContext(context.WithValue(r.Context(), resourceKey{}, r.Form["resource"]))
			}
		}
		h.ServeHTTP(w, r)
	}), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(l) }()
	p.mu.Lock()
	p.srv, p.done = srv, done
	p.mu.Unlock()
	return nil
}

// Addr is the provider's HOST:PORT.
func (p *Provider) Addr() string { return p.addr }

// Stop closes the listener and every connection: the provider cannot be
// reached until Restart.
func (p *Provider) Stop() error {
	p.mu.Lock()
	srv, done := p.srv, p.done
	p.srv = nil
	p.mu.Unlock()
	if srv == nil {
		return nil
	}
	err := srv.Close()
	<-done
	return err
}

// Restart serves again on the same address, with the same keys and clients.
func (p *Provider) Restart() error {
	p.mu.Lock()
	running := p.srv != nil
	p.mu.Unlock()
	if running {
		return errors.New("localoidc: already running")
	}
	var l net.Listener
	var err error
	for range 50 {
		if l, err = net.Listen("tcp", p.addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return err
	}
	return p.serve(l)
}

// RotateKey makes a new signing key, published in the key set next to the
// old ones, and signs every later token with it. It returns the new key id.
func (p *Provider) RotateKey() (string, error) { return p.st.rotate() }

// RetireOldKeys removes every key but the current one from the key set.
func (p *Provider) RetireOldKeys() { p.st.retire() }

// PrivateKey is the current signing key and its id: for tests that forge a
// token the provider would not issue (expired, not yet valid, another
// issuer's), signed by the key the provider publishes.
func (p *Provider) PrivateKey() (*rsa.PrivateKey, string) {
	k := p.st.current()
	return k.priv, k.id
}

// Token asks the token endpoint for an access token by the
// client-credentials grant, as a client would. resource may be "".
func (p *Provider) Token(ctx context.Context, clientID, secret, resource string, scopes ...string) (string, error) {
	form := url.Values{"grant_type": {"client_credentials"}}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	if resource != "" {
		form.Set("resource", resource)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.Issuer+"/oauth/token", strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(clientID), url.QueryEscape(secret))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", fmt.Errorf("localoidc: token endpoint: %s: %v", resp.Status, err)
	}
	if resp.StatusCode != http.StatusOK || out.AccessToken == "" {
		return "", fmt.Errorf("localoidc: token endpoint: %s: %s %s", resp.Status, out.Error, out.Description)
	}
	return out.AccessToken, nil
}

// Sign signs claims as a compact JWS with key under kid and alg RS256.
func Sign(key *rsa.PrivateKey, kid string, claims map[string]any) (string, error) {
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: kid}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	obj, err := s.Sign(b)
	if err != nil {
		return "", err
	}
	return obj.CompactSerialize()
}

type resourceKey struct{}

// key is one RSA signing key; it serves as op.SigningKey and op.Key.
type key struct {
	id   string
	priv *rsa.PrivateKey
}

func (k *key) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *key) Algorithm() jose.SignatureAlgorithm          { return jose.RS256 }
func (k *key) Use() string                                 { return "sig" }
func (k *key) ID() string                                  { return k.id }

// Key is the private key for signing (op.SigningKey) and the public one
// for the key set (op.Key): the op package asks both through Key, so the
// key set's copy is a pubKey.
func (k *key) Key() any { return k.priv }

type pubKey struct{ *key }

func (k pubKey) Key() any { return &k.priv.PublicKey }

// storage is the op package's storage, in memory: clients, keys and the
// client-credentials grant; the flows with a user are refused.
type storage struct {
	mu      sync.Mutex
	clients map[string]Client
	keys    []*key
}

func (s *storage) rotate() (string, error) {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", err
	}
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	k := &key{id: hex.EncodeToString(b), priv: priv}
	s.mu.Lock()
	s.keys = append(s.keys, k)
	s.mu.Unlock()
	return k.id, nil
}

func (s *storage) retire() {
	s.mu.Lock()
	s.keys = s.keys[len(s.keys)-1:]
	s.mu.Unlock()
}

func (s *storage) current() *key {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[len(s.keys)-1]
}

var errNoUser = errors.New("localoidc: only the client-credentials grant is supported")

// ClientCredentials authenticates a client (op.ClientCredentialsStorage).
func (s *storage) ClientCredentials(_ context.Context, id, secret string) (op.Client, error) {
	s.mu.Lock()
	c, ok := s.clients[id]
	s.mu.Unlock()
	if !ok || c.Secret != secret {
		return nil, errors.New("localoidc: unknown client or wrong secret")
	}
	return &client{c}, nil
}

// ClientCredentialsTokenRequest grants the scopes asked for, when allowed,
// for the resource asked for, when the client may have it.
func (s *storage) ClientCredentialsTokenRequest(ctx context.Context, id string, scopes []string) (op.TokenRequest, error) {
	s.mu.Lock()
	c, ok := s.clients[id]
	s.mu.Unlock()
	if !ok {
		return nil, errors.New("localoidc: unknown client")
	}
	for _, sc := range scopes {
		if !slices.Contains(c.Scopes, sc) {
			return nil, oidc.ErrInvalidScope().WithDescription("scope %q is not allowed for this client", sc)
		}
	}
	aud := c.Audience
	if res, _ := ctx.Value(resourceKey{}).([]string); len(res) > 0 {
		for _, r := range res {
			if !slices.Contains(c.Audience, r) {
				return nil, oidc.ErrInvalidRequest().WithDescription("resource %q is not allowed for this client", r)
			}
		}
		aud = res
	}
	return &tokenRequest{subject: c.Subject, audience: aud, scopes: scopes, lifetime: c.Lifetime}, nil
}

func (s *storage) CreateAccessToken(_ context.Context, req op.TokenRequest) (string, time.Time, error) {
	t, ok := req.(*tokenRequest)
	if !ok {
		return "", time.Time{}, errNoUser
	}
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", time.Time{}, err
	}
	// Whole seconds, so exp − iat is exactly the lifetime.
	return hex.EncodeToString(b), time.Now().UTC().Truncate(time.Second).Add(t.lifetime), nil
}

// GetPrivateClaimsFromScopes puts the granted scopes in the token, as
// providers do for access tokens.
func (s *storage) GetPrivateClaimsFromScopes(_ context.Context, _, _ string, scopes []string) (map[string]any, error) {
	if len(scopes) == 0 {
		return nil, nil
	}
	return map[string]any{"scope": strings.Join(scopes, " ")}, nil
}

func (s *storage) SigningKey(context.Context) (op.SigningKey, error) { return s.current(), nil }

func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (s *storage) KeySet(context.Context) ([]op.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]op.Key, len(s.keys))
	for i, k := range s.keys {
		out[i] = pubKey{k}
	}
	return out, nil
}

func (s *storage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	s.mu.Lock()
	c, ok := s.clients[id]
	s.mu.Unlock()
	if !ok {
		return nil, errors.New("localoidc: unknown client")
	}
	return &client{c}, nil
}

func (s *storage) AuthorizeClientIDSecret(ctx context.Context, id, secret string) error {
	_, err := s.ClientCredentials(ctx, id, secret)
	return err
}

func (s *storage) Health(context.Context) error { return nil }

// The rest of op.Storage: flows with a user, refresh tokens, introspection
// and JWT profile grants, which these tests do not use.

func (s *storage) CreateAuthRequest(context.Context, *oidc.AuthRequest, string) (op.AuthRequest, error) {
	return nil, errNoUser
}
func (s *storage) AuthRequestByID(context.Context, string) (op.AuthRequest, error) {
	return nil, errNoUser
}
func (s *storage) AuthRequestByCode(context.Context, string) (op.AuthRequest, error) {
	return nil, errNoUser
}
func (s *storage) SaveAuthCode(context.Context, string, string) error { return errNoUser }
func (s *storage) DeleteAuthRequest(context.Context, string) error    { return errNoUser }
func (s *storage) CreateAccessAndRefreshTokens(context.Context, op.TokenRequest, string) (string, string, time.Time, error) {
	return "", "", time.Time{}, errNoUser
}
func (s *storage) TokenRequestByRefreshToken(context.Context, string) (op.RefreshTokenRequest, error) {
	return nil, op.ErrInvalidRefreshToken
}
func (s *storage) TerminateSession(context.Context, string, string) error { return nil }
func (s *storage) RevokeToken(context.Context, string, string, string) *oidc.Error {
	return oidc.ErrServerError()
}
func (s *storage) GetRefreshTokenInfo(context.Context, string, string) (string, string, error) {
	return "", "", op.ErrInvalidRefreshToken
}
func (s *storage) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil
}
func (s *storage) SetUserinfoFromToken(context.Context, *oidc.UserInfo, string, string, string) error {
	return errNoUser
}
func (s *storage) SetIntrospectionFromToken(context.Context, *oidc.IntrospectionResponse, string, string, string) error {
	return errNoUser
}
func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errNoUser
}
func (s *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errNoUser
}

type tokenRequest struct {
	subject  string
	audience []string
	scopes   []string
	lifetime time.Duration
}

func (t *tokenRequest) GetSubject() string    { return t.subject }
func (t *tokenRequest) GetAudience() []string { return t.audience }
func (t *tokenRequest) GetScopes() []string   { return t.scopes }

// client is a Client as the op package sees it: a web application that may
// only use the client-credentials grant, issued JWT access tokens.
type client struct{ c Client }

func (c *client) GetID() string                       { return c.c.ID }
func (c *client) RedirectURIs() []string              { return nil }
func (c *client) PostLogoutRedirectURIs() []string    { return nil }
func (c *client) ApplicationType() op.ApplicationType { return op.ApplicationTypeWeb }
func (c *client) AuthMethod() oidc.AuthMethod         { return oidc.AuthMethodBasic }
func (c *client) ResponseTypes() []oidc.ResponseType  { return nil }
func (c *client) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeClientCredentials}
}
func (c *client) LoginURL(string) string              { return "" }
func (c *client) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }
func (c *client) IDTokenLifetime() time.Duration      { return time.Hour }
func (c *client) DevMode() bool                       { return false }
func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) IsScopeAllowed(s string) bool         { return slices.Contains(c.c.Scopes, s) }
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return false }
func (c *client) ClockSkew() time.Duration             { return 0 }
