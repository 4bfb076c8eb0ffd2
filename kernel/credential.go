package kernel

import (
	"encoding/hex"
	"time"
)

// Credential kinds (docs/agents.md): what an agent presented, weakest first.
// They are the values of Caller.Credential.
const (
	CredentialStatic     = "static"      // the agent's long-lived key
	CredentialShortLived = "short-lived" // a token with a bounded lifetime
	CredentialOneTime    = "one-time"    // consumed by the first call it authorises
	// CredentialNone is the kind of the anonymous caller of an endpoint
	// that opted out of authentication (httpAuth "none"). It is never sent
	// to an extension: its Caller has no credential member.
	CredentialNone = "none"
	// CredentialOAuth is an access token the endpoint's identity provider
	// issued (httpAuth "oauth" or "rukh+oauth"), verified by package oauth.
	CredentialOAuth = "oauth"
)

// AnonymousAgent is the agent name of a caller on an endpoint without
// authentication; no agent can be named so.
const AnonymousAgent = "anonymous"

// TokenHash is the SHA-256 of a bearer token: all a store keeps of it.
type TokenHash [32]byte

// Credential is what authenticating a bearer token established: who the
// agent is, the one endpoint it may call, and the kind of token. It holds
// the token's hash (to consume a one-time token), never the token.
type Credential struct {
	Agent     string
	Endpoint  string
	Kind      string    // CredentialStatic, CredentialShortLived, CredentialOneTime, CredentialOAuth or CredentialNone
	Command   string    // a one-time token's command binding; empty: any command
	CreatedAt time.Time // zero for the anonymous caller
	ExpiresAt time.Time // zero: no expiry (a static key)
	Hash      TokenHash

	// An oauth credential's claims; zero for Rukh's own tokens.
	Issuer     string   // the token's iss
	Subject    string   // the token's sub
	Scopes     []string // the token's scope (space-separated) or scp (array)
	ShortLived bool     // its lifetime is at most the endpoint's shortLivedSeconds
}

// Anonymous is the credential of a caller of an endpoint with httpAuth
// "none".
func Anonymous(endpoint string) Credential {
	return Credential{Agent: AnonymousAgent, Endpoint: endpoint, Kind: CredentialNone}
}

// LogID names the credential in logs without revealing it: the token's
// kind prefix and the first 8 hex digits of its hash.
func (c Credential) LogID() string {
	switch c.Kind {
	case CredentialNone:
		return "anonymous"
	case CredentialOAuth:
		return "oauth_" + hex.EncodeToString(c.Hash[:4])
	}
	return "rukh_" + TokenPrefix(c.Kind) + "_" + hex.EncodeToString(c.Hash[:4])
}

// Caller is the identity the credential gives a call on transport, as
// the extension receives it: the agent and the credential kind, never the
// token. An oauth credential's subject is the token's sub, as the identity
// provider named it, with its issuer; subject is the endpoint's otherwise.
func (c Credential) Caller(transport, subject string) Caller {
	cl := Caller{Transport: transport, Endpoint: c.Endpoint, Subject: subject, Agent: c.Agent}
	switch c.Kind {
	case CredentialNone:
	case CredentialOAuth:
		cl.Credential = c.Kind
		cl.Issuer = c.Issuer
		cl.Subject = c.Subject
	default:
		cl.Credential = c.Kind
	}
	return cl
}

// TokenPrefix is the kind part of a token (rukh_<prefix>_…): key for a
// static key, agt for a short-lived token, otk for a one-time token; ""
// for anything else.
func TokenPrefix(kind string) string {
	switch kind {
	case CredentialStatic:
		return "key"
	case CredentialShortLived:
		return "agt"
	case CredentialOneTime:
		return "otk"
	}
	return ""
}
