package mcphttp

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
)

// MetadataPrefix is where an OAuth endpoint's protected resource metadata
// lives: MetadataPrefix + PathPrefix + namespace + "/" + endpoint, the
// well-known segment before the resource's path.
const MetadataPrefix = "/.well-known/oauth-protected-resource"

// oauthRetryAfter is the Retry-After of a 503 while the endpoint's OAuth
// settings cannot be built, or of a verifier that cannot say when it will
// next ask its identity provider.
const oauthRetryAfter = 5 * time.Second

// TokenVerifier checks a bearer token issued by the endpoint's identity
// provider (package oauth's Verifier). A CodeDenied error is a 401
// invalid_token whose message the client may read; CodeUnavailable a 503.
type TokenVerifier interface {
	Verify(ctx context.Context, token string) (kernel.Credential, error)
}

// retryAfterer is a TokenVerifier that knows when it will next ask its
// identity provider, which is when a retry can be answered differently.
type retryAfterer interface {
	RetryAfter() time.Duration
}

// OAuthEndpoint is what an endpoint with httpAuth oauth or rukh+oauth
// checks its callers' tokens with, and tells clients about itself.
type OAuthEndpoint struct {
	Verifier TokenVerifier
	Policy   *policy.OAuth // the issuer, and the scopes each level needs
	// Resource is the endpoint's resource URL, the audience its tokens
	// must name.
	Resource string
	// MetadataURL is where its protected resource metadata is served:
	// PUBLIC + MetadataPrefix + PathPrefix + namespace + "/" + endpoint.
	MetadataURL string
	// AcceptRukh (httpAuth rukh+oauth): a rukh_… token goes to
	// Config.Credentials, as on a bearer endpoint.
	AcceptRukh bool
}

// endpointAuth is how an endpoint authenticates now: what the active
// revision's profile says (Handler.SetAuth).
type endpointAuth struct {
	httpAuth string
	oauth    *OAuthEndpoint // nil unless httpAuth is oauth or rukh+oauth
}

func isOAuth(httpAuth string) bool {
	return httpAuth == policy.HTTPAuthOAuth || httpAuth == policy.HTTPAuthRukhOAuth
}

// SetAuth changes how the endpoint named endpoint authenticates its next
// requests, as a newly published revision says; the requests in flight
// keep what they were admitted with. o is nil unless httpAuth is oauth or
// rukh+oauth; an OAuth endpoint without it answers 503 until it has one.
// It reports whether the handler serves the endpoint.
func (h *Handler) SetAuth(endpoint, httpAuth string, o *OAuthEndpoint) bool {
	for _, ep := range h.eps {
		if ep.cfg.Core.Endpoint == endpoint {
			ep.setAuth(httpAuth, o)
			return true
		}
	}
	return false
}

func (ep *endpoint) setAuth(httpAuth string, o *OAuthEndpoint) {
	if !isOAuth(httpAuth) {
		o = nil
	}
	ep.auth.Store(&endpointAuth{httpAuth: httpAuth, oauth: o})
}

// serveMetadata answers an OAuth endpoint's protected resource metadata:
// the resource, its identity provider and the scopes its levels need. Any
// origin may read it (hosts in browsers fetch it); it holds nothing secret.
func (h *Handler) serveMetadata(w http.ResponseWriter, r *http.Request) {
	ep := h.eps[r.PathValue("namespace")+"/"+r.PathValue("endpoint")]
	var o *OAuthEndpoint
	if ep != nil {
		o = ep.auth.Load().oauth
	}
	if o == nil || o.Policy == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Access-Control-Allow-Origin", "*")
	if r.Method == http.MethodOptions {
		w.Header().Set("Access-Control-Allow-Methods", "GET")
		w.Header().Set("Access-Control-Allow-Headers", "*")
		w.Header().Set("Access-Control-Max-Age", "300")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	doc := struct {
		Resource               string   `json:"resource"`
		AuthorizationServers   []string `json:"authorization_servers"`
		ScopesSupported        []string `json:"scopes_supported,omitempty"`
		BearerMethodsSupported []string `json:"bearer_methods_supported"`
		ResourceName           string   `json:"resource_name"`
	}{
		Resource:               o.Resource,
		AuthorizationServers:   []string{o.Policy.Issuer},
		ScopesSupported:        o.Policy.ScopesSupported(),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "rukh " + ep.cfg.Namespace + "/" + ep.cfg.Core.Endpoint,
	}
	data, err := json.Marshal(doc)
	if err != nil {
		plain(w, http.StatusInternalServerError, "internal error")
		return
	}
	w.Header().Set("Cache-Control", "public, max-age=300")
	writeJSON(w, http.StatusOK, data)
}

// isMetadata reports whether r reads protected resource metadata, which
// any origin may.
func isMetadata(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions) &&
		strings.HasPrefix(r.URL.Path, MetadataPrefix+"/")
}

