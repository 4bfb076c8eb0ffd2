package commands

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcphttp"
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
			&cli.StringFlag{Name: "name", Usage: "the `KEY` the server is registered under (default rukh-ENDPOINT); hosts name its tools mcp__KEY__TOOL, at most 64 characters"},
			&cli.BoolFlag{Name: "http", Usage: "an entry for serve-http (a URL and an Authorization header) instead of serve-mcp"},
			&cli.StringFlag{Name: "url", Value: "http://127.0.0.1:8787", Usage: "with --http: where serve-http listens (scheme://host:port)"},
			&cli.StringFlag{Name: "token-env", Value: "RUKH_TOKEN", Usage: "with --http: the environment variable the client reads the agent's token from"},
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
			key := policy.DefaultServerKey(ep)
			if c.IsSet("name") {
				key = c.String("name")
				if err := policy.CheckServerKey(key); err != nil {
					return usageErr("--name: %v", err)
				}
			}
			launch, err := a.launch(ep)
			if err != nil {
				return err
			}
			if c.Bool("http") {
				return a.mcpConfigHTTP(c, launch, ep, key)
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
			a.warnEndpoint(b, ep, key)
			server := map[string]any{
				"command": exe,
				"args":    []string{"serve-mcp", "--endpoint", ep},
				"env":     map[string]string{"RUKH_HOME": home},
			}
			name := key
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

// mcpConfigHTTP prints a client entry for serve-http: the endpoint's URL
// and, unless it takes anonymous callers, an Authorization header that
// names the agent's token by an environment variable (or, for VS Code, a
// prompted secret input): the token itself is never written to a config.
func (a *app) mcpConfigHTTP(c *cli.Command, launch *policy.Launch, ep, name string) error {
	if launch == nil {
		return &kernel.Error{Code: kernel.CodeNotFound, Message: "nothing is published: an HTTP entry needs the endpoint's namespace",
			Hint: "publish first ('rukh publish')"}
	}
	if !launch.Serves(policy.TransportHTTP) {
		return &kernel.Error{Code: kernel.CodeInvalid,
			Message: fmt.Sprintf("endpoint %q is not served over HTTP: its transports are %s", ep, strings.Join(launch.Transports, ", ")),
			Hint:    `add "http" to the endpoint's "transports" in the profile ('rukh policy set') and publish, or drop --http for a stdio entry`}
	}
	if b, _, err := a.activeBinding(); err == nil {
		a.warnEndpoint(b, ep, name)
	}
	base := strings.TrimRight(c.String("url"), "/")
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return usageErr("--url must be scheme://host:port of serve-http (http or https), got %q", c.String("url"))
	}
	env := c.String("token-env")
	if !envNameRE().MatchString(env) {
		return usageErr("--token-env must be an environment variable name, got %q", env)
	}
	server := map[string]any{"url": base + mcphttp.PathPrefix + launch.Namespace + "/" + ep}
	auth := launch.HTTPAuth != policy.HTTPAuthNone
	client := c.String("client")
	switch client {
	case "claude":
		server["type"] = "http"
		if auth {
			server["headers"] = map[string]string{"Authorization": "Bearer ${" + env + "}"}
		}
	case "cursor":
		if auth {
			server["headers"] = map[string]string{"Authorization": "Bearer ${env:" + env + "}"}
		}
	case "vscode":
		server["type"] = "http"
		out := map[string]any{"servers": map[string]any{name: server}}
		if auth {
			server["headers"] = map[string]string{"Authorization": "Bearer ${input:" + name + "-token}"}
			out["inputs"] = []map[string]any{{"type": "promptString", "id": name + "-token", "password": true,
				"description": fmt.Sprintf("the bearer token of a rukh agent of endpoint %s ('rukh agent add NAME --endpoint %s')", ep, ep)}}
		}
		return printJSON(a.stdout, out)
	default:
		return usageErr("--client must be claude, cursor or vscode, got %q", client)
	}
	if auth {
		fmt.Fprintf(a.stderr, "rukh: hint: set %s to an agent's token where the client runs; 'rukh agent add NAME --endpoint %s' prints one\n", env, ep)
	}
	return printJSON(a.stdout, map[string]any{"mcpServers": map[string]any{name: server}})
}

// compiled on first use: not every run pays for it at start
var envNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// warnEndpoint tells the person on stderr what agents would get wrong from
// the endpoint's published tools: names hosts reject (as they show them
// under server key: mcp__KEY__TOOL), or no tools at all.
func (a *app) warnEndpoint(b *policy.Binding, endpoint, key string) {
	if b == nil {
		return
	}
	var p *policy.Projection
	for i := range b.Endpoints {
		if b.Endpoints[i].Endpoint == endpoint {
			p = &b.Endpoints[i]
		}
	}
	if p == nil {
		return
	}
	served := policy.ServedToolNames(b, p)
	dflt, _ := policy.HostNamesWarning(endpoint, p.ToolNames, policy.DefaultServerKey(endpoint), served)
	warn := func(w policy.Warning) {
		fmt.Fprintf(a.stderr, "rukh: warning: %s\n", w.Message)
		if w.Fix != "" {
			fmt.Fprintf(a.stderr, "rukh: hint: %s\n", w.Fix)
		}
	}
	for _, r := range policy.Endpoints(b, false) {
		if r.Endpoint != endpoint {
			continue
		}
		for _, w := range r.Warnings {
			if w == dflt && key != policy.DefaultServerKey(endpoint) {
				continue // said below for the key chosen
			}
			warn(w)
		}
	}
	if key != policy.DefaultServerKey(endpoint) {
		if _, long := policy.LongNamesWarning(*p); !long {
			if w, ok := policy.HostNamesWarning(endpoint, p.ToolNames, key, served); ok {
				warn(w)
			}
		}
	}
}
