package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/go-json-experiment/json"
	"github.com/rukh-dev/rukh/kernel"
)

const audience = "https://mcp.example.com/mcp/v1/acme/web"

// issuer is a test identity provider: discovery and a key set it can
// change, take down and count fetches of.
type issuer struct {
	t    testing.TB
	srv  *httptest.Server
	url  string // the issuer identifier
	path string // its path, "" or "/realms/acme"

	mu        sync.Mutex
	keys      []jose.JSONWebKey // private; the set publishes their public halves
	extra     []any             // more members of the set, published as they are
	setBody   string            // when set, the key set's whole answer instead
	down      bool
	mdIssuer  string        // the issuer the metadata names; "" = url
	rfc8414   bool          // serve metadata only at the RFC 8414 URL
	gate      chan struct{} // when set, a key set fetch waits for it to close
	jwksFetch atomic.Int32
}

func newIssuer(t testing.TB, path string) *issuer {
	is := &issuer{t: t, path: path}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		is.mu.Lock()
		defer is.mu.Unlock()
		if is.down {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		md := map[string]any{"issuer": is.url, "jwks_uri": is.srv.URL + "/keys"}
		if is.mdIssuer != "" {
			md["issuer"] = is.mdIssuer
		}
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server" + is.path:
			writeJSON(w, md)
		case is.path + "/.well-known/openid-configuration":
			if is.rfc8414 {
				http.NotFound(w, r)
				return
			}
			writeJSON(w, md)
		case "/keys":
			is.jwksFetch.Add(1)
			if g := is.gate; g != nil {
				is.mu.Unlock()
				<-g
				is.mu.Lock()
			}
			if is.setBody != "" {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(is.setBody))
				return
			}
			var keys []any
			for _, k := range is.keys {
				keys = append(keys, k.Public())
			}
			writeJSON(w, map[string]any{"keys": append(keys, is.extra...)})
		default:
			http.NotFound(w, r)
		}
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	is.url = is.srv.URL + path
	return is
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	w.Write(b)
}

func (is *issuer) addKey(kid string, key any) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.keys = append(is.keys, jose.JSONWebKey{Key: key, KeyID: kid, Use: "sig"})
}

func (is *issuer) setDown(down bool) {
	is.mu.Lock()
	is.down = down
	is.mu.Unlock()
}

var (
	rsaKey      = mustRSA(2048)
	rsaKey2     = mustRSA(2048)
	ecKey       = mustEC()
	_, edKey, _ = ed25519.GenerateKey(rand.Reader)
)

func mustRSA(bits int) *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		panic(err)
	}
	return k
}

func mustEC() *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return k
}

