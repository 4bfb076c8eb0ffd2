package store

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/rukh-dev/rukh/kernel"
)

// Agents and their credentials (docs/agents.md). An agent is a named principal
// bound to one endpoint; it has one static key and any number (bounded) of
// short-lived and one-time tokens. Only a token's SHA-256 is stored.
var (
	bucketAgents      = []byte("agents")      // agent name → agentRec JSON
	bucketCredentials = []byte("credentials") // 32-byte token hash → credRec JSON
)

// Credential lifetimes and bounds.
const (
	// MaxTokenTTL bounds a short-lived or one-time token's lifetime.
	MaxTokenTTL = 24 * time.Hour
	// MinTokenTTL is the shortest lifetime a token may be minted with.
	MinTokenTTL = time.Second
	// MaxAgents bounds the agents of one home.
	MaxAgents = 10_000
	// endedRetention is how long an expired or revoked credential is kept
	// so that a presented token is reported as expired or revoked rather
	// than unknown; then it is purged.
	endedRetention = 7 * 24 * time.Hour
)

// clock is the store's clock for credentials and the audit log (a test seam).
var clock = time.Now

// maxLiveTokens bounds the unexpired short-lived and one-time tokens of
// one agent, so minting in a loop cannot grow the store (a test seam).
var maxLiveTokens = 1000

// validAgentName reports whether name is [a-z0-9][a-z0-9-]{0,63}: checked
// by hand, so that no process compiles a regexp for it.
func validAgentName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case c == '-' && i > 0:
		default:
			return false
		}
	}
	return true
}

// Agent is one agent as `rukh agent list` shows it: never a secret.
type Agent struct {
	Name      string    `json:"name"`
	Endpoint  string    `json:"endpoint"`
	CreatedAt time.Time `json:"createdAt"`
	RotatedAt time.Time `json:"rotatedAt,omitzero"`
	// LastUsed is the time of the agent's newest audit record, if any.
	LastUsed time.Time `json:"lastUsed,omitzero"`
	// Live credentials by kind (static, short-lived, one-time).
	Credentials map[string]int `json:"credentials"`
}

type agentRec struct {
	Name      string    `json:"name"`
	Endpoint  string    `json:"endpoint"`
	CreatedAt time.Time `json:"createdAt"`
	RotatedAt time.Time `json:"rotatedAt,omitzero"`
}

