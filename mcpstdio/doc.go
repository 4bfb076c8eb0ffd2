// Package mcpstdio owns Rukh's MCP transport over stdio: a strict
// newline-delimited framing of JSON-RPC 2.0 with its reader limits and its
// bounded writer, serving one session of the protocol core (package
// mcpcore: both eras, discover, list, call, cursors, subscriptions, the
// launch binding). [Serve] runs one session; [IsolateStdout] keeps every
// other writer of the process off the protocol stream. What this page says
// about eras, calls and hints is the core's behaviour as stdio shows it.
//
// mcpstdio imports kernel, policy and mcpcore only. It never opens the store
// (the caller passes Active and Load), never reads os.Args, never exits, and
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
// _meta["io.modelcontextprotocol/subscriptionId"]; it ends with the
// client's notifications/cancelled (no response) or with the session: at
// end of input with no response, on the owner's cancel with the final
// {"resultType":"complete"} response carrying its subscriptionId. After a legacy initialize the same hint is sent untagged. The
// store is watched only while someone listens, and a hint is sent only when
// the launch endpoint's tool list (a digest of its tool objects) changed.
// Hints are dropped, never waited for, when the outgoing queue is full.
//
// # Launch binding
//
// Config.Launch (or, when nothing was published at start, the first
// revision that serves the endpoint on stdio) fixes the endpoint's
// namespace, subject and template. A revision that changes the namespace
// or subject, drops stdio from the endpoint's transports or removes the
// endpoint is refused: tools/list and tools/call answer -32603 saying what
// changed and to restart, logged once per revision. No older revision is
// served instead. Each invocation carries the caller (stdio, the endpoint,
// its subject) to the child.
//
// # Ending
//
// End of input (the stdio rule) and a broken transport stop every call
// without answering it. The end of Serve's ctx is the owner's cancel (a
// signal to serve-mcp): calls are stopped with the cause "the owner stopped
// the server" and answered cancelled, reason "cancelled by the owner (the
// server is stopping)", listen streams get their final response, the queue
// is flushed (each write bounded as always) and Serve returns ctx.Err().
//
// Discover and list run on the read loop. Discover reads nothing; list (and
// call) read the active revision, a pointer read and a copy when it is cached
// (only the active one is kept). A cache miss waits on the store, whose own
// lock timeout is 2 s, and the whole read is bounded at 30 s (docs/design.md,
// Limits): past that the request gets -32603, and the load, left to finish,
// fills the cache for the next one.
package mcpstdio
