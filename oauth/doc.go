// Package oauth verifies the access tokens an organisation's identity
// provider issues, for serve-http as an OAuth resource server: it owns
// issuer discovery, the cache of the issuer's signing keys and every rule a
// token must pass (signature, issuer, audience, lifetime, agent claim,
// scopes). It turns a valid token into a kernel.Credential and never keeps
// or logs the token.
//
// It imports kernel, go-jose and the JSON package only (go-json-experiment,
// as the rest of rukh): no other rukh package (policy
// decides what a credential may call, mcphttp speaks HTTP), no store. It
// never prints (Config.Logf) and never exits.
package oauth
