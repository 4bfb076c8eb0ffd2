package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
)

// keySet is an issuer's signing keys, public and asymmetric only.
type keySet []jose.JSONWebKey

// key returns the issuer's key for the token's header. An unknown kid
// refetches the key set, at most once per MinRefresh for all callers
// together (concurrent callers wait for the one fetch); a fetch that fails
// leaves CodeUnavailable until one succeeds.
func (v *Verifier) key(ctx context.Context, h header) (jose.JSONWebKey, error) {
	tried := false
	for {
		v.mu.Lock()
		if k, err := v.keys.find(h); err != errNoKey {
			v.mu.Unlock()
			return k, err
		}
		if ch := v.inflight; ch != nil {
			v.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				return jose.JSONWebKey{}, kernel.Errorf(kernel.CodeUnavailable, "gave up waiting for the keys of %s", v.cfg.Issuer).Wrap(ctx.Err())
			}
			tried = true
			continue
		}
		now := v.cfg.Now()
		if tried || (!v.lastAttempt.IsZero() && now.Before(v.lastAttempt.Add(v.cfg.MinRefresh))) {
			err, fetched := v.lastErr, v.fetched
			v.mu.Unlock()
			if err != nil {
				return jose.JSONWebKey{}, err
			}
			if !tried && !issuedBy(h, fetched.Add(-v.cfg.Skew)) {
				// The provider may have rotated since the set was
				// fetched: a token that may be valid is not refused
				// before the set can be fetched again.
				return jose.JSONWebKey{}, kernel.Errorf(kernel.CodeUnavailable,
					"the token's key %q is not among the keys of %s fetched at %s, which may predate it", printable(h.kid), v.cfg.Issuer, fetched.UTC().Format(time.RFC3339)).
					WithHint("the token may be valid: retry after Retry-After, when the keys are fetched again")
			}
			return jose.JSONWebKey{}, v.unknownKey(h)
		}
		ch := make(chan struct{})
		v.inflight, v.lastAttempt = ch, now
		v.mu.Unlock()

		// The fetch outlives a caller that gives up: others may wait on it.
		keys, uri, err := v.fetch(context.WithoutCancel(ctx))
		v.mu.Lock()
		if uri != "" {
			v.jwksURI = uri
		}
		if err == nil {
			v.keys, v.fetched = keys, now
		}
		v.lastErr = err
		v.inflight = nil
		close(ch)
		v.mu.Unlock()
		tried = true
	}
}

// issuedBy reports whether the token says (unverified: its key is
// unknown) it was issued at t or earlier. Without a readable iat it is not.
func issuedBy(h header, t time.Time) bool {
	var c struct {
		Iat *jwt.NumericDate `json:"iat"`
	}
	if json.Unmarshal(h.jws.UnsafePayloadWithoutVerification(), &c, json.RejectUnknownMembers(false)) != nil || c.Iat == nil {
		return false
	}
	return !c.Iat.Time().After(t)
}

func (v *Verifier) unknownKey(h header) error {
	if h.kid == "" {
		return denied("the token names no key (kid) and the issuer does not have exactly one %s key", h.alg)
	}
	return denied("the token's key %q is not among the issuer's keys", printable(h.kid))
}

// find is the key the header names: by kid, or without one the only key
// for its algorithm. errNoKey when there is none; another error when the
// named key does not fit the algorithm.
func (ks keySet) find(h header) (jose.JSONWebKey, error) {
	var match []jose.JSONWebKey
	for _, k := range ks {
		if h.kid != "" && k.KeyID == h.kid {
			if !fits(k, h.alg) {
				return jose.JSONWebKey{}, denied("the token's algorithm %s does not fit the issuer's key %q", h.alg, printable(h.kid))
			}
			return k, nil
		}
		if h.kid == "" && fits(k, h.alg) {
			match = append(match, k)
		}
	}
	if len(match) == 1 {
		return match[0], nil
	}
	return jose.JSONWebKey{}, errNoKey
}

// fits reports whether alg may be verified with k: the key's own alg, when
// it states one, and its type and curve.
func fits(k jose.JSONWebKey, alg jose.SignatureAlgorithm) bool {
	if k.Algorithm != "" && k.Algorithm != string(alg) {
		return false
	}
	switch key := k.Key.(type) {
	case *rsa.PublicKey:
		return strings.HasPrefix(string(alg), "RS") || strings.HasPrefix(string(alg), "PS")
	case *ecdsa.PublicKey:
		switch alg {
		case jose.ES256:
			return key.Curve == elliptic.P256()
		case jose.ES384:
			return key.Curve == elliptic.P384()
		case jose.ES512:
			return key.Curve == elliptic.P521()
		}
	case ed25519.PublicKey:
		return alg == jose.EdDSA
	}
	return false
}

// usable reports why a key of the set is left out, or "" to keep it.
func usable(k jose.JSONWebKey) string {
	if k.Use != "" && k.Use != "sig" {
		return "not a signing key (use " + k.Use + ")"
	}
	if !k.Valid() || !k.IsPublic() {
		return "not a valid public key"
	}
	switch key := k.Key.(type) {
	case *rsa.PublicKey:
		if key.N.BitLen() < 2048 {
			return fmt.Sprintf("an RSA key of %d bits (at least 2048)", key.N.BitLen())
		}
	case *ecdsa.PublicKey:
		switch key.Curve {
		case elliptic.P256(), elliptic.P384(), elliptic.P521():
		default:
			return "an EC key on another curve than P-256, P-384 or P-521"
		}
	case ed25519.PublicKey:
	default:
		return fmt.Sprintf("a %T key, not RSA, EC or Ed25519", k.Key)
	}
	return ""
}

