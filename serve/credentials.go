package serve

import (
	"sync"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
)

// loggedCredentials is the store's credentials, telling the owner why a
// token was refused (naming it by its kind and the first 8 hex digits of
// its hash, never showing it), and answering a static key or short-lived
// token it authenticated before from memory while the store file's stamp
// is the one taken before that read: any write (a revocation, a rotation,
// a removed agent, a consumed token) changes the stamp, except this
// process's own audit records. Expiry is checked
// on every hit; one-time tokens are always read.
type loggedCredentials struct {
	s    *store.Store
	logf func(format string, args ...any)

	mu    sync.Mutex
	stamp store.Stamp
	known map[kernel.TokenHash]kernel.Credential
}

// authCacheSize bounds the credentials kept for one stamp.
const authCacheSize = 1024

func newLoggedCredentials(s *store.Store, logf func(string, ...any)) *loggedCredentials {
	return &loggedCredentials{s: s, logf: logf}
}

func (c *loggedCredentials) Authenticate(token string) (kernel.Credential, error) {
	st, stamped := c.s.Stamp()
	h := store.HashToken(token)
	if stamped {
		c.mu.Lock()
		cred, hit := c.known[h]
		if c.stamp != st && c.s.Unchanged(c.stamp, st) {
			c.stamp = st // only our own audit records were added since
		}
		hit = hit && c.stamp == st
		c.mu.Unlock()
		if hit && (cred.ExpiresAt.IsZero() || time.Now().Before(cred.ExpiresAt)) {
			return cred, nil
		}
	}
	cred, err := c.s.Authenticate(token)
	if err != nil {
		name := "a malformed token"
		if kind, h, perr := store.ParseToken(token); perr == nil {
			name = kernel.Credential{Kind: kind, Hash: h}.LogID()
		}
		c.logf("refused a request: %s: %v", name, err)
		return cred, err
	}
	if stamped && cred.Kind != kernel.CredentialOneTime {
		c.mu.Lock()
		if c.stamp != st || c.known == nil {
			c.stamp, c.known = st, map[kernel.TokenHash]kernel.Credential{}
		}
		if len(c.known) < authCacheSize {
			c.known[h] = cred
		}
		c.mu.Unlock()
	}
	return cred, nil
}

func (c *loggedCredentials) ConsumeOnce(h kernel.TokenHash, command string) (kernel.Credential, error) {
	return c.s.ConsumeOnce(h, command)
}