// sign makes a compact JWS of claims with key under kid.
func sign(t testing.TB, alg jose.SignatureAlgorithm, key any, kid, typ string, claims map[string]any) string {
	t.Helper()
	opts := &jose.SignerOptions{}
	if typ != "" {
		opts = opts.WithType(jose.ContentType(typ))
	}
	sk := jose.SigningKey{Algorithm: alg, Key: key}
	if kid != "" {
		sk.Key = jose.JSONWebKey{Key: key, KeyID: kid}
	}
	s, err := jose.NewSigner(sk, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// signWith signs claims RS256 with key under kid and opts' headers.
func signWith(t *testing.T, key any, kid string, opts *jose.SignerOptions, claims map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: kid}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// clock is a fake clock the tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func newVerifier(t testing.TB, is *issuer, clk *clock) *Verifier {
	t.Helper()
	v, err := New(Config{Issuer: is.url, Audience: audience, Now: clk.Now, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func goodClaims(is *issuer) map[string]any {
	return map[string]any{
		"iss": is.url, "sub": "u-42", "aud": []string{"other", audience}, "client_id": "svc-ci",
		"iat": t0.Add(-time.Minute).Unix(), "exp": t0.Add(5 * time.Minute).Unix(), "scope": "rukh.call rukh.elevated",
	}
}

func with(m map[string]any, kv ...any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(c, kv[i].(string))
		} else {
			c[kv[i].(string)] = kv[i+1]
		}
	}
	return c
}

func TestVerifyAccepts(t *testing.T) {
	is := newIssuer(t, "")
	is.addKey("rsa-1", rsaKey)
	is.addKey("ec-1", ecKey)
	is.addKey("ed-1", edKey)
	clk := &clock{now: t0}
	v := newVerifier(t, is, clk)
	c := goodClaims(is)
	for _, tt := range []struct {
		name       string
		token      string
		scopes     []string
		shortLived bool
	}{
		{"RS256 at+jwt", sign(t, jose.RS256, rsaKey, "rsa-1", "at+jwt", c), []string{"rukh.call", "rukh.elevated"}, true},
		{"PS384 JWT", sign(t, jose.PS384, rsaKey, "rsa-1", "JWT", c), []string{"rukh.call", "rukh.elevated"}, true},
		{"ES256 no typ", sign(t, jose.ES256, ecKey, "ec-1", "", c), []string{"rukh.call", "rukh.elevated"}, true},
		{"EdDSA", sign(t, jose.EdDSA, edKey, "ed-1", "application/at+jwt", c), []string{"rukh.call", "rukh.elevated"}, true},
		{"scp array", sign(t, jose.RS256, rsaKey, "rsa-1", "", with(c, "scope", nil, "scp", []string{"a", "b"})), []string{"a", "b"}, true},
		{"aud string, long-lived", sign(t, jose.RS256, rsaKey, "rsa-1", "", with(c, "aud", audience, "iat", t0.Add(-time.Hour).Unix())), []string{"rukh.call", "rukh.elevated"}, false},
		{"no iat: never short-lived", sign(t, jose.RS256, rsaKey, "rsa-1", "", with(c, "iat", nil)), []string{"rukh.call", "rukh.elevated"}, false},
		{"expired within the skew", sign(t, jose.RS256, rsaKey, "rsa-1", "", with(c, "exp", t0.Add(-30*time.Second).Unix())), []string{"rukh.call", "rukh.elevated"}, true},
		{"nbf within the skew", sign(t, jose.RS256, rsaKey, "rsa-1", "", with(c, "nbf", t0.Add(30*time.Second).Unix())), []string{"rukh.call", "rukh.elevated"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cred, err := v.Verify(context.Background(), tt.token)
			if err != nil {
				t.Fatal(err)
			}
			if cred.Kind != kernel.CredentialOAuth || cred.Agent != "svc-ci" || cred.Issuer != is.url || cred.Subject != "u-42" {
				t.Errorf("credential %+v", cred)
			}
			if !slices.Equal(cred.Scopes, tt.scopes) || cred.ShortLived != tt.shortLived {
				t.Errorf("scopes %v short-lived %v, want %v %v", cred.Scopes, cred.ShortLived, tt.scopes, tt.shortLived)
			}
			if cred.Hash != sha256.Sum256([]byte(tt.token)) || cred.LogID() == "" || strings.Contains(fmt.Sprint(cred), tt.token) {
				t.Errorf("hash or log id: %+v", cred)
			}
		})
	}
	if n := is.jwksFetch.Load(); n != 1 {
		t.Errorf("%d key set fetches, want 1 (cached)", n)
	}
}

func TestVerifyRefuses(t *testing.T) {
	is := newIssuer(t, "")
	is.addKey("rsa-1", rsaKey)
	is.addKey("ec-1", ecKey)
	clk := &clock{now: t0}
	v := newVerifier(t, is, clk)
	c := goodClaims(is)
	pub, err := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	payload, _ := json.Marshal(c)
	b64 := base64.RawURLEncoding.EncodeToString
	for _, tt := range []struct {
		name, token, want string
	}{
		{"wrong issuer", sign(t, jose.RS256, rsaKey, "rsa-1", "", with(c, "iss", "https://evil.example")), `issuer "https://evil.example" is not`},
		{"issuer with a trailing slash", sign(t, jose.RS256, rsaKey, "rsa-1", "", with(c, "iss", is.url+"/")), "issuer"},
		{"no issuer", sign(t, jose.RS256, rsaKey, "rsa-1", "", with(c, "iss", nil)), "issuer"},
		{"wrong audience", sign(t, jose.RS256, rsaKey, "rsa-1", "", with(c, "aud", "https://mcp.example.com/mcp/v1/acme/other")), "not for this endpoint"},
		{"no audience", sign(t, jose.RS256, rsaKey, "rsa-1", "", with(c, "aud", nil)), "no audience"},
		{"expired", sign(t, jose.RS256, rsaKey, "rsa-1", "", with(c, "exp", t0.Add(-2*time.Minute).Unix())), "expired"},
		{"no expiry", sign(t, jose.RS256, rsaKey, "rsa-1", "", with(c, "exp", nil)), "no expiry"},
		{"not yet valid", sign(t, jose.RS256, rsaKey, "rsa-1", "", with(c, "nbf", t0.Add(2*time.Minute).Unix())), "not valid before"},
		{"issued in the future", sign(t, jose.RS256, rsaKey, "rsa-1", "", with(c, "iat", t0.Add(2*time.Minute).Unix())), "issued in the future"},
		{"exp not a number", sign(t, jose.RS256, rsaKey, "rsa-1", "", with(c, "exp", "soon")), "exp claim is not a time"},
		{"no agent claim", sign(t, jose.RS256, rsaKey, "rsa-1", "", with(c, "client_id", nil)), "client_id claim does not name the agent"},
		{"agent claim not a string", sign(t, jose.RS256, rsaKey, "rsa-1", "", with(c, "client_id", 7)), "client_id claim is not a string"},
		{"agent claim too long", sign(t, jose.RS256, rsaKey, "rsa-1", "", with(c, "client_id", strings.Repeat("a", 129))), "does not name the agent"},
		{"agent claim with a control", sign(t, jose.RS256, rsaKey, "rsa-1", "", with(c, "client_id", "a\nb")), "does not name the agent"},
		{"sub with controls", sign(t, jose.RS256, rsaKey, "rsa-1", "", with(c, "sub", "u\n\x1b[31mred\x00")), "sub claim is not a string of 1 to 255 printable characters"},
		{"sub too long", sign(t, jose.RS256, rsaKey, "rsa-1", "", with(c, "sub", strings.Repeat("x", 8000))), "sub claim is not a string of 1 to 255"},
		{"sub empty", sign(t, jose.RS256, rsaKey, "rsa-1", "", with(c, "sub", "")), "sub claim is not a string of 1 to 255"},
		{"sub not a string", sign(t, jose.RS256, rsaKey, "rsa-1", "", with(c, "sub", 42)), "sub claim is not a string"},
		{"scope not a string", sign(t, jose.RS256, rsaKey, "rsa-1", "", with(c, "scope", []string{"a"})), "scope claim is not a string"},
		{"alg none", b64([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + b64(payload) + ".", `algorithm "none" is not accepted`},
		{"HS256 keyed with the public key", sign(t, jose.HS256, pubPEM, "rsa-1", "", c), `algorithm "HS256" is not accepted`},
		{"HS256 keyed with the public key DER", sign(t, jose.HS256, pub, "rsa-1", "", c), `algorithm "HS256" is not accepted`},
		{"alg does not fit the key", sign(t, jose.ES256, ecKey, "rsa-1", "", c), "does not fit the issuer's key"},
		{"signed by another key", sign(t, jose.RS256, rsaKey2, "rsa-1", "", c), "signature does not verify"},
		{"tampered payload", tamper(sign(t, jose.RS256, rsaKey, "rsa-1", "", c), with(c, "client_id", "root")), "signature does not verify"},
		{"wrong typ", sign(t, jose.RS256, rsaKey, "rsa-1", "id_token+jwt", c), "not a JWT access token"},
		{"JWE", "a.b.c.d.e", "encrypted (JWE)"},
		{"crit with an unknown extension", signWith(t, rsaKey, "rsa-1", (&jose.SignerOptions{}).WithHeader("crit", []string{"urn:x"}).WithHeader("urn:x", 1), c), `critical extensions (crit "urn:x")`},
		{"crit empty", signWith(t, rsaKey, "rsa-1", (&jose.SignerOptions{}).WithHeader("crit", []string{}), c), "critical extensions"},
		{"not a JWT", "rukh_key_abcdef", "not a JWT"},
		{"header not base64url", "!!.e30.sig", "not base64url"},
		{"oversized", strings.Repeat("a", MaxTokenBytes+1), "larger than 16384 bytes"},
		{"JSON serialization", `{"payload":"e30","signatures":[]}`, "not a JWT"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := v.Verify(context.Background(), tt.token)
			if kernel.ErrorCode(err) != kernel.CodeDenied || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v (%s), want denied containing %q", err, kernel.ErrorCode(err), tt.want)
			}
			if len(tt.token) > 20 && strings.Contains(err.Error(), tt.token) {
				t.Errorf("the error holds the token")
			}
		})
	}
}

// tamper replaces a token's payload, keeping its header and signature.
func tamper(token string, claims map[string]any) string {
	parts := strings.Split(token, ".")
	b, _ := json.Marshal(claims)
	return parts[0] + "." + base64.RawURLEncoding.EncodeToString(b) + "." + parts[2]
}

// An unknown kid refetches the key set once, then refuses; a key the
// issuer rotated in is found by that refetch.
func TestUnknownKidAndRotation(t *testing.T) {
	is := newIssuer(t, "")
	is.addKey("rsa-1", rsaKey)
	clk := &clock{now: t0}
	v := newVerifier(t, is, clk)
	c := goodClaims(is)
	if _, err := v.Verify(context.Background(), sign(t, jose.RS256, rsaKey, "rsa-1", "", c)); err != nil {
		t.Fatal(err)
	}
	clk.add(DefaultMinRefresh)
	_, err := v.Verify(context.Background(), sign(t, jose.RS256, rsaKey2, "nobody", "", c))
	if kernel.ErrorCode(err) != kernel.CodeDenied || !strings.Contains(err.Error(), `key "nobody" is not among`) {
		t.Fatalf("unknown kid: %v", err)
	}
	if n := is.jwksFetch.Load(); n != 2 {
		t.Fatalf("%d fetches after an unknown kid, want 2 (one refetch)", n)
	}
	// The provider rotates: a new key, the old one gone.
	is.mu.Lock()
	is.keys = nil
	is.mu.Unlock()
	is.addKey("rsa-2", rsaKey2)
	clk.add(DefaultMinRefresh)
	if _, err := v.Verify(context.Background(), sign(t, jose.RS256, rsaKey2, "rsa-2", "", c)); err != nil {
		t.Fatalf("rotated key: %v", err)
	}
	if n := is.jwksFetch.Load(); n != 3 {
		t.Fatalf("%d fetches after the rotation, want 3", n)
	}
	// The retired key's tokens are refused: the cache holds the new set.
	if _, err := v.Verify(context.Background(), sign(t, jose.RS256, rsaKey, "rsa-1", "", c)); kernel.ErrorCode(err) != kernel.CodeDenied {
		t.Fatalf("retired key: %v", err)
	}
}

// A key rotated in just after a refetch: within MinRefresh of it, a token
// issued since then is unavailable (its key may be on its way), one issued
// before it refused (the set fetched after it lacks its key); once the set
// can be fetched again, the new key verifies.
func TestRotationWithinMinRefresh(t *testing.T) {
	is := newIssuer(t, "")
	is.addKey("rsa-1", rsaKey)
	clk := &clock{now: t0}
	v := newVerifier(t, is, clk)
	c := goodClaims(is)
	if _, err := v.Verify(context.Background(), sign(t, jose.RS256, rsaKey, "rsa-1", "", c)); err != nil {
		t.Fatal(err)
	}
	clk.add(DefaultMinRefresh)
	// Someone sends a kid nobody has: the refetch it causes finds nothing.
	if _, err := v.Verify(context.Background(), sign(t, jose.RS256, rsaKey2, "junk", "", c)); kernel.ErrorCode(err) != kernel.CodeDenied {
		t.Fatalf("junk kid: %v", err)
	}
	is.addKey("rsa-2", rsaKey2) // the provider rotates now
	clk.add(5 * time.Second)
	fresh := with(c, "iat", clk.Now().Unix(), "exp", clk.Now().Add(5*time.Minute).Unix())
	for _, tt := range []struct {
		name   string
		claims map[string]any
		code   kernel.Code
	}{
		{"issued since the refetch", fresh, kernel.CodeUnavailable},
		{"no iat", with(fresh, "iat", nil), kernel.CodeUnavailable},
		{"issued before the refetch", c, kernel.CodeDenied},
	} {
		_, err := v.Verify(context.Background(), sign(t, jose.RS256, rsaKey2, "rsa-2", "", tt.claims))
		if kernel.ErrorCode(err) != tt.code {
			t.Errorf("%s: %v (%s), want %s", tt.name, err, kernel.ErrorCode(err), tt.code)
		}
	}
	if ra := v.RetryAfter(); ra != DefaultMinRefresh-5*time.Second {
		t.Errorf("RetryAfter %s", ra)
	}
	clk.add(v.RetryAfter())
	if _, err := v.Verify(context.Background(), sign(t, jose.RS256, rsaKey2, "rsa-2", "", fresh)); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}

// A flood of unknown kids, concurrent and one after another, fetches the
// key set at most once per MinRefresh.
func TestRefetchRateLimited(t *testing.T) {
	is := newIssuer(t, "")
	is.addKey("rsa-1", rsaKey)
	clk := &clock{now: t0}
	v := newVerifier(t, is, clk)
	c := goodClaims(is)
	flood := func(n int) {
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				_, err := v.Verify(context.Background(), sign(t, jose.RS256, rsaKey2, fmt.Sprintf("k-%d", i), "", c))
				if kernel.ErrorCode(err) != kernel.CodeDenied {
					t.Errorf("unknown kid %d: %v", i, err)
				}
			})
		}
		wg.Wait()
	}
	flood(50)
	if n := is.jwksFetch.Load(); n != 1 {
		t.Fatalf("%d fetches for a concurrent flood, want 1", n)
	}
	for range 5 {
		clk.add(DefaultMinRefresh / 5)
		flood(10)
	}
	// MinRefresh has passed exactly once since the first fetch.
	if n := is.jwksFetch.Load(); n != 2 {
		t.Fatalf("%d fetches over one MinRefresh, want 2", n)
	}
	// A known kid never fetches.
	for range 20 {
		if _, err := v.Verify(context.Background(), sign(t, jose.RS256, rsaKey, "rsa-1", "", c)); err != nil {
			t.Fatal(err)
		}
	}
	if n := is.jwksFetch.Load(); n != 2 {
		t.Fatalf("%d fetches after known kids, want 2", n)
	}
}

