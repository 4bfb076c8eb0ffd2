package policy

import (
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/rukh-dev/rukh/kernel"
)

// httpAuth modes that accept an access token of the endpoint's identity
// provider: oauth only such tokens, rukh+oauth also Rukh's own.
const (
	HTTPAuthOAuth     = "oauth"
	HTTPAuthRukhOAuth = "rukh+oauth"
)

// OAuth defaults and bounds (docs/profile.md, the oauth block).
const (
	DefaultAgentClaim        = "client_id"
	DefaultShortLivedSeconds = 900
	MaxShortLivedSeconds     = 86400
	maxLevelScopes           = 32
	maxScopeBytes            = 256
	maxOAuthURLBytes         = 2048
)

// OAuth is an endpoint's identity provider, for httpAuth oauth and
// rukh+oauth: whose tokens it accepts, for which audience, who the agent
// is, which scopes each level needs and what counts as short-lived. The
// canonical profile keeps the optional members as the owner stated them;
// AgentClaimName and ShortLived give the effective values. An empty
// Audience is the endpoint's public URL, which only serve-http knows.
type OAuth struct {
	Issuer            string              `json:"issuer"`
	Audience          string              `json:"audience,omitempty"`
	AgentClaim        string              `json:"agentClaim,omitempty"`
	Scopes            map[string][]string `json:"scopes,omitempty"`
	ShortLivedSeconds int                 `json:"shortLivedSeconds,omitzero"`
}

type rawOAuth struct {
	Issuer            *string             `json:"issuer"`
	Audience          *string             `json:"audience"`
	AgentClaim        *string             `json:"agentClaim"`
	Scopes            map[string][]string `json:"scopes"`
	ShortLivedSeconds *int                `json:"shortLivedSeconds"`
}

// oauth checks the members only the wire form can tell apart (absent from
// empty or zero) and returns the block.
func (r *rawOAuth) oauth(path string) (*OAuth, error) {
	if r == nil {
		return nil, nil
	}
	if r.Issuer == nil {
		return nil, invalidAt(path, "missing member \"issuer\"")
	}
	for _, f := range []struct {
		member string
		v      *string
	}{{"issuer", r.Issuer}, {"audience", r.Audience}, {"agentClaim", r.AgentClaim}} {
		if f.v != nil && *f.v == "" {
			return nil, invalidAt(path+"/"+f.member, "empty "+f.member)
		}
	}
	o := &OAuth{Issuer: *r.Issuer, Audience: deref(r.Audience), AgentClaim: deref(r.AgentClaim), Scopes: r.Scopes}
	if r.ShortLivedSeconds != nil {
		if *r.ShortLivedSeconds < 1 {
			return nil, invalidAt(path+"/shortLivedSeconds", "shortLivedSeconds must be at least 1")
		}
		o.ShortLivedSeconds = *r.ShortLivedSeconds
	}
	return o, nil
}

// AgentClaimName is the claim that names the agent (default client_id).
func (o *OAuth) AgentClaimName() string {
	if o.AgentClaim == "" {
		return DefaultAgentClaim
	}
	return o.AgentClaim
}

// ShortLived is the longest lifetime of a short-lived token (default 900 s).
func (o *OAuth) ShortLived() time.Duration {
	s := o.ShortLivedSeconds
	if s == 0 {
		s = DefaultShortLivedSeconds
	}
	return time.Duration(s) * time.Second
}

