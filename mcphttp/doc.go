// Package mcphttp owns Rukh's MCP transport over HTTP (serve-http): one
// POSTed JSON-RPC message per request, answered as JSON or, once a
// notification precedes the response, as an event stream. It owns what is
// HTTP's: the endpoint paths, status codes (a modern JSON-RPC error maps to
// 400, 404 or 500; a legacy one stays 200), the headers it reads and
// writes (Content-Type, Accept, Content-Encoding, Retry-After), the Host
// and Origin checks against DNS rebinding, bearer authentication (Rukh's
// own tokens through Config.Credentials, an identity provider's through an
// endpoint's OAuthEndpoint verifier, with its protected resource metadata
// and WWW-Authenticate challenges) and the refusal of calls a credential
// does not authorise, per-agent rate limits,
// one core session per endpoint and agent, body timeouts, draining and
// keep-alives.
//
// What a message means is the core's (package mcpcore): this package reads
// the MCP-Protocol-Version, Mcp-Method and Mcp-Name headers and hands them
// to the core ([mcpcore.Headers]), which checks them and decides; the era
// of a request without the modern _meta key comes from its version header
// ([mcpcore.IsLegacyVersion]), and legacy request ids and their
// notifications/cancelled are the core session's.
//
// mcphttp imports kernel, policy and mcpcore. It must not import store or
// commands: credentials and revisions come through Config's seams. It never
// prints (Config.Logf) and never exits.
package mcphttp