// Callers that arrive while the key set is being fetched wait for that
// fetch and use its keys: none is refused for a key on its way.
func TestConcurrentFirstFetch(t *testing.T) {
	is := newIssuer(t, "")
	is.addKey("rsa-1", rsaKey)
	is.gate = make(chan struct{})
	v := newVerifier(t, is, &clock{now: t0})
	tok := sign(t, jose.RS256, rsaKey, "rsa-1", "", goodClaims(is))
	var started, done sync.WaitGroup
	for range 20 {
		started.Add(1)
		done.Go(func() {
			started.Done()
			if _, err := v.Verify(context.Background(), tok); err != nil {
				t.Errorf("concurrent first fetch: %v", err)
			}
		})
	}
	started.Wait()
	for is.jwksFetch.Load() == 0 {
		runtime.Gosched()
	}
	close(is.gate)
	done.Wait()
	if n := is.jwksFetch.Load(); n != 1 {
		t.Errorf("%d fetches, want 1", n)
	}
}

// An issuer that cannot be reached makes tokens unavailable, never
// refused; once it is back (and MinRefresh passed) they verify.
func TestIssuerDown(t *testing.T) {
	is := newIssuer(t, "")
	is.addKey("rsa-1", rsaKey)
	is.setDown(true)
	clk := &clock{now: t0}
	v := newVerifier(t, is, clk)
	tok := sign(t, jose.RS256, rsaKey, "rsa-1", "", goodClaims(is))
	for range 3 {
		_, err := v.Verify(context.Background(), tok)
		if kernel.ErrorCode(err) != kernel.CodeUnavailable || !strings.Contains(err.Error(), "cannot fetch its metadata") {
			t.Fatalf("issuer down: %v", err)
		}
	}
	if ra := v.RetryAfter(); ra != DefaultMinRefresh {
		t.Errorf("RetryAfter = %s", ra)
	}
	is.setDown(false)
	if _, err := v.Verify(context.Background(), tok); kernel.ErrorCode(err) != kernel.CodeUnavailable {
		t.Fatalf("back, within MinRefresh: %v", err)
	}
	clk.add(DefaultMinRefresh)
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("back: %v", err)
	}
	// Down again: cached keys still decide; a new kid is unavailable.
	is.setDown(true)
	clk.add(DefaultMinRefresh)
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("down, cached key: %v", err)
	}
	_, err := v.Verify(context.Background(), sign(t, jose.RS256, rsaKey2, "rsa-2", "", goodClaims(is)))
	if kernel.ErrorCode(err) != kernel.CodeUnavailable || !strings.Contains(err.Error(), "cannot fetch its key set") {
		t.Fatalf("down, new kid: %v", err)
	}
	// An invalid token with a cached key is still refused as invalid.
	_, err = v.Verify(context.Background(), sign(t, jose.RS256, rsaKey, "rsa-1", "", with(goodClaims(is), "aud", "x")))
	if kernel.ErrorCode(err) != kernel.CodeDenied {
		t.Fatalf("down, bad audience: %v", err)
	}
}