// ScopesFor is every scope a token needs for level, sorted: standard's for
// standard, standard's and elevated's for elevated; nil for strict, which no
// identity provider's token reaches.
func (o *OAuth) ScopesFor(level string) []string {
	var levels []string
	switch level {
	case "", SecurityStandard:
		levels = []string{SecurityStandard}
	case SecurityElevated:
		levels = []string{SecurityStandard, SecurityElevated}
	default:
		return nil
	}
	set := map[string]bool{}
	for _, l := range levels {
		for _, s := range o.Scopes[l] {
			set[s] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// ScopesSupported is every scope any level lists, sorted: what the
// endpoint's protected resource metadata announces.
func (o *OAuth) ScopesSupported() []string {
	return o.ScopesFor(SecurityElevated)
}

func (o *OAuth) clone() *OAuth {
	if o == nil {
		return nil
	}
	c := *o
	if o.Scopes != nil {
		c.Scopes = make(map[string][]string, len(o.Scopes))
		for l, s := range o.Scopes {
			c.Scopes[l] = sortedCopy(s)
		}
	}
	return &c
}

// validateOAuth checks an endpoint's httpAuth against its oauth block: the
// block is required by the oauth modes and refused by the others.
func validateOAuth(path string, ep Endpoint) error {
	oauthMode := ep.HTTPAuth == HTTPAuthOAuth || ep.HTTPAuth == HTTPAuthRukhOAuth
	switch {
	case oauthMode && ep.OAuth == nil:
		return invalidAt(path, fmt.Sprintf("missing member \"oauth\": httpAuth %q needs the identity provider", ep.HTTPAuth)).
			WithHint(`add "oauth": {"issuer": "https://…"} to the endpoint`)
	case !oauthMode && ep.OAuth != nil:
		return invalidAt(path+"/oauth", fmt.Sprintf("oauth is only for httpAuth %q or %q, not %q", HTTPAuthOAuth, HTTPAuthRukhOAuth, ep.HTTPAuthMode())).
			WithHint(fmt.Sprintf(`set "httpAuth": %q, or remove the oauth member`, HTTPAuthOAuth))
	case ep.OAuth == nil:
		return nil
	}
	return ep.OAuth.validate(path + "/oauth")
}

func (o *OAuth) validate(path string) error {
	if err := checkIssuer(o.Issuer); err != nil {
		return invalidAt(path+"/issuer", err.Error())
	}
	if o.Audience != "" {
		if err := checkAudience(o.Audience); err != nil {
			return invalidAt(path+"/audience", err.Error())
		}
	}
	if o.AgentClaim != "" && !claimName(o.AgentClaim) {
		return invalidAt(path+"/agentClaim", fmt.Sprintf("invalid agentClaim %q: want [A-Za-z0-9_.:-]{1,64}", o.AgentClaim))
	}
	if o.ShortLivedSeconds < 0 || o.ShortLivedSeconds > MaxShortLivedSeconds {
		return invalidAt(path+"/shortLivedSeconds", fmt.Sprintf("shortLivedSeconds %d is not between 1 and %d", o.ShortLivedSeconds, MaxShortLivedSeconds))
	}
	for _, level := range slices.Sorted(maps.Keys(o.Scopes)) {
		lp := path + "/scopes/" + kernel.PointerToken(level)
		switch level {
		case SecurityStandard, SecurityElevated:
		case SecurityStrict:
			return invalidAt(lp, "strict takes no scopes: a strict command needs a Rukh one-time token").
				WithHint(fmt.Sprintf("use httpAuth %q and give the agent a one-time token ('rukh agent token NAME --once')", HTTPAuthRukhOAuth))
		default:
			return invalidAt(lp, fmt.Sprintf("unknown level %q: want standard or elevated", level))
		}
		list := o.Scopes[level]
		if len(list) > maxLevelScopes {
			return invalidAt(lp, fmt.Sprintf("%d scopes, over the limit of %d", len(list), maxLevelScopes))
		}
		seen := map[string]bool{}
		for i, s := range list {
			sp := fmt.Sprintf("%s/%d", lp, i)
			if s == "" || len(s) > maxScopeBytes || strings.ContainsFunc(s, notScopeChar) {
				return invalidAt(sp, fmt.Sprintf("invalid scope %q: want 1 to %d printable ASCII characters other than space, \" and \\", s, maxScopeBytes))
			}
			if seen[s] {
				return invalidAt(sp, fmt.Sprintf("duplicate scope %q", s))
			}
			seen[s] = true
		}
	}
	return nil
}

// claimName: [A-Za-z0-9_.:-]{1,64}.
func claimName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', strings.IndexByte("_.:-", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// notScopeChar is outside an RFC 6749 scope token (%x21 / %x23-5B / %x5D-7E).
func notScopeChar(r rune) bool {
	return r < 0x21 || r > 0x7e || r == '"' || r == '\\'
}

// checkIssuer: an absolute https URL without query or fragment; http only
// on a loopback host, for tests and an identity provider on this machine.
func checkIssuer(s string) error {
	u, err := checkURL(s, "issuer")
	if err != nil {
		return err
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && LoopbackHost(u.Hostname()):
	default:
		return fmt.Errorf("issuer %q must be an https URL (http only on a loopback host)", s)
	}
	if u.RawQuery != "" || u.ForceQuery {
		return fmt.Errorf("issuer %q has a query", s)
	}
	return nil
}

// checkAudience: an absolute URI without fragment (RFC 8707's resource);
// an http(s) one names a host.
func checkAudience(s string) error {
	u, err := checkURL(s, "audience")
	if err != nil {
		return err
	}
	if (u.Scheme == "http" || u.Scheme == "https") && u.Host == "" {
		return fmt.Errorf("audience %q has no host", s)
	}
	return nil
}

func checkURL(s, what string) (*url.URL, error) {
	if len(s) > maxOAuthURLBytes {
		return nil, fmt.Errorf("%s is longer than %d bytes", what, maxOAuthURLBytes)
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r <= 0x20 || r >= 0x7f }) {
		return nil, fmt.Errorf("%s %q has a space, a control or a non-ASCII character", what, s)
	}
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() {
		return nil, fmt.Errorf("%s %q is not an absolute URL", what, s)
	}
	if u.Fragment != "" || strings.Contains(s, "#") {
		return nil, fmt.Errorf("%s %q has a fragment", what, s)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%s %q has user information", what, s)
	}
	if (u.Scheme == "http" || u.Scheme == "https") && u.Host == "" {
		return nil, fmt.Errorf("%s %q has no host", what, s)
	}
	return u, nil
}

// LoopbackHost reports whether host (without port) is this machine by
// name or address: localhost, 127.0.0.0/8 or ::1.
func LoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ScopeError is a refusal for missing scopes: Missing names them, sorted,
// and Msg says it for the client (the 403's error_description).
type ScopeError struct {
	Missing []string
	Msg     string
}

func (e *ScopeError) Error() string {
	return ErrInsufficientScope.Error() + ": missing " + strings.Join(e.Missing, " ")
}

func (e *ScopeError) Unwrap() error { return ErrInsufficientScope }

// AuthorizeOAuth is Authorize for an identity provider's token: standard
// needs the scopes the endpoint lists for standard; elevated those and
// elevated's, and a short-lived token; strict is always refused, since it
// needs a Rukh one-time token. Refusals are CodeDenied and wrap
// ErrInsufficientScope; a refusal for missing scopes wraps a *ScopeError.
func AuthorizeOAuth(o *OAuth, level string, cred kernel.Credential, command string) error {
	if o == nil {
		return kernel.Errorf(kernel.CodeInternal, "endpoint %s has no oauth policy", cred.Endpoint)
	}
	if cred.Kind != kernel.CredentialOAuth {
		return kernel.Errorf(kernel.CodeInternal, "AuthorizeOAuth of a %q credential", cred.Kind)
	}
	if cred.Issuer != o.Issuer {
		// A token admitted under another revision's identity provider.
		return kernel.Errorf(kernel.CodeDenied, "the token's issuer %s is not endpoint %s's identity provider %s", cred.Issuer, cred.Endpoint, o.Issuer).
			WithHint("ask " + o.Issuer + " for a token")
	}
	switch level {
	case "", SecurityStandard, SecurityElevated:
	case SecurityStrict:
		return kernel.Errorf(kernel.CodeDenied, "%s is strict: it needs a Rukh one-time token, not an identity provider's token", command).
			WithHint(fmt.Sprintf("the owner sets httpAuth %q on endpoint %s and mints one with 'rukh agent token NAME --once --command %s'", HTTPAuthRukhOAuth, cred.Endpoint, command)).
			Wrap(ErrInsufficientScope)
	default:
		return kernel.Errorf(kernel.CodeInternal, "unknown security level %q", level)
	}
	if level == "" {
		level = SecurityStandard
	}
	var missing []string
	for _, s := range o.ScopesFor(level) {
		if !slices.Contains(cred.Scopes, s) {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		word := "scope"
		if len(missing) > 1 {
			word = "scopes"
		}
		msg := fmt.Sprintf("%s is %s: the token lacks the %s %s", command, level, word, strings.Join(missing, ", "))
		return kernel.Errorf(kernel.CodeDenied, "%s", msg).
			WithHint(fmt.Sprintf("ask the identity provider for a token with scope %q", strings.Join(o.ScopesFor(level), " "))).
			Wrap(&ScopeError{Missing: missing, Msg: msg})
	}
	if level == SecurityElevated && !cred.ShortLived {
		return kernel.Errorf(kernel.CodeDenied, "%s is elevated: it needs a short-lived token (a lifetime of at most %d seconds, with iat)", command, int(o.ShortLived()/time.Second)).
			WithHint("configure the identity provider to issue shorter-lived access tokens to this client").
			Wrap(ErrInsufficientScope)
	}
	return nil
}

// oauthWarnings names strict commands an oauth-only endpoint publishes:
// over HTTP nothing reaches them, since strict needs a Rukh one-time token.
func oauthWarnings(epName string, ep Endpoint, tools []Tool) []string {
	if ep.HTTPAuth != HTTPAuthOAuth || !slices.Contains(ep.withDefaults().Transports, TransportHTTP) {
		return nil
	}
	var strict []string
	for _, t := range tools {
		if t.Level() == SecurityStrict {
			strict = append(strict, t.Command)
		}
	}
	if len(strict) == 0 {
		return nil
	}
	slices.Sort(strict)
	return []string{fmt.Sprintf("endpoint %q: %s %s strict, which needs a Rukh one-time token, but httpAuth %q accepts only the identity provider's tokens: no HTTP caller can run %s (use httpAuth %q)",
		epName, strings.Join(strict, ", "), isAre(len(strict)), HTTPAuthOAuth, itThem(len(strict)), HTTPAuthRukhOAuth)}
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func itThem(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
