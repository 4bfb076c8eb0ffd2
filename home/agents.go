package home

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
)

// Default token lifetimes; store.MaxTokenTTL bounds them.
const (
	DefaultShortLivedTTL = 15 * time.Minute
	DefaultOneTimeTTL    = 10 * time.Minute
)

// NewAgent is an agent just added, with its static key.
type NewAgent struct {
	store.MintedToken
	// ServedOverHTTP is false when the agent's endpoint has no HTTP
	// transport yet: the agent cannot reach it.
	ServedOverHTTP bool
}

// AddAgent adds an agent bound to endpoint, which the draft profile must
// have.
func (h *Home) AddAgent(name, endpoint string) (NewAgent, error) {
	prof, err := h.DraftProfile()
	if err != nil {
		return NewAgent{}, err
	}
	e, ok := prof.Endpoints[endpoint]
	if !ok {
		names := slices.Sorted(maps.Keys(prof.Endpoints))
		return NewAgent{}, kernel.Errorf(kernel.CodeNotFound, "the profile has no endpoint %q", endpoint).
			WithHint(fmt.Sprintf("endpoints: %s; add one with 'rukh policy set'", strings.Join(names, ", ")))
	}
	m, err := h.Store.AddAgent(name, endpoint)
	if err != nil {
		return NewAgent{}, err
	}
	return NewAgent{MintedToken: m, ServedOverHTTP: slices.Contains(e.Transports, policy.TransportHTTP)}, nil
}

// AgentToken is a token just minted for an agent.
type AgentToken struct {
	store.MintedToken
	Kind string        // kernel.CredentialShortLived or kernel.CredentialOneTime
	TTL  time.Duration // how long it is valid
}

// DefaultTokenTTL is how long a token lives unless the owner says: a
// one-time token (once) less long than a short-lived one.
func DefaultTokenTTL(once bool) time.Duration {
	if once {
		return DefaultOneTimeTTL
	}
	return DefaultShortLivedTTL
}

// MintAgentToken mints a short-lived token, or a one-time one (once,
// optionally bound to command), valid for ttl.
func (h *Home) MintAgentToken(name string, once bool, ttl time.Duration, command string) (AgentToken, error) {
	kind := kernel.CredentialShortLived
	if once {
		kind = kernel.CredentialOneTime
	}
	m, err := h.Store.MintToken(name, kind, ttl, command)
	if err != nil {
		return AgentToken{}, err
	}
	return AgentToken{MintedToken: m, Kind: kind, TTL: ttl}, nil
}

// DraftProfile is the draft's profile, or the default one when none was
// set.
func (h *Home) DraftProfile() (*policy.Profile, error) {
	d, err := h.Store.Draft()
	if err != nil {
		return nil, err
	}
	if d.Profile == nil {
		return policy.DefaultProfile(), nil
	}
	return policy.ParseProfile(d.Profile)
}