// Keys a resource server must not verify with are left out of the set.
func TestKeySetFilter(t *testing.T) {
	is := newIssuer(t, "")
	weak := mustRSA(1024)
	is.addKey("weak", weak)
	is.addKey("ec-1", ecKey) // one usable key: a set of none is unavailable
	is.extra = []any{
		map[string]any{"kty": "oct", "kid": "oct", "k": base64.RawURLEncoding.EncodeToString([]byte("secret-secret-secret-secret-1234"))},
		map[string]any{"kty": "RSA", "kid": "enc", "use": "enc", "n": base64.RawURLEncoding.EncodeToString(rsaKey.N.Bytes()), "e": "AQAB"},
		map[string]any{"kty": "future", "kid": "odd"},
	}
	clk := &clock{now: t0}
	v := newVerifier(t, is, clk)
	c := goodClaims(is)
	for _, tok := range []string{
		sign(t, jose.RS256, weak, "weak", "", c),
		sign(t, jose.RS256, rsaKey, "enc", "", c),
		sign(t, jose.RS256, rsaKey, "oct", "", c),
	} {
		if _, err := v.Verify(context.Background(), tok); kernel.ErrorCode(err) != kernel.CodeDenied || !strings.Contains(err.Error(), "not among the issuer's keys") {
			t.Errorf("filtered key: %v", err)
		}
	}
	// A token without kid uses the only key for its algorithm.
	is.addKey("rsa-1", rsaKey)
	clk.add(DefaultMinRefresh)
	if _, err := v.Verify(context.Background(), sign(t, jose.RS256, rsaKey, "", "", c)); err != nil {
		t.Fatalf("no kid, one key: %v", err)
	}
}

