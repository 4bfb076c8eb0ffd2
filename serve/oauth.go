package serve

import (
	"context"
	"sync"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcphttp"
	"github.com/rukh-dev/rukh/oauth"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
)

// verifierKey is what makes two endpoints' verifiers one: the same
// identity provider checking tokens by the same rules.
type verifierKey struct {
	issuer, audience, agentClaim string
	shortLived                   time.Duration
}

// oauthVerifiers are serve-http's token verifiers, one per distinct
// verifierKey, kept across republishes while a revision still uses them:
// an unchanged oauth block keeps its verifier, and so its cached keys.
type oauthVerifiers struct {
	public string // the base of resource and metadata URLs (--public-url)
	// make builds a verifier (package oauth's, a test's).
	make func(k verifierKey) (mcphttp.TokenVerifier, error)

	mu      sync.Mutex
	m       map[verifierKey]mcphttp.TokenVerifier
	current map[string]verifierKey // by endpoint: the verifier it is served with
}

func newOAuthVerifiers(public string, mk func(verifierKey) (mcphttp.TokenVerifier, error)) *oauthVerifiers {
	return &oauthVerifiers{public: public, make: mk, m: map[verifierKey]mcphttp.TokenVerifier{}, current: map[string]verifierKey{}}
}

// endpoint is what mcphttp checks l's identity provider tokens with, nil
// unless l's httpAuth is oauth or rukh+oauth. namespace is the one the
// server routes the endpoint by (its launch binding's), and the key is the
// verifier's.
func (vs *oauthVerifiers) endpoint(namespace string, l *policy.Launch) (*mcphttp.OAuthEndpoint, verifierKey, error) {
	if l.OAuth == nil || (l.HTTPAuth != policy.HTTPAuthOAuth && l.HTTPAuth != policy.HTTPAuthRukhOAuth) {
		return nil, verifierKey{}, nil
	}
	p := EndpointPath(namespace, l.Endpoint)
	resource := l.OAuth.Audience
	if resource == "" {
		resource = vs.public + p
	}
	k := verifierKey{issuer: l.OAuth.Issuer, audience: resource, agentClaim: l.OAuth.AgentClaimName(), shortLived: l.OAuth.ShortLived()}
	vs.mu.Lock()
	defer vs.mu.Unlock()
	v := vs.m[k]
	if v == nil {
		var err error
		if v, err = vs.make(k); err != nil {
			return nil, k, err
		}
		vs.m[k] = v
	}
	return &mcphttp.OAuthEndpoint{Verifier: v, Policy: l.OAuth, Resource: resource,
		MetadataURL: vs.public + mcphttp.MetadataPrefix + p, AcceptRukh: l.HTTPAuth == policy.HTTPAuthRukhOAuth}, k, nil
}

// retain drops the verifiers no served endpoint uses any more.
func (vs *oauthVerifiers) retain(used map[verifierKey]bool) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	for k := range vs.m {
		if !used[k] {
			delete(vs.m, k)
		}
	}
}

// authSetter is mcphttp.Handler's SetAuth.
type authSetter interface {
	SetAuth(endpoint, httpAuth string, o *mcphttp.OAuthEndpoint) bool
}

// applyAuth sets each served endpoint's authentication as launches (the
// active revision's, by endpoint) have it. An endpoint the revision drops
// or no longer serves on http keeps what it had: the core refuses that
// revision's calls anyway. One whose OAuth settings cannot be built gets
// none, which mcphttp answers 503 until a revision fixes it; the first
// such error is returned.
func (vs *oauthVerifiers) applyAuth(h authSetter, eps []mcphttp.Endpoint, launches map[string]*policy.Launch) error {
	var first error
	for _, e := range eps {
		name := e.Core.Endpoint
		l := launches[name]
		if l == nil || !l.Serves(policy.TransportHTTP) {
			continue
		}
		o, k, err := vs.endpoint(e.Namespace, l)
		vs.mu.Lock()
		delete(vs.current, name)
		if o != nil {
			vs.current[name] = k
		}
		vs.mu.Unlock()
		if err != nil && first == nil {
			first = kernel.Errorf(kernel.CodeInvalid, "endpoint %q: its oauth settings", name).Wrap(err)
		}
		h.SetAuth(name, l.HTTPAuth, o)
	}
	vs.mu.Lock()
	used := map[verifierKey]bool{}
	for _, k := range vs.current {
		used[k] = true
	}
	vs.mu.Unlock()
	vs.retain(used)
	return first
}

// launchesOf reads the launch binding of each endpoint of the active
// revision; nil when nothing is published.
func (p *process) launchesOf() (map[string]*policy.Launch, error) {
	out := map[string]*policy.Launch{}
	published, err := p.h.ViewActive(func(ix *store.Index) error {
		for _, e := range ix.Endpoints() {
			l, err := policy.LaunchOf(ix.Profile(), e.Name)
			if err != nil {
				return err
			}
			if l != nil {
				out[e.Name] = l
			}
		}
		return nil
	})
	if err != nil || !published {
		return nil, err
	}
	return out, nil
}

// newTokenVerifier is package oauth's verifier for k.
func newTokenVerifier(k verifierKey, minRefresh time.Duration, logf func(string, ...any)) (mcphttp.TokenVerifier, error) {
	return oauth.New(oauth.Config{Issuer: k.issuer, Audience: k.audience, AgentClaim: k.agentClaim, ShortLived: k.shortLived, MinRefresh: minRefresh, Logf: logf})
}

// watchAuth applies each newly published revision's httpAuth and oauth
// blocks to the served endpoints until ctx ends.
func (p *process) watchAuth(ctx context.Context, vs *oauthVerifiers, h authSetter, eps []mcphttp.Endpoint) {
	p.h.Store.WatchActive(ctx, func(uint64) {
		applyRetrying(ctx, p.launchesOf, func(launches map[string]*policy.Launch) {
			if err := vs.applyAuth(h, eps, launches); err != nil {
				p.logf("%v; its identity provider's tokens get 503 until a revision fixes it", err)
			}
		}, p.logf, authRetryFirst, authRetryMax)
	})
}

// Between failed reads of the published endpoints' authentication.
const (
	authRetryFirst = 100 * time.Millisecond
	authRetryMax   = 5 * time.Second
)

// applyRetrying reads the active revision's launch bindings and applies
// them, retrying a failed read with a growing wait until one succeeds or
// ctx ends: a read that fails once must not leave a newly published
// httpAuth unapplied until the next publish. Nothing published applies
// nothing.
func applyRetrying(ctx context.Context, read func() (map[string]*policy.Launch, error), apply func(map[string]*policy.Launch), logf func(string, ...any), wait, most time.Duration) {
	for {
		launches, err := read()
		if err == nil {
			if launches != nil {
				apply(launches)
			}
			return
		}
		logf("reading the published endpoints' authentication: %v; retrying in %s", err, wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, most)
	}
}
