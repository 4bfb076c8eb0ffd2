package kernel

import "testing"

// BenchmarkCheckJSONRequest is the strict pass over a tools/call request
// as both transports make it on every message.
func BenchmarkCheckJSONRequest(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"trivial_ping__811d177087b70a32f9162d86c742c549307d89fdb288c196daae1590d887e764","arguments":{}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := CheckJSON(line, JSONLimits{MaxDepth: 64, MaxMembers: 10000}); err != nil {
			b.Fatal(err)
		}
	}
}