// levelScopes are the scopes a call at level needs (policy.OAuth.ScopesFor).
func levelScopes(p *policy.OAuth, level string) []string {
	if p == nil {
		return nil
	}
	return p.ScopesFor(level)
}

// scopeRefusal is an oauth credential's refusal for its level, carrying
// the scopes the level needs for the 403's challenge.
type scopeRefusal struct {
	err   error
	scope []string
}

func (e *scopeRefusal) Error() string { return e.err.Error() }
func (e *scopeRefusal) Unwrap() error { return e.err }

// authorizeOAuth is authorize for an oauth credential, against the
// endpoint's current OAuth policy.
func authorizeOAuth(o *OAuthEndpoint, cred kernel.Credential, command, level string) error {
	if o == nil || o.Policy == nil {
		return errNoOAuth
	}
	err := policy.AuthorizeOAuth(o.Policy, level, cred, command)
	if err == nil {
		return nil
	}
	if !errors.Is(err, policy.ErrInsufficientScope) {
		return err
	}
	// Only missing scopes are cured by asking for scopes: a token not
	// short-lived enough (or a strict command) gets a challenge without
	// any, so a client does not ask for the same ones again.
	var se *policy.ScopeError
	if !errors.As(err, &se) {
		return &scopeRefusal{err: err}
	}
	scope := levelScopes(o.Policy, level)
	if len(scope) == 0 {
		scope = se.Missing
	}
	return &scopeRefusal{err: err, scope: scope}
}

var errNoOAuth = errors.New("this endpoint no longer accepts tokens of an identity provider")

// challenge is the WWW-Authenticate value of an OAuth endpoint's 401 or
// 403: where its metadata is, the scopes wanted and, for a refused token,
// why.
func challenge(o *OAuthEndpoint, errCode string, scope []string, desc string) string {
	var b strings.Builder
	b.WriteString("Bearer ")
	param := func(name, value string) {
		if b.Len() > len("Bearer ") {
			b.WriteString(", ")
		}
		b.WriteString(name + `="` + value + `"`)
	}
	sc := quotable(strings.Join(scope, " "))
	if errCode == "insufficient_scope" {
		param("error", errCode)
		if sc != "" {
			param("scope", sc)
		}
		param("resource_metadata", quotable(o.MetadataURL))
	} else {
		param("resource_metadata", quotable(o.MetadataURL))
		if sc != "" {
			param("scope", sc)
		}
		if errCode != "" {
			param("error", errCode)
		}
	}
	if d := quotable(desc); errCode != "" && d != "" {
		param("error_description", d)
	}
	return b.String()
}

// quotable keeps what a challenge's quoted string may hold (RFC 6750:
// printable ASCII but '"' and '\'), at most 256 bytes of it.
func quotable(s string) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < 256; i++ {
		switch c := s[i]; {
		case c == '"':
			b.WriteByte('\'')
		case c == '\\':
			b.WriteByte('/')
		case c == '\n' || c == '\t':
			b.WriteByte(' ')
		case c >= 0x20 && c <= 0x7e:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// message is what err says to the client: the first kernel error's
// message, without what it wraps.
func message(err error) string {
	var ke *kernel.Error
	if errors.As(err, &ke) && ke.Message != "" {
		return ke.Message
	}
	return err.Error()
}

// unauthorizedOAuth answers an OAuth endpoint's 401: the challenge names
// its metadata and the standard scopes; a refused token adds
// invalid_token and why.
func unauthorizedOAuth(w http.ResponseWriter, o *OAuthEndpoint, refused error, msg string) {
	var p *policy.OAuth
	if o != nil {
		p = o.Policy
	}
	code, desc := "", ""
	if refused != nil {
		code, desc = "invalid_token", message(refused)
	}
	w.Header().Set("WWW-Authenticate", challenge(o, code, levelScopes(p, policy.SecurityStandard), desc))
	plain(w, http.StatusUnauthorized, msg)
}

// forbiddenOAuth answers the 403 of a valid token too weak for the call.
func forbiddenOAuth(w http.ResponseWriter, o *OAuthEndpoint, scope []string, refused error, msg string) {
	w.Header().Set("WWW-Authenticate", challenge(o, "insufficient_scope", scope, message(refused)))
	plain(w, http.StatusForbidden, msg)
}

// oauthUnavailable answers 503 while the identity provider (or the
// endpoint's OAuth settings) cannot decide a token.
func oauthUnavailable(w http.ResponseWriter, after time.Duration, msg string) {
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(after.Seconds())))))
	plain(w, http.StatusServiceUnavailable, msg)
}

