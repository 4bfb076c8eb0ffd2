// Package mcpcore owns the MCP protocol core every transport serves: the
// dual-era mapping (2026-07-28 stateless, 2025-11-25 / 2025-06-18 after
// initialize), server/discover, tools/list pages with signed cursors from
// the active revision, tools/call through a [kernel.Invoker] with the core
// envelope, progress, cancellation, subscriptions/listen, the tasks
// extension and the launch binding. Every protocol rule is written here
// once; a transport only frames messages and maps them to its own terms.
//
// mcpcore imports kernel and policy; it imports no transport (mcpstdio,
// mcphttp), never opens the store (the caller passes Active and View),
// never prints and never exits.
//
// A transport decodes one message ([Decode]), picks the [Session] it
// belongs to (stdio: the process; HTTP: the endpoint and agent) and hands it
// over with a [Reply]: the core answers through Respond (the final
// response), Send (a message that must precede it) and Hint (a notification
// that may be dropped), and learns from its Context that the caller went
// away, which cancels the request. Limits that are the protocol's (1 MiB in,
// 2 MiB out, the template's concurrency bounds, 30 s to read a revision)
// live here; framing, queues and timeouts are the transport's.
//
// # Messages
//
// Every message passes one strict JSON pass before anything is dispatched:
// valid UTF-8, valid escapes (no lone surrogates), no duplicate member
// names, one value, depth ≤ 32, ≤ 4,096 members and elements. Anything it
// refuses is -32700 (parse error) with id null: the id was never trusted;
// the message says which rule failed. Valid JSON that is not a request (not
// an object, a batch, a wrong "jsonrpc", a missing or non-string method, an
// id that is not a string or an integer literal) is -32600, echoing the id
// only when it is valid. Non-object params are -32602. A response from the
// client is ignored. No message over 2 MiB is ever answered: a tools/call
// result becomes an execution_failed envelope ("the result is too large
// …"), anything else -32603.
//
// # Eras
//
// A request whose params._meta carries io.modelcontextprotocol/protocolVersion
// is modern. On a session ([Session.Handle], stdio) initialize and ping
// without it are legacy, and after a legacy initialize so is every request
// without it except server/discover; any other request is modern and fails
// its _meta check. A transport that classifies each request itself
// ([Session.HandleEra], HTTP by its MCP-Protocol-Version header and
// [IsLegacyVersion]) says which era a request is. initialize negotiates
// 2025-11-25 or 2025-06-18; any other requested version is answered with
// 2025-11-25. Modern checks run in the order _meta keys (-32602), the
// transport's headers against the body when it has them (-32020, [Headers];
// the name header only for the methods [Request.RoutedName] routes), version
// (-32022 with {supported, requested}), method (-32601). era_legacy.go is
// only a mapping onto the same handlers: a call means and does the same on
// both eras.
//
// # Calls
//
// tools/call resolves the exact name in the active revision's projection for
// the launch endpoint and pins that revision's declaration and release for
// the whole call. Unknown, stale and invisible names get one -32602 answer.
// Input, interaction and load checks that fail give a completed result with
// outcome "rejected" and run nothing. Concurrency is bounded by the
// template: maxConcurrent invocations running and maxHeld calls admitted but
// not yet answered (running, or with a response waiting to be written);
// over either bound a call is rejected at once. notifications/cancelled
// cancels the call and suppresses its response, even one already queued.
//
// Request ids are the session's on stdio: a call or listen stream whose id
// one still in flight has is refused (-32600, "the request id is already in
// use"). On a per-request session (HTTP, [SessionConfig.PerRequest]) modern
// requests stand alone, and only legacy requests share one space of ids:
// one is held from HandleEra until the transport ends it, another legacy
// request with that id is refused the same way, and notifications/cancelled
// naming it ends it through its Reply ([Canceller]).
//
// # Progressive discovery
//
// An endpoint whose revision says discovery "progressive" lists only its
// direct tools, then three tools named by its naming mode (discovery.go):
// search ranks every tool the endpoint publishes from the revision's index
// (Catalog.Search), describe answers one tool object as a direct endpoint
// would list it (Catalog.Tool), and call hands the request to tools/call
// with the tool it names and its arguments: resolution and pinning,
// checks, credential and level, tasks, outcomes, progress and errors are
// tools/call's. An unknown, stale or invisible name gets tools/call's
// answer, which there says to search again. Every published tool stays
// callable by tools/call.
//
// # Tools-changed hints
//
// With Config.Watch set, both eras announce tools.listChanged (a legacy
// client only where the session has a session-wide channel,
// [SessionConfig.Hint]). A modern subscriptions/listen (checked like any
// modern request; at most 8 streams open) is acknowledged with the honoured
// subset, tools only, then gets notifications/tools/list_changed tagged with
// its id in _meta["io.modelcontextprotocol/subscriptionId"]; it ends with
// the client's notifications/cancelled or its caller going away (no
// response), or with the session: at shutdown with no response, on the
// owner's cancel with the final {"resultType":"complete"} response carrying
// its subscriptionId. After a legacy initialize the same hint is sent
// untagged. The store is watched only while someone listens, and a hint is
// sent only when the launch endpoint's tool list (a digest of its tool
// objects) changed. Hints are dropped, never waited for, when the outgoing
// queue is full.
//
// # Launch binding
//
// Config.Launch (or, when nothing was published at start, the first
// revision that serves the endpoint on the transport) fixes the endpoint's
// namespace, subject and template. A revision that changes the namespace
// or subject, drops the transport from the endpoint's transports or removes
// the endpoint is refused: tools/list and tools/call answer -32603 saying
// what changed and to restart, logged once per revision. No older revision
// is served instead. Each invocation carries the caller (the transport, the
// endpoint, its subject, or the transport's authenticated agent) to the
// child.
//
// # Ending
//
// [Session.Shutdown] stops every call without answering it. The owner's
// cancel ([Session.OwnerCancel]) stops calls with the cause "the owner
// stopped the server" and answers them cancelled, reason "cancelled by the
// owner (the server is stopping)", and listen streams get their final
// response.
//
// # Reading the revision
//
// Discover reads nothing; list and call read the active revision, a pointer
// read and a copy when it is cached (only the active one is kept). A cache
// miss waits on the store, whose own lock timeout is 2 s, and the whole read
// is bounded at 30 s (docs/design.md, Limits): past that the request gets
// -32603, and the load, left to finish, fills the cache for the next one.
package mcpcore
