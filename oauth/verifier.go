package oauth

import (
	"context"
	"crypto/sha256"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/rukh-dev/rukh/kernel"
)

// Defaults and bounds.
const (
	DefaultSkew       = 60 * time.Second
	DefaultMinRefresh = 30 * time.Second
	DefaultShortLived = 900 * time.Second
	DefaultAgentClaim = "client_id"

	// MaxTokenBytes: a larger bearer token is refused without parsing.
	MaxTokenBytes = 16 << 10
	// maxDocumentBytes bounds a discovery document and a key set.
	maxDocumentBytes = 1 << 20
	// maxKeys bounds the keys of a key set.
	maxKeys = 100
	// maxAgentChars bounds the agent claim's value.
	maxAgentChars = 128
	// maxSubjectChars bounds sub, as OpenID Connect does.
	maxSubjectChars = 255

	httpTimeout = 10 * time.Second
)

// Config is what a Verifier checks tokens against. Issuer and Audience are
// required; zero durations and nil seams take their defaults.
type Config struct {
	Issuer, Audience, AgentClaim string
	ShortLived                   time.Duration    // a token living at most this is short-lived; default 900 s
	HTTPClient                   *http.Client     // nil: a client with a 10 s timeout, no redirects to other hosts
	Now                          func() time.Time // clock seam
	Skew                         time.Duration    // default 60 s, for exp, nbf and iat
	MinRefresh                   time.Duration    // default 30 s: an unknown kid refetches the key set at most this often
	Logf                         func(string, ...any)
}

// Verifier checks bearer tokens of one issuer for one audience. It is safe
// for concurrent use. It contacts the issuer lazily, at the first token, so
// serve-http starts while the identity provider is down; it caches the
// issuer's metadata and keys for its life.
type Verifier struct {
	cfg    Config
	client *http.Client

	mu          sync.Mutex
	jwksURI     string        // from discovery; "" until discovered
	keys        keySet        // the last key set fetched
	fetched     time.Time     // when it was fetched
	lastAttempt time.Time     // of the last discovery or key set fetch
	lastErr     error         // its failure; nil when it succeeded
	inflight    chan struct{} // open while a fetch runs; waiters share it
}

// New checks cfg and returns a Verifier. It does not contact the issuer.
func New(cfg Config) (*Verifier, error) {
	if err := checkIssuer(cfg.Issuer); err != nil {
		return nil, kernel.Errorf(kernel.CodeInvalid, "oauth: %v", err)
	}
	if cfg.Audience == "" {
		return nil, kernel.Errorf(kernel.CodeInvalid, "oauth: no audience for issuer %s", cfg.Issuer)
	}
	if cfg.AgentClaim == "" {
		cfg.AgentClaim = DefaultAgentClaim
	}
	for _, d := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{{"shortLived", &cfg.ShortLived, DefaultShortLived}, {"skew", &cfg.Skew, DefaultSkew}, {"minRefresh", &cfg.MinRefresh, DefaultMinRefresh}} {
		if *d.v < 0 {
			return nil, kernel.Errorf(kernel.CodeInvalid, "oauth: negative %s %s", d.name, *d.v)
		}
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: httpTimeout, CheckRedirect: sameHostRedirects}
	}
	return &Verifier{cfg: cfg, client: client}, nil
}

// Issuer is the issuer the Verifier accepts tokens of.
func (v *Verifier) Issuer() string { return v.cfg.Issuer }

// RetryAfter is how long until the Verifier may contact the issuer again
// (at least a second): the Retry-After of a CodeUnavailable answer.
func (v *Verifier) RetryAfter() time.Duration {
	v.mu.Lock()
	defer v.mu.Unlock()
	d := v.lastAttempt.Add(v.cfg.MinRefresh).Sub(v.cfg.Now())
	if d < time.Second {
		return time.Second
	}
	return d.Round(time.Second)
}

// Verify checks a bearer token and returns the credential it establishes;
// the caller sets its Endpoint. Errors are kernel errors: CodeDenied for a
// token that fails a check (the message, safe to show the client, says
// which; never the token), CodeUnavailable when the issuer's metadata or
// keys cannot be fetched and no cached key decides. A token is never
// accepted unverified, nor refused as invalid because the issuer is down.
func (v *Verifier) Verify(ctx context.Context, token string) (kernel.Credential, error) {
	if len(token) > MaxTokenBytes {
		return kernel.Credential{}, denied("the token is larger than %d bytes", MaxTokenBytes)
	}
	h, err := parseHeader(token)
	if err != nil {
		return kernel.Credential{}, err
	}
	key, err := v.key(ctx, h)
	if err != nil {
		return kernel.Credential{}, err
	}
	payload, err := h.jws.Verify(key.Key)
	if err != nil {
		return kernel.Credential{}, denied("the token's signature does not verify with the issuer's key %q", key.KeyID)
	}
	c, err := v.claims(payload)
	if err != nil {
		return kernel.Credential{}, err
	}
	c.Kind = kernel.CredentialOAuth
	c.Hash = sha256.Sum256([]byte(token))
	return c, nil
}

func denied(format string, args ...any) *kernel.Error {
	return kernel.Errorf(kernel.CodeDenied, format, args...)
}

// sameHostRedirects follows a redirect only to the same scheme and host
// (never from https down to http), at most 5.
func sameHostRedirects(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return http.ErrUseLastResponse
	}
	if req.URL.Scheme != via[0].URL.Scheme || !strings.EqualFold(req.URL.Host, via[0].URL.Host) {
		return http.ErrUseLastResponse
	}
	return nil
}

// checkIssuer: an absolute https URL without query or fragment; http only
// on a loopback host. The profile checks the same (policy).
func checkIssuer(s string) error {
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return errorf("issuer %q is not an absolute URL", s)
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(s, "#") || u.User != nil {
		return errorf("issuer %q has a query, a fragment or user information", s)
	}
	return checkFetchURL(u, "issuer")
}

// checkFetchURL: https, or http on a loopback host.
func checkFetchURL(u *url.URL, what string) error {
	switch {
	case u.Scheme == "https" && u.Host != "":
		return nil
	case u.Scheme == "http" && loopback(u.Hostname()):
		return nil
	}
	return errorf("%s %q must be an https URL (http only on a loopback host)", what, u.Redacted())
}
