// Package mcpcore owns the MCP protocol core every transport serves: the
// dual-era mapping (2026-07-28 stateless, 2025-11-25 / 2025-06-18 after
// initialize), server/discover, tools/list pages with signed cursors from
// the active revision, tools/call through a [kernel.Invoker] with the core
// envelope, progress, cancellation, subscriptions/listen and the launch
// binding. It imports no transport.
//
// A transport decodes one message ([Decode]), picks the [Session] it
// belongs to (stdio: the process; HTTP: the endpoint and agent) and hands it
// over with a [Reply]: the core answers through Respond (the final
// response), Send (a message that must precede it) and Hint (a notification
// that may be dropped), and learns from its Context that the caller went
// away, which cancels the request. Limits that are the protocol's (1 MiB in,
// 2 MiB out, the template's concurrency bounds, 30 s to read a revision)
// live here; framing, queues and timeouts are the transport's.
package mcpcore
