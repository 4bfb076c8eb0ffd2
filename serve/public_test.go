package serve

import (
	"strings"
	"testing"

	"github.com/rukh-dev/rukh/kernel"
)

func TestParsePublicURL(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{in: "https://mcp.example.com", want: "https://mcp.example.com"},
		{in: "https://mcp.example.com/", want: "https://mcp.example.com"},
		{in: "http://127.0.0.1:8787", want: "http://127.0.0.1:8787"},
		{in: "https://[::1]:443", want: "https://[::1]"},
		{in: "https://[::1]:8443", want: "https://[::1]:8443"},
		{in: "https://MCP.Example.com", want: "https://mcp.example.com"},
		{in: "https://mcp.example.com:443", want: "https://mcp.example.com"},
		{in: "http://mcp.example.com:80", want: "http://mcp.example.com"},
		{in: "http://mcp.example.com:443", want: "http://mcp.example.com:443"},
		{in: "https://mcp.example.com:", want: "https://mcp.example.com"},
		{in: "https://mcp.example.com:0443", want: "https://mcp.example.com"},
		{in: "https://mcp.example.com:08443", want: "https://mcp.example.com:8443"},
		{in: "https://mcp.example.com:0", err: "no valid port"},
		{in: "https://mcp.example.com:65536", err: "no valid port"},
		{in: "mcp.example.com", err: "absolute http or https"},
		{in: "ftp://mcp.example.com", err: "absolute http or https"},
		{in: "https://", err: "no host"},
		{in: "https://u:p@mcp.example.com", err: "user or password"},
		{in: "https://mcp.example.com/?a=b", err: "query"},
		{in: "https://mcp.example.com?", err: "query"},
		{in: "https://mcp.example.com/#x", err: "fragment"},
		{in: "https://mcp.example.com/rukh", err: "path"},
		{in: "https://mcp.example.com/%zz", err: "not a URL"},
	} {
		got, err := ParsePublicURL(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || kernel.ErrorCode(err) != kernel.CodeUsage {
				t.Errorf("%q: got %q, %v; want a usage error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