type credRec struct {
	Agent     string    `json:"agent"`
	Endpoint  string    `json:"endpoint"`
	Kind      string    `json:"kind"`
	Command   string    `json:"command,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
	RevokedAt time.Time `json:"revokedAt,omitzero"`
	// SpentAt marks a one-time token a call used: the record is then a
	// tombstone, kept until the token's expiry.
	SpentAt time.Time `json:"spentAt,omitzero"`
}

func (r *credRec) credential(h kernel.TokenHash) kernel.Credential {
	return kernel.Credential{Agent: r.Agent, Endpoint: r.Endpoint, Kind: r.Kind, Command: r.Command,
		CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, Hash: h}
}

func (r *credRec) expired(t time.Time) bool { return !r.ExpiresAt.IsZero() && !t.Before(r.ExpiresAt) }

// ended reports when the credential stopped being usable (zero: it still is).
func (r *credRec) ended(t time.Time) time.Time {
	switch {
	case !r.SpentAt.IsZero():
		return r.SpentAt
	case !r.RevokedAt.IsZero():
		return r.RevokedAt
	case r.expired(t):
		return r.ExpiresAt
	}
	return time.Time{}
}

// MintedToken is a token shown to the owner once, and what it grants.
type MintedToken struct {
	Token      string            `json:"token"`
	Credential kernel.Credential `json:"-"`
}

// CredentialStore is what a server needs per request. The bbolt Store
// implements it; a shared backend implements ConsumeOnce with a
// compare-and-swap delete so that one token authorises one call across
// replicas.
type CredentialStore interface {
	// Authenticate checks a presented bearer token and returns what it
	// grants, without consuming it. Errors wrap ErrTokenMalformed,
	// ErrTokenUnknown, ErrTokenExpired, ErrTokenRevoked or ErrTokenSpent;
	// with ErrTokenSpent, the credential the token was comes too.
	Authenticate(token string) (kernel.Credential, error)
	// ConsumeOnce atomically spends a one-time token once a call it
	// authorises is about to run; of concurrent consumers exactly one
	// gets the credential, the others ErrTokenSpent. A spent token's
	// record stays, without any secret, until the token's expiry:
	// Authenticate then refuses it with ErrTokenSpent and the credential
	// it was, so that a replay can be recorded against its agent.
	ConsumeOnce(hash kernel.TokenHash, command string) (kernel.Credential, error)
}

var _ CredentialStore = (*Store)(nil)

func agentErr(name string) *kernel.Error {
	return kernel.Errorf(kernel.CodeNotFound, "no agent %q", name).WithHint("'rukh agent list' shows the agents")
}

// CheckAgentName validates an agent name.
func CheckAgentName(name string) error {
	if !validAgentName(name) {
		return kernel.Errorf(kernel.CodeInvalid, "invalid agent name %q: want [a-z0-9][a-z0-9-]{0,63}", name)
	}
	if name == kernel.AnonymousAgent {
		return kernel.Errorf(kernel.CodeInvalid, "agent name %q is reserved for the caller of an endpoint without authentication", name)
	}
	return nil
}

func buckets(tx txn) (agents, creds bucket, err error) {
	if agents, err = tx.CreateBucketIfNotExists(bucketAgents); err != nil {
		return nil, nil, err
	}
	creds, err = tx.CreateBucketIfNotExists(bucketCredentials)
	return agents, creds, err
}

func getAgent(b bucket, name string) (*agentRec, error) {
	return getJSON[agentRec](b, "agent", name)
}

// getJSON decodes the JSON record under key, nil when there is none; what
// names the kind of record in the error.
func getJSON[T any](b bucket, what, key string) (*T, error) {
	v := b.Get([]byte(key))
	if v == nil {
		return nil, nil
	}
	var r T
	if err := json.Unmarshal(v, &r); err != nil {
		return nil, kernel.Errorf(kernel.CodeInternal, "%s %q: unreadable record", what, key).Wrap(err)
	}
	return &r, nil
}

func putJSON(b bucket, k []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put(k, data)
}

// mint stores a new credential of kind for agent a and returns its token.
func mint(creds bucket, a *agentRec, kind, command string, ttl time.Duration, t time.Time) (MintedToken, error) {
	tok, h, err := newToken(kind)
	if err != nil {
		return MintedToken{}, err
	}
	r := credRec{Agent: a.Name, Endpoint: a.Endpoint, Kind: kind, Command: command, CreatedAt: t.UTC()}
	if ttl > 0 {
		r.ExpiresAt = t.Add(ttl).UTC()
	}
	if err := putJSON(creds, h[:], r); err != nil {
		return MintedToken{}, err
	}
	return MintedToken{Token: tok, Credential: r.credential(h)}, nil
}

// eachCred calls fn for every credential record; fn may not modify b.
func eachCred(b bucket, fn func(h kernel.TokenHash, r *credRec) error) error {
	return b.ForEach(func(k, v []byte) error {
		var r credRec
		if len(k) != len(kernel.TokenHash{}) || json.Unmarshal(v, &r) != nil {
			return nil // unreadable: purge removes it
		}
		return fn(kernel.TokenHash(k), &r)
	})
}

// revokeWhere marks every matching live credential revoked and returns how
// many were.
func revokeWhere(b bucket, t time.Time, match func(*credRec) bool) (int, error) {
	type upd struct {
		k []byte
		r credRec
	}
	var todo []upd
	if err := eachCred(b, func(h kernel.TokenHash, r *credRec) error {
		if match(r) && r.ended(t).IsZero() {
			r.RevokedAt = t.UTC()
			todo = append(todo, upd{slices.Clone(h[:]), *r})
		}
		return nil
	}); err != nil {
		return 0, err
	}
	for _, u := range todo {
		if err := putJSON(b, u.k, u.r); err != nil {
			return 0, err
		}
	}
	return len(todo), nil
}

// gone reports whether the record is kept no longer: a spent one-time
// token once it would have expired, any other credential endedRetention
// after it ended.
func (r *credRec) gone(t time.Time) bool {
	if !r.SpentAt.IsZero() && !r.ExpiresAt.IsZero() {
		return r.expired(t)
	}
	e := r.ended(t)
	return !e.IsZero() && t.Sub(e) >= endedRetention
}

// purge deletes credentials that ended more than endedRetention ago (and
// unreadable records); it keeps growth bounded without a background job.
func purge(b bucket, t time.Time) (int, error) {
	return deleteWhere(b, func(k, v []byte) bool {
		var r credRec
		return len(k) != len(kernel.TokenHash{}) || json.Unmarshal(v, &r) != nil || r.gone(t)
	})
}

// AddAgent creates an agent bound to endpoint with a new static key, which
// it returns (the only time it exists outside the caller's hands).
func (s *Store) AddAgent(name, endpoint string) (MintedToken, error) {
	if err := CheckAgentName(name); err != nil {
		return MintedToken{}, err
	}
	var out MintedToken
	err := s.update(func(tx txn) error {
		agents, creds, err := buckets(tx)
		if err != nil {
			return err
		}
		if a, err := getAgent(agents, name); err != nil {
			return err
		} else if a != nil {
			return kernel.Errorf(kernel.CodeConflict, "agent %q already exists (endpoint %s)", name, a.Endpoint).
				WithHint(fmt.Sprintf("'rukh agent rotate %s' gives it a new key; 'rukh agent remove %s' removes it", name, name))
		}
		if n := agents.Stats().KeyN; n >= MaxAgents {
			return kernel.Errorf(kernel.CodeConflict, "the home already has %d agents, the limit", n).WithHint("remove agents with 'rukh agent remove'")
		}
		t := clock()
		a := &agentRec{Name: name, Endpoint: endpoint, CreatedAt: t.UTC()}
		if err := putJSON(agents, []byte(name), a); err != nil {
			return err
		}
		out, err = mint(creds, a, kernel.CredentialStatic, "", 0, t)
		return err
	})
	return out, err
}

// RotateAgent replaces the agent's static key: the old one stops working
// at once (revoked), and the new one is returned.
func (s *Store) RotateAgent(name string) (MintedToken, error) {
	var out MintedToken
	_, err := s.revokeAgent(name, func(r *credRec) bool { return r.Kind == kernel.CredentialStatic },
		func(agents, creds bucket, a *agentRec, t time.Time) (err error) {
			a.RotatedAt = t.UTC()
			if err := putJSON(agents, []byte(name), a); err != nil {
				return err
			}
			out, err = mint(creds, a, kernel.CredentialStatic, "", 0, t)
			return err
		})
	return out, err
}

// RemoveAgent deletes the agent and revokes every credential it has; it
// returns how many were revoked.
func (s *Store) RemoveAgent(name string) (int, error) {
	return s.revokeAgent(name, func(*credRec) bool { return true },
		func(agents, _ bucket, _ *agentRec, _ time.Time) error { return agents.Delete([]byte(name)) })
}

// revokeAgent revokes the agent's credentials that match, purges what ended
// long ago, then runs then, all in one transaction; it returns how many
// credentials it revoked.
func (s *Store) revokeAgent(name string, match func(*credRec) bool, then func(agents, creds bucket, a *agentRec, t time.Time) error) (revoked int, err error) {
	err = s.update(func(tx txn) error {
		agents, creds, err := buckets(tx)
		if err != nil {
			return err
		}
		a, err := getAgent(agents, name)
		if err != nil {
			return err
		}
		if a == nil {
			return agentErr(name)
		}
		t := clock()
		if revoked, err = revokeWhere(creds, t, func(r *credRec) bool { return r.Agent == name && match(r) }); err != nil {
			return err
		}
		if _, err := purge(creds, t); err != nil {
			return err
		}
		return then(agents, creds, a, t)
	})
	return revoked, err
}

// MintToken mints a short-lived or one-time token for an agent, valid for
// ttl (MinTokenTTL to MaxTokenTTL). A one-time token may be bound to a
// command identity. Credentials that ended long ago are purged first.
func (s *Store) MintToken(agent, kind string, ttl time.Duration, command string) (MintedToken, error) {
	switch kind {
	case kernel.CredentialShortLived:
		if command != "" {
			return MintedToken{}, kernel.Errorf(kernel.CodeUsage, "only a one-time token can be bound to a command").WithHint("add --once")
		}
	case kernel.CredentialOneTime:
	default:
		return MintedToken{}, kernel.Errorf(kernel.CodeInternal, "cannot mint a %q token", kind)
	}
	if ttl < MinTokenTTL || ttl > MaxTokenTTL {
		return MintedToken{}, kernel.Errorf(kernel.CodeUsage, "token lifetime %s is out of range: want 1s to 24h", ttl).
			WithHint("give --ttl a duration such as 15m or 2h (at most 24h)")
	}
	var out MintedToken
	err := s.update(func(tx txn) error {
		agents, creds, err := buckets(tx)
		if err != nil {
			return err
		}
		a, err := getAgent(agents, agent)
		if err != nil {
			return err
		}
		if a == nil {
			return agentErr(agent)
		}
		t := clock()
		if _, err := purge(creds, t); err != nil {
			return err
		}
		live := 0
		if err := eachCred(creds, func(_ kernel.TokenHash, r *credRec) error {
			if r.Agent == agent && r.Kind != kernel.CredentialStatic && r.ended(t).IsZero() {
				live++
			}
			return nil
		}); err != nil {
			return err
		}
		if live >= maxLiveTokens {
			return kernel.Errorf(kernel.CodeConflict, "agent %q already has %d live tokens, the limit", agent, live).
				WithHint(fmt.Sprintf("wait for some to expire, or 'rukh agent remove %s' to revoke them all", agent))
		}
		out, err = mint(creds, a, kind, command, ttl, t)
		return err
	})
	return out, err
}

// Agents lists the agents by name, with their live credential counts and
// the time each was last seen in the audit log.
func (s *Store) Agents() ([]Agent, error) {
	var out []Agent
	_, err := s.view(func(tx txn) error {
		agents := tx.Bucket(bucketAgents)
		if agents == nil {
			return nil
		}
		index := map[string]int{}
		if err := agents.ForEach(func(k, v []byte) error {
			var r agentRec
			if err := json.Unmarshal(v, &r); err != nil {
				return kernel.Errorf(kernel.CodeInternal, "agent %q: unreadable record", k).Wrap(err)
			}
			index[r.Name] = len(out)
			out = append(out, Agent{Name: r.Name, Endpoint: r.Endpoint, CreatedAt: r.CreatedAt, RotatedAt: r.RotatedAt,
				Credentials: map[string]int{kernel.CredentialStatic: 0, kernel.CredentialShortLived: 0, kernel.CredentialOneTime: 0}})
			return nil
		}); err != nil {
			return err
		}
		t := clock()
		if creds := tx.Bucket(bucketCredentials); creds != nil {
			if err := eachCred(creds, func(_ kernel.TokenHash, r *credRec) error {
				if i, ok := index[r.Agent]; ok && r.ended(t).IsZero() {
					out[i].Credentials[r.Kind]++
				}
				return nil
			}); err != nil {
				return err
			}
		}
		lastUsed(tx, out, index)
		return nil
	})
	return out, err
}

// Authenticate implements CredentialStore. It is one read transaction and
// writes nothing, so a flood of bad tokens costs no store writes.
func (s *Store) Authenticate(token string) (kernel.Credential, error) {
	kind, h, err := ParseToken(token)
	if err != nil {
		return kernel.Credential{}, err
	}
	var cred kernel.Credential
	_, err = s.view(func(tx txn) error {
		r, err := lookup(tx.Bucket(bucketCredentials), h)
		if err != nil {
			return err
		}
		if r.Kind != kind {
			return denied(ErrTokenUnknown) // a record can only match its own prefix; be safe
		}
		if err := r.usable(clock()); err != nil {
			if errors.Is(err, ErrTokenSpent) {
				cred = r.credential(h) // whose replay it is
			}
			return err
		}
		cred = r.credential(h)
		return nil
	})
	if err == nil && cred.Agent == "" {
		err = denied(ErrTokenUnknown) // no store file at all
	}
	return cred, err
}

// ConsumeOnce implements CredentialStore: in one write transaction it
// checks the one-time token with hash h and marks it spent. A token bound
// to another command is left as it is (ErrTokenWrongCommand).
func (s *Store) ConsumeOnce(h kernel.TokenHash, command string) (kernel.Credential, error) {
	var cred kernel.Credential
	err := s.update(func(tx txn) error {
		_, creds, err := buckets(tx)
		if err != nil {
			return err
		}
		r, err := lookup(creds, h)
		if err != nil {
			return err
		}
		if err := r.usable(clock()); err != nil {
			return err
		}
		if r.Kind != kernel.CredentialOneTime {
			return kernel.Errorf(kernel.CodeInvalid, "a %s credential is not consumed", r.Kind)
		}
		if r.Command != "" && r.Command != command {
			return denied(ErrTokenWrongCommand)
		}
		cred = r.credential(h)
		r.SpentAt = clock().UTC()
		return putJSON(creds, h[:], r)
	})
	return cred, err
}

// PurgeCredentials deletes credentials that expired or were revoked more
// than a week ago, and spent one-time tokens past their expiry; `rukh
// doctor` runs it. It returns how many went.
func (s *Store) PurgeCredentials() (int, error) {
	exists, err := s.Exists()
	if err != nil || !exists {
		return 0, err
	}
	var n int
	err = s.update(func(tx txn) error {
		_, creds, err := buckets(tx)
		if err != nil {
			return err
		}
		n, err = purge(creds, clock())
		return err
	})
	return n, err
}

func denied(sentinel error) error {
	return kernel.Errorf(kernel.CodeDenied, "invalid bearer token").Wrap(sentinel)
}

func lookup(b bucket, h kernel.TokenHash) (*credRec, error) {
	if b == nil {
		return nil, denied(ErrTokenUnknown)
	}
	v := b.Get(h[:])
	if v == nil {
		return nil, denied(ErrTokenUnknown)
	}
	var r credRec
	if err := json.Unmarshal(v, &r); err != nil {
		return nil, denied(ErrTokenUnknown)
	}
	return &r, nil
}

func (r *credRec) usable(t time.Time) error {
	switch {
	case !r.SpentAt.IsZero():
		return denied(ErrTokenSpent)
	case !r.RevokedAt.IsZero():
		return denied(ErrTokenRevoked)
	case r.expired(t):
		return denied(ErrTokenExpired)
	}
	return nil
}

// HashPrefix is the first 8 hex digits of a hash, for logs.
func HashPrefix(h kernel.TokenHash) string { return hex.EncodeToString(h[:4]) }

// IsTokenError reports whether err is one of the token errors an HTTP
// server answers with 401 (ErrTokenWrongCommand is not: the token is
// good, its scope too small, which policy.Authorize refuses first).
func IsTokenError(err error) bool {
	for _, e := range []error{ErrTokenMalformed, ErrTokenUnknown, ErrTokenExpired, ErrTokenRevoked, ErrTokenSpent} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