// verify authenticates a token of the endpoint's identity provider.
func (h *Handler) verify(w http.ResponseWriter, r *http.Request, ep *endpoint, o *OAuthEndpoint, token string) (*kernel.Credential, bool) {
	name := ep.cfg.Core.Endpoint
	if o.Verifier == nil || o.Policy == nil {
		h.cfg.Logf("refused a request on endpoint %q: its OAuth settings are not loaded", name)
		h.observe(name, "unavailable")
		oauthUnavailable(w, oauthRetryAfter, "the endpoint's identity provider is not configured yet; retry")
		return nil, false
	}
	cred, err := o.Verifier.Verify(r.Context(), token)
	if err == nil && cred.Kind != kernel.CredentialOAuth {
		err = kernel.Errorf(kernel.CodeInternal, "the verifier gave a %q credential", cred.Kind)
	}
	switch {
	case err == nil:
	case kernel.ErrorCode(err) == kernel.CodeUnavailable:
		// The identity provider could not say: the token may be good.
		h.cfg.Logf("refused a request on endpoint %q: %v", name, err)
		h.observe(name, "unavailable")
		after := oauthRetryAfter
		if ra, ok := o.Verifier.(retryAfterer); ok {
			after = ra.RetryAfter()
		}
		oauthUnavailable(w, after, "the identity provider "+strconv.Quote(o.Policy.Issuer)+" cannot be reached; retry")
		return nil, false
	default:
		h.cfg.Logf("refused a request on endpoint %q: an OAuth token: %v", name, err)
		h.observe(name, "auth")
		unauthorizedOAuth(w, o, err, "unauthorized: "+message(err))
		return nil, false
	}
	cred.Endpoint = name // the audience check made it this endpoint's
	if err := standardScopes(o.Policy, cred); err != nil {
		// Every request needs the standard scopes, not only a call: a
		// token without them lists nothing either.
		h.cfg.Logf("refused a request on endpoint %q by %s: %v", name, logID(&cred), err)
		h.observe(name, "scope")
		if h.cfg.Refused != nil {
			h.cfg.Refused(name, headerTool(r), "", &cred, err)
		}
		msg := "forbidden: " + err.Error()
		if hint := kernel.ErrorHint(err); hint != "" {
			msg += "\nhint: " + hint
		}
		forbiddenOAuth(w, o, levelScopes(o.Policy, policy.SecurityStandard), err, msg)
		return nil, false
	}
	return &cred, true
}

// standardScopes refuses a credential that lacks a scope the endpoint's
// standard level lists, whatever the request.
func standardScopes(p *policy.OAuth, cred kernel.Credential) error {
	var missing []string
	for _, s := range levelScopes(p, policy.SecurityStandard) {
		if !slices.Contains(cred.Scopes, s) {
			missing = append(missing, s)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	msg := "the token lacks the scope " + strings.Join(missing, " ") + " every request of this endpoint needs"
	return kernel.Errorf(kernel.CodeDenied, "%s", msg).
		WithHint("ask the identity provider for a token with scope " + strconv.Quote(strings.Join(levelScopes(p, policy.SecurityStandard), " "))).
		Wrap(&policy.ScopeError{Missing: missing, Msg: msg})
}

// sessionKey is the agent's session of an endpoint: an identity
// provider's agent never shares one with a Rukh agent of the same name.
func sessionKey(cred *kernel.Credential) string {
	if cred.Kind == kernel.CredentialOAuth {
		return "oauth\x00" + cred.Issuer + "\x00" + cred.Agent
	}
	return cred.Agent
}