// A key set with nothing usable in it is unavailable, and the keys
// fetched before it keep verifying.
func TestKeySetWithoutUsableKeys(t *testing.T) {
	for _, body := range []string{`{}`, `{"keys":[]}`, `{"keys":null}`,
		`{"keys":[{"kty":"oct","kid":"rsa-1","k":"c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTEyMzQ"}]}`} {
		t.Run(body, func(t *testing.T) {
			is := newIssuer(t, "")
			is.addKey("rsa-1", rsaKey)
			clk := &clock{now: t0}
			v := newVerifier(t, is, clk)
			good := sign(t, jose.RS256, rsaKey, "rsa-1", "", goodClaims(is))
			if _, err := v.Verify(context.Background(), good); err != nil {
				t.Fatal(err)
			}
			is.mu.Lock()
			is.setBody = body
			is.mu.Unlock()
			clk.add(DefaultMinRefresh)
			_, err := v.Verify(context.Background(), sign(t, jose.RS256, rsaKey2, "rsa-2", "", goodClaims(is)))
			if kernel.ErrorCode(err) != kernel.CodeUnavailable || !strings.Contains(err.Error(), "no usable signing key") {
				t.Fatalf("a new kid against a set of no usable key: %v", err)
			}
			if _, err := v.Verify(context.Background(), good); err != nil {
				t.Fatalf("the cached key after a set of no usable key: %v", err)
			}
		})
	}
}

