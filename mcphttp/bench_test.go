package mcphttp

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/rukh-dev/rukh/kernel"
)

// BenchmarkCall is one tools/call over a kept-alive connection, through
// net/http's server and this package's handler, against an invoker that
// answers at once: what serving a call over HTTP costs besides the call.
func BenchmarkCall(b *testing.B) {
	c := &creds{byTk: map[string]kernel.Credential{
		"key": {Agent: "a", Endpoint: "e", Kind: kernel.CredentialStatic, Hash: kernel.TokenHash{1}},
	}}
	u := newTestServer(b, c, &countingInvoker{})
	line := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"std","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	host := strings.TrimPrefix(u, "http://")
	host = host[:strings.Index(host, "/")]
	b.RunParallel(func(pb *testing.PB) {
		conn, err := net.Dial("tcp", host)
		if err != nil {
			b.Error(err)
			return
		}
		defer conn.Close()
		br, bw := bufio.NewReader(conn), bufio.NewWriter(conn)
		for pb.Next() {
			r, _ := http.NewRequest("POST", u, strings.NewReader(line))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Accept", "application/json, text/event-stream")
			r.Header.Set("Mcp-Method", "tools/call")
			r.Header.Set("Mcp-Name", "std")
			r.Header.Set("MCP-Protocol-Version", "2026-07-28")
			r.Header.Set("Authorization", "Bearer key")
			if err := r.Write(bw); err != nil {
				b.Error(err)
				return
			}
			if err := bw.Flush(); err != nil {
				b.Error(err)
				return
			}
			res, err := http.ReadResponse(br, r)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				b.Errorf("status %d", res.StatusCode)
				return
			}
		}
	})
}
