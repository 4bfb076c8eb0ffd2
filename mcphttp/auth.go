package mcphttp

import (
	"errors"
	"net/http"
	"strings"
)

// Credential kinds (SPEC §10).
const (
	CredentialStatic     = "static"
	CredentialShortLived = "short-lived"
	CredentialOneTime    = "one-time"
	CredentialNone       = "none" // httpAuth "none": the anonymous caller
)

// Anonymous is the agent name of a caller on an endpoint with
// "httpAuth": "none".
const Anonymous = "anonymous"

// Principal is who a request comes from, as its bearer token says. It
// never holds the token itself.
type Principal struct {
	Agent      string
	Endpoint   string
	Credential string // a Credential* kind
	// Token identifies the credential for Authorize (a one-time token's
	// consumption); never the secret.
	Token string
}

// Authenticator resolves a bearer token to its principal. An unknown,
// expired or revoked token is ErrUnauthenticated (401).
type Authenticator func(token string) (*Principal, error)

// Authorizer decides whether p may run command (at its security level on
// the endpoint, "" for standard) on endpoint, before
// anything runs; it consumes a one-time token it accepts. A refusal is an
// *InsufficientScope (403); any other error is 401.
type Authorizer func(p *Principal, endpoint, command, level string) error

// ErrUnauthenticated is a missing, malformed or unknown credential.
var ErrUnauthenticated = errors.New("a valid bearer token is required")

// InsufficientScope is a credential too weak for the command's level.
type InsufficientScope struct{ Reason string }

func (e *InsufficientScope) Error() string { return e.Reason }

// bearer returns the token of an Authorization: Bearer header.
func bearer(r *http.Request) (string, bool) {
	v := r.Header.Values("Authorization")
	if len(v) != 1 {
		return "", false
	}
	scheme, token, ok := strings.Cut(v[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

func unauthorized(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="rukh"`)
	plain(w, http.StatusUnauthorized, msg)
}

func forbiddenScope(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="rukh", error="insufficient_scope"`)
	plain(w, http.StatusForbidden, msg)
}

func plain(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write([]byte(msg + "\n"))
}
