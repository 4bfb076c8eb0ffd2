// Package kernel owns Rukh's command model: the extension manifest and its
// rules, the input grammar shared by the CLI and MCP, the canonical
// invocation request, the invocation of managed commands, and the one error
// type every edge maps to its own protocol.
//
// kernel imports no other rukh package. It never exits, never reads
// os.Args and never writes os.Stdout: callers hand it readers and writers.
package kernel
