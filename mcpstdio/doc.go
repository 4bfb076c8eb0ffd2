// Package mcpstdio owns Rukh's MCP transport over stdio: a strict
// newline-delimited framing of JSON-RPC 2.0 with its reader limits and its
// bounded writer, serving one session of the protocol core. [Serve] runs
// one session; [IsolateStdout] keeps every other writer of the process off
// the protocol stream. What a message means (eras, discover, list, call,
// cursors, subscriptions, tasks, the launch binding) is the core's and is
// documented in package mcpcore.
//
// mcpstdio imports kernel, policy and mcpcore only. It never opens the store
// (the caller passes Active and Load), never reads os.Args, never exits, and
// writes nothing but protocol messages to the writer it is given.
//
// # Reader
//
// A message is one line of at most 1 MiB (1,048,576 bytes without its
// newline); blank lines are ignored and an unterminated last line at EOF
// still counts. Each line is checked by the core's strict reader
// (mcpcore.Decode); an over-long line is answered -32700 with id null and
// skipped to its newline unread. A message whose first byte arrived must
// end within 2 s, and a blocked write may last 2 s
// (Config.ReadTimeout/WriteTimeout); otherwise the transport closes and
// every invocation is stopped.
//
// # Writer
//
// One writer drains a queue of at most 32 messages or 4 MiB. A progress
// notification that does not fit is dropped; a response that cannot be
// queued within the write timeout closes the transport.
//
// # Ending
//
// End of input (the stdio rule) and a broken transport stop every call
// without answering it. The end of Serve's ctx is the owner's cancel (a
// signal to serve-mcp): the core answers calls and listen streams as its
// doc says, the queue is flushed (each write bounded as always) and Serve
// returns ctx.Err().
//
// Discover and list run on the read loop; a call runs on its own goroutine.
package mcpstdio
