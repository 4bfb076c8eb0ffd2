package commands

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcpclients"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/serve"
	"github.com/urfave/cli/v3"
)

func (a *app) mcpConfigCmd() *cli.Command {
	return &cli.Command{
		Name:  "mcp-config",
		Usage: "print (or --write) the entry that registers this rukh endpoint with an MCP client",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "client", Value: "claude", Usage: "claude (Claude Desktop), claude-code, cursor or vscode"},
			&cli.StringFlag{Name: "endpoint", Value: "local", Usage: "the endpoint to serve"},
			&cli.StringFlag{Name: "name", Usage: "the `KEY` the server is registered under (default rukh-ENDPOINT); hosts name its tools mcp__KEY__TOOL, at most 64 characters"},
			&cli.BoolFlag{Name: "http", Usage: "an entry for serve-http (a URL and an Authorization header) instead of serve-mcp"},
			&cli.StringFlag{Name: "url", Value: "http://127.0.0.1:8787", Usage: "with --http: where serve-http listens (scheme://host:port)"},
			&cli.StringFlag{Name: "token-env", Value: "RUKH_TOKEN", Usage: "with --http: the environment variable the client reads the agent's token from"},
			&cli.BoolFlag{Name: "write", Usage: "write the entry into the client's config file (a backup first; every other server and setting kept)"},
			&cli.StringFlag{Name: "file", Usage: "with --write or --print-path: this `FILE` instead of the client's user config (a project's .vscode/mcp.json, .cursor/mcp.json or .mcp.json)"},
			&cli.BoolFlag{Name: "print-path", Usage: "print the config file the client reads on this platform, and stop"},
			&cli.BoolFlag{Name: "json", Usage: "accepted for symmetry: the snippet is always JSON; with --write, what was done as a JSON object"},
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			return a.runMCPConfig(mcpConfigOptions{
				client:    c.String("client"),
				endpoint:  c.String("endpoint"),
				name:      c.String("name"),
				nameSet:   c.IsSet("name"),
				http:      c.Bool("http"),
				url:       c.String("url"),
				tokenEnv:  c.String("token-env"),
				write:     c.Bool("write"),
				file:      c.String("file"),
				fileSet:   c.IsSet("file"),
				printPath: c.Bool("print-path"),
				json:      c.Bool("json"),
			})
		},
	}
}

// mcpConfigOptions are mcp-config's flags.
type mcpConfigOptions struct {
	client, endpoint string
	name             string // the server key; the default when !nameSet
	nameSet          bool
	http             bool
	url, tokenEnv    string // with http
	write            bool
	file             string
	fileSet          bool
	printPath        bool
	json             bool
}

// runMCPConfig prints the client entry for an endpoint, or the client's
// config file (printPath), or writes the entry into that file (write).
func (a *app) runMCPConfig(o mcpConfigOptions) error {
	client := o.client
	if !slices.Contains(mcpclients.Names, client) {
		return usageErr("--client must be claude, claude-code, cursor or vscode, got %q", client)
	}
	file := o.file
	switch {
	case o.fileSet && file == "":
		return usageErr("--file needs a file name")
	case o.fileSet && !o.write && !o.printPath:
		return usageErr("--file goes with --write or --print-path")
	}
	// The file is looked for only when it is needed: printing the
	// snippet works without a HOME.
	if file == "" && (o.printPath || o.write && client != mcpclients.ClaudeCode) {
		p, err := mcpclients.ConfigPath(client, runtime.GOOS, a.h.Env)
		if err != nil {
			return err
		}
		file = p
	}
	if o.printPath {
		_, err := fmt.Fprintln(a.stdout, file)
		return err
	}
	ep := o.endpoint
	key := policy.DefaultServerKey(ep)
	if o.nameSet {
		key = o.name
		if err := policy.CheckServerKey(key); err != nil {
			return usageErr("--name: %v", err)
		}
	}
	launch, err := serve.Launch(a.h, ep)
	if err != nil {
		return err
	}
	var e *mcpclients.Entry
	if o.http {
		if e, err = a.mcpConfigHTTP(o, launch, key); err != nil {
			return err
		}
	} else if e, err = a.mcpConfigStdio(client, ep, key); err != nil {
		return err
	}
	switch {
	case o.write && client == mcpclients.ClaudeDesktop && o.http && !o.fileSet:
		return kernel.Errorf(kernel.CodeUnsupported, "Claude Desktop does not connect to HTTP servers named in its config file").
			WithHint("add the URL under Settings > Connectors in Claude Desktop, or write the stdio entry (drop --http), or use --client claude-code")
	case client == mcpclients.ClaudeCode && !o.fileSet:
		return a.printClaudeAdd(e, o.write)
	case o.write:
		return a.writeClientConfig(e, file, o.json)
	}
	return printJSON(a.stdout, e.Snippet())
}