func TestDiscovery(t *testing.T) {
	t.Run("RFC 8414 for an issuer with a path", func(t *testing.T) {
		is := newIssuer(t, "/realms/acme")
		is.rfc8414 = true
		is.addKey("rsa-1", rsaKey)
		v := newVerifier(t, is, &clock{now: t0})
		if _, err := v.Verify(context.Background(), sign(t, jose.RS256, rsaKey, "rsa-1", "", goodClaims(is))); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a document naming another issuer", func(t *testing.T) {
		is := newIssuer(t, "")
		is.mdIssuer = "https://other.example"
		is.addKey("rsa-1", rsaKey)
		v := newVerifier(t, is, &clock{now: t0})
		_, err := v.Verify(context.Background(), sign(t, jose.RS256, rsaKey, "rsa-1", "", goodClaims(is)))
		if kernel.ErrorCode(err) != kernel.CodeUnavailable || !strings.Contains(err.Error(), `names the issuer "https://other.example"`) {
			t.Fatalf("err = %v", err)
		}
		if n := is.jwksFetch.Load(); n != 0 {
			t.Errorf("the key set was fetched %d times", n)
		}
	})
	for _, tt := range []struct {
		issuer string
		want   []string
	}{
		{"https://idp.example/realms/acme/", []string{
			"https://idp.example/.well-known/oauth-authorization-server/realms/acme",
			"https://idp.example/realms/acme/.well-known/openid-configuration"}},
		{"https://idp.example", []string{
			"https://idp.example/.well-known/oauth-authorization-server",
			"https://idp.example/.well-known/openid-configuration"}},
		{"https://idp.example/tenants/a%2Fb", []string{
			"https://idp.example/.well-known/oauth-authorization-server/tenants/a%2Fb",
			"https://idp.example/tenants/a%2Fb/.well-known/openid-configuration"}},
		{"https://idp.example/t/caf%C3%A9", []string{
			"https://idp.example/.well-known/oauth-authorization-server/t/caf%C3%A9",
			"https://idp.example/t/caf%C3%A9/.well-known/openid-configuration"}},
	} {
		if got := metadataURLs(tt.issuer); !slices.Equal(got, tt.want) {
			t.Errorf("metadata URLs of %s: %v, want %v", tt.issuer, got, tt.want)
		}
	}
}

