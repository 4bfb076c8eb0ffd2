package commands

import (
	"context"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v3"
)

func (a *app) mcpConfigCmd() *cli.Command {
	return &cli.Command{
		Name:  "mcp-config",
		Usage: "print the snippet that registers this rukh endpoint with an MCP client",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "client", Value: "claude", Usage: "claude, cursor or vscode"},
			&cli.StringFlag{Name: "endpoint", Value: "local", Usage: "the endpoint to serve"},
			&cli.BoolFlag{Name: "json", Usage: "accepted for symmetry: the snippet is always JSON"},
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			exe, err := os.Executable()
			if err != nil {
				exe = "rukh"
			}
			if abs, err := filepath.Abs(exe); err == nil {
				exe = abs
			}
			ep := c.String("endpoint")
			if _, err := a.launch(ep); err != nil {
				return err
			}
			server := map[string]any{
				"command": exe,
				"args":    []string{"serve-mcp", "--endpoint", ep},
				"env":     map[string]string{"RUKH_HOME": a.store.Home()},
			}
			name := "rukh-" + ep
			switch c.String("client") {
			case "claude", "cursor":
				return printJSON(a.stdout, map[string]any{"mcpServers": map[string]any{name: server}})
			case "vscode":
				server["type"] = "stdio"
				return printJSON(a.stdout, map[string]any{"servers": map[string]any{name: server}})
			default:
				return usageErr("--client must be claude, cursor or vscode, got %q", c.String("client"))
			}
		},
	}
}