func (a *app) mcpConfigStdio(client, ep, key string) (*mcpclients.Entry, error) {
	exe, err := os.Executable()
	if err != nil {
		exe = "rukh"
	}
	if abs, err := filepath.Abs(exe); err == nil {
		exe = abs
	}
	// The home this was run with, absolute: a host that passes no
	// RUKH_HOME (or starts in another directory) still reaches it.
	home, err := filepath.Abs(a.h.Store.Home())
	if err != nil {
		return nil, kernel.Errorf(kernel.CodeInvalid, "cannot resolve the home %s", a.h.Store.Home()).Wrap(err)
	}
	b, _, err := a.h.ActiveBinding()
	if err != nil {
		return nil, err
	}
	a.warnEndpoint(b, ep, key)
	return mcpclients.StdioEntry(client, key, exe, []string{"serve-mcp", "--endpoint", ep}, map[string]string{"RUKH_HOME": home}), nil
}

// mcpConfigHTTP builds a client entry for serve-http: the endpoint's URL
// and, unless it takes anonymous callers, an Authorization header that
// names the agent's token by an environment variable (or, for VS Code, a
// prompted secret input): the token itself is never written to a config.
func (a *app) mcpConfigHTTP(o mcpConfigOptions, launch *policy.Launch, name string) (*mcpclients.Entry, error) {
	ep := o.endpoint
	if launch == nil {
		return nil, kernel.Errorf(kernel.CodeNotFound, "nothing is published: an HTTP entry needs the endpoint's namespace").
			WithHint("publish first ('rukh publish')")
	}
	if !launch.Serves(policy.TransportHTTP) {
		return nil, kernel.Errorf(kernel.CodeInvalid, "endpoint %q is not served over HTTP: its transports are %s", ep, strings.Join(launch.Transports, ", ")).
			WithHint(`add "http" to the endpoint's "transports" in the profile ('rukh policy set') and publish, or drop --http for a stdio entry`)
	}
	if b, _, err := a.h.ActiveBinding(); err == nil {
		a.warnEndpoint(b, ep, name)
	}
	base := strings.TrimRight(o.url, "/")
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return nil, usageErr("--url must be scheme://host:port of serve-http (http or https), got %q", o.url)
	}
	env := o.tokenEnv
	if !isEnvName(env) {
		return nil, usageErr("--token-env must be an environment variable name, got %q", env)
	}
	var auth *mcpclients.Auth
	if launch.HTTPAuth != policy.HTTPAuthNone {
		auth = &mcpclients.Auth{TokenEnv: env,
			Prompt: fmt.Sprintf("the bearer token of a rukh agent of endpoint %s ('rukh agent add NAME --endpoint %s')", ep, ep)}
	}
	e := mcpclients.HTTPEntry(o.client, name, base+serve.EndpointPath(launch.Namespace, ep), auth)
	if auth != nil && len(e.Inputs) == 0 { // a client that reads the token from its environment
		fmt.Fprintf(a.stderr, "rukh: hint: set %s to an agent's token where the client runs; 'rukh agent add NAME --endpoint %s' prints one\n", env, ep)
	}
	return e, nil
}

// printClaudeAdd prints the 'claude mcp add-json' line that registers the
// entry with Claude Code for every project: rukh leaves ~/.claude.json,
// which Claude Code rewrites while it runs, to Claude Code's own command.
func (a *app) printClaudeAdd(e *mcpclients.Entry, write bool) error {
	line, err := mcpclients.ClaudeAddLine(e)
	if err != nil {
		return err
	}
	fmt.Fprintln(a.stdout, line)
	if write {
		fmt.Fprintf(a.stderr, "rukh: hint: rukh does not edit ~/.claude.json, which Claude Code rewrites while it runs: run the line above to register %s for every project "+
			"('claude mcp remove --scope user %s' first if it is there), or write a project's .mcp.json with --file .mcp.json\n", e.Key, e.Key)
	}
	return nil
}

// isEnvName: ^[A-Za-z_][A-Za-z0-9_]*$, by hand (the regexp package is not
// linked into rukh: docs/performance.md).
func isEnvName(s string) bool {
	for i := range len(s) {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

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

// writeClientConfig writes the entry into the client's config file
// (mcpclients.Write) and says what it did.
func (a *app) writeClientConfig(e *mcpclients.Entry, file string, asJSON bool) error {
	ch, err := mcpclients.Write(file, e, time.Now())
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(a.stdout, ch)
	}
	switch ch.Action {
	case mcpclients.Created:
		fmt.Fprintf(a.stdout, "created %s with %s\n", ch.Path, e.Key)
	case mcpclients.Added:
		fmt.Fprintf(a.stdout, "added %s to %s; every other server and setting is kept\n", e.Key, ch.Path)
	case mcpclients.Replaced:
		fmt.Fprintf(a.stdout, "replaced the entry %s in %s; every other server and setting is kept\n", e.Key, ch.Path)
	case mcpclients.Unchanged:
		fmt.Fprintf(a.stdout, "%s in %s is already this entry: nothing changed\n", e.Key, ch.Path)
	}
	if ch.Through != "" {
		fmt.Fprintf(a.stdout, "(written through the symbolic link %s)\n", ch.Through)
	}
	if ch.Backup != "" {
		fmt.Fprintf(a.stdout, "the previous file is saved as %s\n", ch.Backup)
	}
	if e.Client == mcpclients.ClaudeDesktop && ch.Action != mcpclients.Unchanged {
		fmt.Fprintln(a.stderr, "rukh: hint: quit and reopen Claude Desktop to load it")
	}
	return nil
}
