//go:build linux

// Command peer-mcpgo is the bench's mcp-go peer: an MCP stdio server with
// one tool, trivial_ping, that runs the bench/trivial program named by its
// argument the way rukh runs it (bench/peerexec).
package main

import (
	"context"
	"log"
	"os"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/rukh-dev/rukh/bench/peerexec"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: peer-mcpgo TRIVIAL")
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
	if err := server.ServeStdio(s); err != nil {
		log.Fatal(err)
	}
}
