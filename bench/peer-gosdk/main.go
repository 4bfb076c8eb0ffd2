//go:build linux

// Command peer-gosdk is the bench's go-sdk peer: an MCP server with one
// tool, trivial_ping, that runs the bench/trivial program named by its
// argument the way rukh runs it (bench/peerexec). With one argument it
// serves stdio; with a second, a listen address, it serves the SDK's
// streamable HTTP handler at /mcp there (stateless, JSON responses: one
// request, one answer, as rukh serve-http answers a modern request) and
// writes "listening on http://ADDR" to stderr.
package main

import (
	"context"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rukh-dev/rukh/bench/peerexec"
)

func main() {
	if len(os.Args) != 2 && len(os.Args) != 3 {
		log.Fatal("usage: peer-gosdk TRIVIAL [LISTEN]")
	}
	prog := os.Args[1]
	s := mcp.NewServer(&mcp.Implementation{Name: "peer-gosdk", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "trivial_ping", Description: "Run the trivial program once."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if _, err := peerexec.Run(prog); err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
	if len(os.Args) == 3 {
		ln, err := net.Listen("tcp", os.Args[2])
		if err != nil {
			log.Fatal(err)
		}
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
			&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
		mux := http.NewServeMux()
		mux.Handle("/mcp", h)
		log.SetFlags(0)
		log.Printf("listening on http://%s", ln.Addr())
		log.Fatal(http.Serve(ln, mux))
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
