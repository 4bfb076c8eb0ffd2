package commands

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcpstdio"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
	"github.com/urfave/cli/v3"
)

func (a *app) serveMCPCmd() *cli.Command {
	return &cli.Command{
		Name:  "serve-mcp",
		Usage: "serve the published tools of an endpoint to an agent over MCP stdio",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "endpoint", Value: "local", Usage: "the profile endpoint this server is bound to for its whole life"},
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() > 0 {
				return usageErr("serve-mcp takes no arguments")
			}
			secret, err := a.store.Secret()
			if err != nil {
				return err
			}
			out := a.stdout
			if a.stdout == os.Stdout {
				// From here on only protocol messages reach the real fd 1.
				f, err := mcpstdio.IsolateStdout()
				if err != nil {
					return err
				}
				defer f.Close()
				out = f
			}
			cfg := mcpstdio.Config{
				Endpoint:      c.String("endpoint"),
				ServerName:    "rukh",
				ServerVersion: version(),
				Active:        a.store.Active,
				Load: func(n uint64) (b *policy.Binding, err error) {
					// decoded straight from the store's pages: a large
					// revision is never held twice
					err = a.store.ReadBinding(n, func(data []byte) (err error) {
						b, err = a.decodeBinding(store.RevisionID(n), data)
						return err
					})
					return b, err
				},
				Secret:      secret,
				Invoker:     a.runner,
				Diagnostics: a.saveDiagnostics,
				Logf: func(format string, args ...any) {
					fmt.Fprintf(a.stderr, "rukh: serve-mcp: "+format+"\n", args...)
				},
			}
			return mcpstdio.Serve(ctx, a.stdin, out, cfg)
		},
	}
}

// checkEndpoint refuses an endpoint the published profile does not name, so
// a typo is an error rather than an agent silently seeing no tools. With
// nothing published yet any well-formed name is accepted. serve-mcp does
// not call it: decoding a large revision would delay its start, so the
// server says the same on stderr when it first loads the revision.
func (a *app) checkEndpoint(name string) error {
	b, _, err := a.activeBinding()
	if err != nil || b == nil {
		return err
	}
	var names []string
	for _, p := range b.Endpoints {
		if p.Endpoint == name {
			return nil
		}
		names = append(names, p.Endpoint)
	}
	return kernel.Errorf(kernel.CodeNotFound, "the published profile has no endpoint %q", name).
		WithHint("published endpoints: " + strings.Join(names, ", ") + "; 'rukh policy show --published' shows them")
}
