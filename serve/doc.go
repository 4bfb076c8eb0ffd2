// Package serve is what a serving process runs, for both transports: the
// catalogue of the active revision read from the store and kept while the
// store is unchanged, one assembly of an endpoint's serving stack (every
// call pinned, audited and its diagnostics kept), the task host, the
// credential cache, serve-http's metrics and its drain, and the two
// process bodies, Stdio (serve-mcp over mcpstdio) and HTTP (serve-http
// over mcphttp). It logs through the functions it is given and returns
// errors; the CLI (commands) owns the flags, the log's writer and the exit
// codes.
//
// serve imports home, mcpcore, the two transports, tasks, store, policy
// and kernel. It never imports urfave/cli or commands; home and the
// transports never import serve.
package serve
