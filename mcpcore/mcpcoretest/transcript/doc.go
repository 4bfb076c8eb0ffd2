// Package transcript runs the MCP core's golden transcripts and the
// in-process sessions transport tests script: a [Harness] serves one
// session inside a synctest bubble with a scripted client, over whatever
// transport the caller's [Serve] frames (stdio's lines, HTTP's requests),
// with a fake invoker ([Invoker]), a fake task host ([Tasks]) and the test
// catalogue of mcpcoretest. Test code only.
//
// It imports mcpcore and mcpcoretest and no transport: a transport's tests
// pass their Serve in. (It is not in mcpcoretest because mcpcore's own
// tests use that catalogue, and this package imports mcpcore.)
package transcript
