package commands

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
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
			// The home this was run with, absolute: a host that passes no
			// RUKH_HOME (or starts in another directory) still reaches it.
			home, err := filepath.Abs(a.store.Home())
			if err != nil {
				return kernel.Errorf(kernel.CodeInvalid, "cannot resolve the home %s", a.store.Home()).Wrap(err)
			}
			b, _, err := a.activeBinding()
			if err != nil {
				return err
			}
			a.warnEndpoint(b, ep)
			server := map[string]any{
				"command": exe,
				"args":    []string{"serve-mcp", "--endpoint", ep},
				"env":     map[string]string{"RUKH_HOME": home},
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

// warnEndpoint tells the person on stderr what agents would get wrong from
// the endpoint's published tools: names hosts reject, or no tools at all.
func (a *app) warnEndpoint(b *policy.Binding, endpoint string) {
	if b == nil {
		return
	}
	for _, r := range policy.Endpoints(b, false) {
		if r.Endpoint != endpoint {
			continue
		}
		for _, w := range r.Warnings {
			fmt.Fprintf(a.stderr, "rukh: warning: %s\n", w.Message)
			if w.Fix != "" {
				fmt.Fprintf(a.stderr, "rukh: hint: %s\n", w.Fix)
			}
		}
	}
}
