package oauth

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
)

// algorithms are the accepted signature algorithms: asymmetric only, so
// neither none nor an HMAC keyed with a public key can pass.
var algorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

type header struct {
	alg jose.SignatureAlgorithm
	kid string
	jws *jose.JSONWebSignature
}

// parseHeader reads a compact JWS: its protected header must name an
// accepted algorithm and, with typ, a JWT.
func parseHeader(token string) (header, error) {
	switch strings.Count(token, ".") {
	case 2:
	case 4:
		return header{}, denied("the token is encrypted (JWE): only signed tokens are accepted")
	default:
		return header{}, denied("the token is not a JWT")
	}
	seg, _, _ := strings.Cut(token, ".")
	raw, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return header{}, denied("the token's header is not base64url")
	}
	var h struct {
		Alg  string   `json:"alg"`
		Kid  string   `json:"kid"`
		Typ  string   `json:"typ"`
		Crit []string `json:"crit"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return header{}, denied("the token's header is not a JSON object of strings")
	}
	if h.Crit != nil {
		// An access token needs no header extension; one it says must be
		// understood is refused by name, not as a bad signature.
		return header{}, denied("the token's header names critical extensions (crit %q) this server does not understand", printable(strings.Join(h.Crit, ",")))
	}
	alg := jose.SignatureAlgorithm(h.Alg)
	if !slices.Contains(algorithms, alg) {
		return header{}, denied("the token's algorithm %q is not accepted: want one of RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA", printable(h.Alg))
	}
	if h.Typ != "" {
		switch strings.ToLower(strings.TrimPrefix(strings.ToLower(h.Typ), "application/")) {
		case "at+jwt", "jwt":
		default:
			return header{}, denied("the token's type %q is not a JWT access token", printable(h.Typ))
		}
	}
	jws, err := jose.ParseSignedCompact(token, []jose.SignatureAlgorithm{alg})
	if err != nil || len(jws.Signatures) != 1 {
		return header{}, denied("the token is not a signed JWT")
	}
	return header{alg: alg, kid: h.Kid, jws: jws}, nil
}

// claims checks the verified payload and returns the credential it names.
func (v *Verifier) claims(payload []byte) (kernel.Credential, error) {
	var m map[string]jsontext.Value
	if err := json.Unmarshal(payload, &m); err != nil {
		return kernel.Credential{}, denied("the token's claims are not a JSON object")
	}
	str := func(name string) (string, bool, error) {
		raw, ok := m[name]
		if !ok {
			return "", false, nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", true, denied("the token's %s claim is not a string", name)
		}
		return s, true, nil
	}
	date := func(name string) (time.Time, bool, error) {
		raw, ok := m[name]
		if !ok {
			return time.Time{}, false, nil
		}
		var d jwt.NumericDate
		if err := d.UnmarshalJSON(raw); err != nil {
			return time.Time{}, true, denied("the token's %s claim is not a time", name)
		}
		return d.Time(), true, nil
	}
	iss, _, err := str("iss")
	if err != nil {
		return kernel.Credential{}, err
	}
	if iss != v.cfg.Issuer {
		return kernel.Credential{}, denied("the token's issuer %q is not %q", printable(iss), v.cfg.Issuer)
	}
	if raw, ok := m["aud"]; !ok {
		return kernel.Credential{}, denied("the token has no audience: want %q", v.cfg.Audience)
	} else {
		var aud jwt.Audience
		if err := aud.UnmarshalJSON(raw); err != nil {
			return kernel.Credential{}, denied("the token's aud claim is not a string or an array of strings")
		}
		if !aud.Contains(v.cfg.Audience) {
			return kernel.Credential{}, denied("the token is not for this endpoint: its audience does not name %q", v.cfg.Audience)
		}
	}
	now, skew := v.cfg.Now(), v.cfg.Skew
	exp, ok, err := date("exp")
	if err != nil {
		return kernel.Credential{}, err
	}
	if !ok {
		return kernel.Credential{}, denied("the token has no expiry (exp)")
	}
	if !now.Before(exp.Add(skew)) {
		return kernel.Credential{}, denied("the token expired at %s", exp.UTC().Format(time.RFC3339))
	}
	nbf, ok, err := date("nbf")
	if err != nil {
		return kernel.Credential{}, err
	}
	if ok && nbf.After(now.Add(skew)) {
		return kernel.Credential{}, denied("the token is not valid before %s", nbf.UTC().Format(time.RFC3339))
	}
	iat, hasIat, err := date("iat")
	if err != nil {
		return kernel.Credential{}, err
	}
	if hasIat && iat.After(now.Add(skew)) {
		return kernel.Credential{}, denied("the token was issued in the future, at %s", iat.UTC().Format(time.RFC3339))
	}
	sub, hasSub, err := str("sub")
	if err != nil {
		return kernel.Credential{}, err
	}
	if hasSub && !printableName(sub, maxSubjectChars) {
		// It reaches the extension and the audit log.
		return kernel.Credential{}, denied("the token's sub claim is not a string of 1 to %d printable characters", maxSubjectChars)
	}
	agent, ok, err := str(v.cfg.AgentClaim)
	if err != nil {
		return kernel.Credential{}, err
	}
	if !ok || !agentName(agent) {
		return kernel.Credential{}, denied("the token's %s claim does not name the agent: want a string of 1 to %d printable characters", v.cfg.AgentClaim, maxAgentChars)
	}
	scopes, err := scopesOf(m)
	if err != nil {
		return kernel.Credential{}, err
	}
	c := kernel.Credential{Agent: agent, ExpiresAt: exp, Issuer: iss, Subject: sub, Scopes: scopes}
	if hasIat {
		c.CreatedAt = iat
		c.ShortLived = exp.Sub(iat) <= v.cfg.ShortLived
	}
	return c, nil
}

// scopesOf reads scope (a space-separated string) or, without it, scp (an
// array of strings, or a string as some providers send it).
func scopesOf(m map[string]jsontext.Value) ([]string, error) {
	if raw, ok := m["scope"]; ok {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, denied("the token's scope claim is not a string")
		}
		return strings.Fields(s), nil
	}
	raw, ok := m["scp"]
	if !ok {
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err == nil {
		return list, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, denied("the token's scp claim is not an array of strings")
	}
	return strings.Fields(s), nil
}

func agentName(s string) bool { return printableName(s, maxAgentChars) }

// printableName: 1 to most printable characters.
func printableName(s string, most int) bool {
	if s == "" || !utf8.ValidString(s) || utf8.RuneCountInString(s) > most {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// printable quotes at most 64 bytes of an untrusted value for a message.
func printable(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

var errNoKey = errors.New("no key")
