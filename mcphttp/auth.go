package mcphttp

import (
	"errors"
	"net/http"
	"strings"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
)

// Credentials checks bearer tokens (docs/agents.md); store.Store implements it.
type Credentials interface {
	// Authenticate returns what a presented token grants, without
	// consuming it; any error is a 401. With a refusal, a credential
	// that names an agent is the one the token was (a spent one-time
	// token): the refusal is then recorded against it.
	Authenticate(token string) (kernel.Credential, error)
	// ConsumeOnce deletes a one-time token as the call it authorises is
	// about to run; of concurrent consumers exactly one succeeds.
	ConsumeOnce(hash kernel.TokenHash, command string) (kernel.Credential, error)
}

// errSpent refuses a call whose one-time token another call consumed
// first (or that expired or was revoked since the request arrived): 401.
var errSpent = errors.New("the one-time token is no longer valid (another call used it first)")

// errClaimed refuses a call whose one-time token another request of this
// server is spending at that moment: 401, as errSpent.
var errClaimed = errors.New("the one-time token is being spent by another request")

// authorize decides, before anything runs, whether cred may call command
// at its level on the endpoint. A refusal wrapping
// policy.ErrInsufficientScope is a 403; any other a 401. For a one-time
// token it returns the consumption, for the core to run once the call is
// admitted.
func authorize(creds Credentials, cred *kernel.Credential, command, level string) (consume func() error, err error) {
	if cred == nil {
		return nil, errSpent
	}
	if err := policy.Authorize(level, *cred, command); err != nil {
		return nil, err
	}
	if cred.Kind != kernel.CredentialOneTime {
		return nil, nil
	}
	if creds == nil {
		return nil, errSpent
	}
	return func() error {
		if _, err := creds.ConsumeOnce(cred.Hash, command); err != nil {
			if kernel.ErrorCode(err) == kernel.CodeUnavailable {
				return err // not spent: the store could not say (a 503)
			}
			return errSpent
		}
		return nil
	}, nil
}

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
