//go:build linux

// Command peer-mcpgo is the bench's mcp-go peer: an MCP server with one
// tool, trivial_ping, that runs the bench/trivial program named by its
// argument the way rukh runs it (bench/peerexec). With one argument it
// serves stdio; with a second, a listen address, it serves mcp-go's
// streamable HTTP server at /mcp there (stateless: one request, one
// answer, as rukh serve-http answers a modern request) and writes
// "listening on http://ADDR" to stderr.
package main

import (
	"context"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/rukh-dev/rukh/bench/peerexec"
)

func main() {
	if len(os.Args) != 2 && len(os.Args) != 3 {
		log.Fatal("usage: peer-mcpgo TRIVIAL [LISTEN]")
	}
	prog := os.Args[1]
	s := server.NewMCPServer("peer-mcpgo", "1.0.0")
	s.AddTool(mcp.NewTool("trivial_ping", mcp.WithDescription("Run the trivial program once.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if _, err := peerexec.Run(prog); err != nil {
				return nil, err
			}
			return mcp.NewToolResultText("ok"), nil
		})
	if len(os.Args) == 3 {
		ln, err := net.Listen("tcp", os.Args[2])
		if err != nil {
			log.Fatal(err)
		}
		mux := http.NewServeMux()
		mux.Handle("/mcp", server.NewStreamableHTTPServer(s, server.WithStateLess(true)))
		log.SetFlags(0)
		log.Printf("listening on http://%s", ln.Addr())
		log.Fatal(http.Serve(ln, mux))
	}
	if err := server.ServeStdio(s); err != nil {
		log.Fatal(err)
	}
}
