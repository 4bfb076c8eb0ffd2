//go:build linux

// Command peer-gosdk is the bench's go-sdk peer: an MCP stdio server with
// one tool, trivial_ping, that runs the bench/trivial program named by its
// argument the way rukh runs it (bench/peerexec).
package main

import (
	"context"
	"log"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rukh-dev/rukh/bench/peerexec"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: peer-gosdk TRIVIAL")
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
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
