// Package mcpstdio owns Rukh's MCP adapter over stdio: a strict
// newline-delimited JSON-RPC 2.0 layer, the stateless 2026-07-28 era and the
// 2025-11-25 / 2025-06-18 initialize era on one process, tools/list paging
// from the active revision with signed cursors, and tools/call through a
// [kernel.Invoker]. [Serve] runs one session; [IsolateStdout] keeps every
// other writer of the process off the protocol stream.
//
// mcpstdio imports kernel and policy only. It never opens the store (the
// caller passes Active and Load), never reads os.Args, never exits, and
// writes nothing but protocol messages to the writer it is given.
//
// # Reader
//
// A message is one line of at most 1 MiB (1,048,576 bytes without its
// newline); blank lines are ignored and an unterminated last line at EOF
// still counts. Every line passes one strict JSON pass before anything is
// dispatched: valid UTF-8, valid escapes (no lone surrogates), no duplicate
// member names, one value, depth ≤ 32, ≤ 4,096 members and elements.
//
//   - Anything the strict reader refuses, including an over-long line, is
//     answered -32700 (parse error) with id null: the id was never trusted
//     (an over-long line is skipped to its newline unread). The message says
//     which rule failed.
//   - Valid JSON that is not a request (not an object, a batch, a wrong
//     "jsonrpc", a missing or non-string method, an id that is not a string
//     or an integer literal) is -32600, echoing the id only when it is valid.
//     Non-object params are -32602. A response from the client is ignored.
//   - A message whose first byte arrived must end within 2 s, and a blocked
//     write may last 2 s (Config.ReadTimeout/WriteTimeout); otherwise the
//     transport closes and every invocation is stopped.
//
// # Writer
//
// One writer drains a queue of at most 32 messages or 4 MiB. A progress
// notification that does not fit is dropped; a response that cannot be
// queued within the write timeout closes the transport. No message over
// 2 MiB is ever written: a tools/call result becomes an execution_failed
// envelope ("the result is too large …"), anything else -32603.
//
// # Eras
//
// A request whose params._meta carries io.modelcontextprotocol/protocolVersion
// is modern; initialize and ping without it are legacy, and after a legacy
// initialize so is every request without it except server/discover. Any
// other request is modern and fails its _meta check. Modern checks run in
// the order _meta keys (-32602), version (-32022 with {supported,
// requested}), method (-32601). era_legacy.go is only a mapping onto the same
// handlers: a call means and does the same on both eras.
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
// # Tools-changed hints
//
// With Config.Watch set, both eras announce tools.listChanged. A modern
// subscriptions/listen (checked like any modern request; at most 8 streams
// open) is acknowledged with the honoured subset, tools only, then gets
// notifications/tools/list_changed tagged with its id in
// _meta["io.modelcontextprotocol/subscriptionId"]; it never gets a
// response, and ends with the client's notifications/cancelled or with the
// session. After a legacy initialize the same hint is sent untagged. The
// store is watched only while someone listens, and a hint is sent only when
// the launch endpoint's tool list (a digest of its tool objects) changed.
// Hints are dropped, never waited for, when the outgoing queue is full.
//
// Discover and list run on the read loop: they are a pointer read and a copy
// (decoded revisions are cached, at most 4), so only a cache miss waits on
// the store, bounded by the store's own timeout.
package mcpstdio