// fetch discovers the key set's URL when it is not known yet, then
// fetches the key set.
func (v *Verifier) fetch(ctx context.Context) (keySet, string, error) {
	v.mu.Lock()
	uri := v.jwksURI
	v.mu.Unlock()
	if uri == "" {
		var err error
		if uri, err = v.discover(ctx); err != nil {
			v.cfg.Logf("oauth: %v", err)
			return nil, "", err
		}
	}
	body, err := v.get(ctx, uri)
	if err != nil {
		err := unavailable(v.cfg.Issuer, "its key set", err)
		v.cfg.Logf("oauth: %v", err)
		return nil, uri, err
	}
	var doc struct {
		Keys []jsontext.Value `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc, json.RejectUnknownMembers(false)); err != nil {
		err := unavailable(v.cfg.Issuer, "its key set", fmt.Errorf("%s is not a JSON Web Key Set", uri))
		v.cfg.Logf("oauth: %v", err)
		return nil, uri, err
	}
	if len(doc.Keys) > maxKeys {
		err := unavailable(v.cfg.Issuer, "its key set", fmt.Errorf("%s has %d keys, over the limit of %d", uri, len(doc.Keys), maxKeys))
		v.cfg.Logf("oauth: %v", err)
		return nil, uri, err
	}
	var keys keySet
	for i, raw := range doc.Keys {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(raw); err != nil {
			v.cfg.Logf("oauth: %s: key %d left out: %v", uri, i, err)
			continue
		}
		if why := usable(k); why != "" {
			v.cfg.Logf("oauth: %s: key %q left out: %s", uri, printable(k.KeyID), why)
			continue
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		// A set with nothing to verify with is a provider (or a proxy)
		// answering wrong for a moment, not every key revoked: the keys
		// fetched before keep deciding.
		err := unavailable(v.cfg.Issuer, "its key set", fmt.Errorf("%s has no usable signing key", uri))
		v.cfg.Logf("oauth: %v", err)
		return nil, uri, err
	}
	return keys, uri, nil
}

// discover reads the issuer's metadata (RFC 8414, then OpenID Connect
// discovery) and returns its jwks_uri. A document is used only when its
// issuer is exactly ours and its jwks_uri is https (or, for a loopback
// http issuer, loopback http).
func (v *Verifier) discover(ctx context.Context) (string, error) {
	var last error
	for _, doc := range metadataURLs(v.cfg.Issuer) {
		body, err := v.get(ctx, doc)
		if err != nil {
			last = err
			continue
		}
		var md struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := json.Unmarshal(body, &md, json.RejectUnknownMembers(false)); err != nil {
			last = fmt.Errorf("%s is not metadata: %v", doc, err)
			continue
		}
		if md.Issuer != v.cfg.Issuer {
			last = fmt.Errorf("%s names the issuer %q, not %q", doc, printable(md.Issuer), v.cfg.Issuer)
			continue
		}
		u, err := url.Parse(md.JWKSURI)
		if err != nil || md.JWKSURI == "" {
			last = fmt.Errorf("%s has no jwks_uri", doc)
			continue
		}
		if err := checkFetchURL(u, "jwks_uri"); err != nil {
			last = fmt.Errorf("%s: %v", doc, err)
			continue
		}
		if u.Scheme == "http" && !strings.HasPrefix(v.cfg.Issuer, "http:") {
			// Loopback http is for a local provider, not a way for a
			// remote one to point serve-http at its own host's services.
			last = fmt.Errorf("%s: jwks_uri %q is http, and the issuer is https", doc, u.Redacted())
			continue
		}
		return md.JWKSURI, nil
	}
	return "", unavailable(v.cfg.Issuer, "its metadata", last)
}

// metadataURLs are where an issuer's metadata may be: the RFC 8414 URL
// (the well-known segment between host and path) and OpenID's (appended).
func metadataURLs(issuer string) []string {
	u, _ := url.Parse(issuer) // checked by New
	// The escaped path too: an issuer's %2F stays one, not a new segment.
	path, raw := strings.TrimSuffix(u.Path, "/"), strings.TrimSuffix(u.EscapedPath(), "/")
	rfc := *u
	rfc.Path, rfc.RawPath = "/.well-known/oauth-authorization-server"+path, "/.well-known/oauth-authorization-server"+raw
	oidc := *u
	oidc.Path, oidc.RawPath = path+"/.well-known/openid-configuration", raw+"/.well-known/openid-configuration"
	return []string{rfc.String(), oidc.String()}
}

// get fetches a document of at most maxDocumentBytes with status 200.
func (v *Verifier) get(ctx context.Context, uri string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, uri, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", uri, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocumentBytes+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %v", uri, err)
	}
	if len(body) > maxDocumentBytes {
		return nil, fmt.Errorf("GET %s: larger than %d bytes", uri, maxDocumentBytes)
	}
	return body, nil
}

func unavailable(issuer, what string, err error) error {
	return kernel.Errorf(kernel.CodeUnavailable, "the identity provider %s: cannot fetch %s", issuer, what).
		WithHint("the token may be valid: retry shortly; the owner checks that serve-http can reach the issuer").Wrap(err)
}