func TestNewConfig(t *testing.T) {
	for _, tt := range []struct {
		cfg  Config
		want string
	}{
		{Config{Issuer: "http://idp.example", Audience: audience}, "must be an https URL"},
		{Config{Issuer: "https://idp.example?x=1", Audience: audience}, "has a query"},
		{Config{Issuer: "idp.example", Audience: audience}, "not an absolute URL"},
		{Config{Issuer: "https://idp.example"}, "no audience"},
		{Config{Issuer: "https://idp.example", Audience: audience, Skew: -time.Second}, "negative skew"},
	} {
		if _, err := New(tt.cfg); kernel.ErrorCode(err) != kernel.CodeInvalid || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.cfg, err, tt.want)
		}
	}
	for _, iss := range []string{"http://127.0.0.1:8080", "http://localhost/realms/x", "http://[::1]:9000", "https://idp.example/"} {
		if _, err := New(Config{Issuer: iss, Audience: audience}); err != nil {
			t.Errorf("%s: %v", iss, err)
		}
	}
}

func TestSameHostRedirects(t *testing.T) {
	parse := func(s string) *http.Request {
		r, err := http.NewRequest("GET", s, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	from := "https://idp.example.com/.well-known/openid-configuration"
	for _, tt := range []struct {
		to     string
		follow bool
	}{
		{"https://idp.example.com/realms/acme/.well-known/openid-configuration", true},
		{"https://IDP.example.com/keys", true},
		{"http://idp.example.com/.well-known/openid-configuration", false}, // down to http
		{"http://idp.example.com:443/keys", false},
		{"https://idp.example.com:8443/keys", false},
		{"https://evil.example/keys", false},
	} {
		err := sameHostRedirects(parse(tt.to), []*http.Request{parse(from)})
		if (err == nil) != tt.follow {
			t.Errorf("%s → %s: %v, want follow %v", from, tt.to, err, tt.follow)
		}
	}
	via := []*http.Request{parse(from), parse(from), parse(from), parse(from), parse(from)}
	if sameHostRedirects(parse(from), via) == nil {
		t.Error("a sixth redirect followed")
	}
}

// An https issuer's metadata may not send serve-http to a loopback http
// key set: that is only for an issuer on loopback http itself.
func TestJWKSURIScheme(t *testing.T) {
	keys := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"keys": []any{jose.JSONWebKey{Key: &rsaKey.PublicKey, KeyID: "rsa-1", Use: "sig"}}})
	}))
	t.Cleanup(keys.Close)
	var idp *httptest.Server
	idp = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"issuer": idp.URL, "jwks_uri": keys.URL + "/keys"})
	}))
	t.Cleanup(idp.Close)
	v, err := New(Config{Issuer: idp.URL, Audience: audience, HTTPClient: idp.Client(), Now: (&clock{now: t0}).Now, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Verify(context.Background(), sign(t, jose.RS256, rsaKey, "rsa-1", "", with(goodClaims(&issuer{url: idp.URL}), "iss", idp.URL)))
	if kernel.ErrorCode(err) != kernel.CodeUnavailable || !strings.Contains(err.Error(), "is http, and the issuer is https") {
		t.Fatalf("an https issuer's http jwks_uri: %v", err)
	}
}
