package commands

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcphttp"
	"github.com/rukh-dev/rukh/policy"
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
			client := c.String("client")
			if !slices.Contains(mcpClients, client) {
				return usageErr("--client must be claude, claude-code, cursor or vscode, got %q", client)
			}
			file := c.String("file")
			switch {
			case c.IsSet("file") && file == "":
				return usageErr("--file needs a file name")
			case c.IsSet("file") && !c.Bool("write") && !c.Bool("print-path"):
				return usageErr("--file goes with --write or --print-path")
			}
			// The file is looked for only when it is needed: printing the
			// snippet works without a HOME.
			if file == "" && (c.Bool("print-path") || c.Bool("write") && client != "claude-code") {
				p, err := clientConfigPath(client, runtime.GOOS, a.h.Env)
				if err != nil {
					return err
				}
				file = p
			}
			if c.Bool("print-path") {
				_, err := fmt.Fprintln(a.stdout, file)
				return err
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
			var e *clientEntry
			if c.Bool("http") {
				if e, err = a.mcpConfigHTTP(c, launch, ep, key); err != nil {
					return err
				}
			} else if e, err = a.mcpConfigStdio(client, ep, key); err != nil {
				return err
			}
			switch {
			case c.Bool("write") && client == "claude" && c.Bool("http") && !c.IsSet("file"):
				return &kernel.Error{Code: kernel.CodeUnsupported,
					Message: "Claude Desktop does not connect to HTTP servers named in its config file",
					Hint:    "add the URL under Settings > Connectors in Claude Desktop, or write the stdio entry (drop --http), or use --client claude-code"}
			case client == "claude-code" && !c.IsSet("file"):
				return a.printClaudeAdd(e, c.Bool("write"))
			case c.Bool("write"):
				return a.writeClientConfig(e, file, c.Bool("json"))
			}
			return printJSON(a.stdout, e.snippet())
		},
	}
}

// mcpClients are the clients mcp-config knows the formats and files of.
var mcpClients = []string{"claude", "claude-code", "cursor", "vscode"}

// clientEntry is one server entry and where it goes in a client's file.
type clientEntry struct {
	client  string
	section string // the object the servers are kept in
	key     string
	server  map[string]any
	inputs  []map[string]any // VS Code's prompted inputs the entry uses
}

func (e *clientEntry) snippet() map[string]any {
	out := map[string]any{e.section: map[string]any{e.key: e.server}}
	if len(e.inputs) > 0 {
		out["inputs"] = e.inputs
	}
	return out
}

// clientConfigPath is the file where client keeps a user's MCP servers on
// platform goos, from the environment alone (HOME, XDG_CONFIG_HOME): Claude
// Desktop and VS Code under the platform's application-data directory
// (macOS: ~/Library/Application Support; elsewhere $XDG_CONFIG_HOME or
// ~/.config), Cursor in ~/.cursor, Claude Code in ~/.claude.json.
func clientConfigPath(client, goos string, env func(string) string) (string, error) {
	home := env("HOME")
	if home == "" || !filepath.IsAbs(home) {
		return "", (&kernel.Error{Code: kernel.CodeInvalid, Message: "cannot find the client's config file: HOME is unset"}).
			WithHint("name the file with --file")
	}
	if goos == "windows" {
		return "", (&kernel.Error{Code: kernel.CodeUnsupported, Message: "rukh does not know the client config files of Windows"}).
			WithHint("name the file with --file")
	}
	appData := filepath.Join(home, ".config")
	if goos == "darwin" {
		appData = filepath.Join(home, "Library", "Application Support")
	} else if x := env("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		appData = x
	}
	switch client {
	case "claude":
		return filepath.Join(appData, "Claude", "claude_desktop_config.json"), nil
	case "vscode":
		return filepath.Join(appData, "Code", "User", "mcp.json"), nil
	case "cursor":
		return filepath.Join(home, ".cursor", "mcp.json"), nil
	case "claude-code":
		return filepath.Join(home, ".claude.json"), nil
	}
	return "", usageErr("--client must be claude, claude-code, cursor or vscode, got %q", client)
}

func (a *app) mcpConfigStdio(client, ep, key string) (*clientEntry, error) {
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
	e := &clientEntry{client: client, section: "mcpServers", key: key, server: map[string]any{
		"command": exe,
		"args":    []string{"serve-mcp", "--endpoint", ep},
		"env":     map[string]string{"RUKH_HOME": home},
	}}
	switch client {
	case "vscode":
		e.section = "servers"
		e.server["type"] = "stdio"
	case "claude-code":
		e.server["type"] = "stdio"
	}
	return e, nil
}

// mcpConfigHTTP builds a client entry for serve-http: the endpoint's URL
// and, unless it takes anonymous callers, an Authorization header that
// names the agent's token by an environment variable (or, for VS Code, a
// prompted secret input): the token itself is never written to a config.
func (a *app) mcpConfigHTTP(c *cli.Command, launch *policy.Launch, ep, name string) (*clientEntry, error) {
	if launch == nil {
		return nil, &kernel.Error{Code: kernel.CodeNotFound, Message: "nothing is published: an HTTP entry needs the endpoint's namespace",
			Hint: "publish first ('rukh publish')"}
	}
	if !launch.Serves(policy.TransportHTTP) {
		return nil, &kernel.Error{Code: kernel.CodeInvalid,
			Message: fmt.Sprintf("endpoint %q is not served over HTTP: its transports are %s", ep, strings.Join(launch.Transports, ", ")),
			Hint:    `add "http" to the endpoint's "transports" in the profile ('rukh policy set') and publish, or drop --http for a stdio entry`}
	}
	if b, _, err := a.h.ActiveBinding(); err == nil {
		a.warnEndpoint(b, ep, name)
	}
	base := strings.TrimRight(c.String("url"), "/")
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return nil, usageErr("--url must be scheme://host:port of serve-http (http or https), got %q", c.String("url"))
	}
	env := c.String("token-env")
	if !envNameRE().MatchString(env) {
		return nil, usageErr("--token-env must be an environment variable name, got %q", env)
	}
	client := c.String("client")
	e := &clientEntry{client: client, section: "mcpServers", key: name,
		server: map[string]any{"url": base + mcphttp.PathPrefix + launch.Namespace + "/" + ep}}
	auth := launch.HTTPAuth != policy.HTTPAuthNone
	switch client {
	case "claude", "claude-code":
		e.server["type"] = "http"
		if auth {
			e.server["headers"] = map[string]string{"Authorization": "Bearer ${" + env + "}"}
		}
	case "cursor":
		if auth {
			e.server["headers"] = map[string]string{"Authorization": "Bearer ${env:" + env + "}"}
		}
	case "vscode":
		e.section = "servers"
		e.server["type"] = "http"
		if auth {
			e.server["headers"] = map[string]string{"Authorization": "Bearer ${input:" + name + "-token}"}
			e.inputs = []map[string]any{{"type": "promptString", "id": name + "-token", "password": true,
				"description": fmt.Sprintf("the bearer token of a rukh agent of endpoint %s ('rukh agent add NAME --endpoint %s')", ep, ep)}}
		}
	}
	if auth && client != "vscode" {
		fmt.Fprintf(a.stderr, "rukh: hint: set %s to an agent's token where the client runs; 'rukh agent add NAME --endpoint %s' prints one\n", env, ep)
	}
	return e, nil
}

// printClaudeAdd prints the 'claude mcp add-json' line that registers the
// entry with Claude Code for every project. Claude Code keeps its servers in
// ~/.claude.json together with its own state and rewrites that file while
// it runs, so rukh leaves the edit to Claude Code's own command.
func (a *app) printClaudeAdd(e *clientEntry, write bool) error {
	b, err := json.Marshal(e.server, json.Deterministic(true), jsontext.EscapeForHTML(false))
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "claude mcp add-json --scope user %s %s\n", e.key, shellQuoteArg(string(b)))
	if write {
		fmt.Fprintf(a.stderr, "rukh: hint: rukh does not edit ~/.claude.json, which Claude Code rewrites while it runs: run the line above to register %s for every project "+
			"('claude mcp remove --scope user %s' first if it is there), or write a project's .mcp.json with --file .mcp.json\n", e.key, e.key)
	}
	return nil
}

// shellQuoteArg quotes s as one word for a POSIX shell.
func shellQuoteArg(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
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

// configChange is what writing an entry did to a client's config file.
type configChange struct {
	Path    string `json:"path"`
	Action  string `json:"action"` // created, added, replaced or unchanged
	Backup  string `json:"backup,omitempty"`
	Through string `json:"symlink,omitempty"` // the symbolic link written through
}

// writeClientConfig puts the entry into the client's config file in place:
// every other member and server is kept as it was, an entry of the same
// key is replaced, the old file is copied aside first, and the new one is
// renamed over it so a reader never sees half a file.
func (a *app) writeClientConfig(e *clientEntry, file string, asJSON bool) error {
	ch, err := writeEntry(file, e, time.Now())
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(a.stdout, ch)
	}
	switch ch.Action {
	case "created":
		fmt.Fprintf(a.stdout, "created %s with %s\n", ch.Path, e.key)
	case "added":
		fmt.Fprintf(a.stdout, "added %s to %s; every other server and setting is kept\n", e.key, ch.Path)
	case "replaced":
		fmt.Fprintf(a.stdout, "replaced the entry %s in %s; every other server and setting is kept\n", e.key, ch.Path)
	case "unchanged":
		fmt.Fprintf(a.stdout, "%s in %s is already this entry: nothing changed\n", e.key, ch.Path)
	}
	if ch.Through != "" {
		fmt.Fprintf(a.stdout, "(written through the symbolic link %s)\n", ch.Through)
	}
	if ch.Backup != "" {
		fmt.Fprintf(a.stdout, "the previous file is saved as %s\n", ch.Backup)
	}
	if e.client == "claude" && ch.Action != "unchanged" {
		fmt.Fprintln(a.stderr, "rukh: hint: quit and reopen Claude Desktop to load it")
	}
	return nil
}

// writeEntry is writeClientConfig's file work; now names the backup.
func writeEntry(file string, e *clientEntry, now time.Time) (*configChange, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, kernel.Errorf(kernel.CodeInvalid, "cannot resolve %s", file).Wrap(err)
	}
	ch := &configChange{Path: abs}
	// A config kept as a symbolic link (a dotfiles checkout) stays one:
	// the file it points to is what changes.
	if fi, err := os.Lstat(abs); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, (&kernel.Error{Code: kernel.CodeInvalid, Message: "the symbolic link leads nowhere rukh can write", Path: abs, Err: err}).
				WithHint("fix the link, or name the file to write with --file")
		}
		ch.Through, ch.Path = abs, target
	}
	path := ch.Path
	refuse := func(msg, hint string, err error) error {
		return &kernel.Error{Code: kernel.CodeInvalid, Message: msg + "; nothing was changed", Path: path, Hint: hint, Err: err}
	}
	var old []byte
	mode := fs.FileMode(0o600) // a client's config may hold other servers' tokens
	fi, err := os.Stat(path)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		return nil, refuse("not a regular file", "name the file to write with --file", nil)
	case err == nil:
		mode = fi.Mode().Perm()
		if old, err = os.ReadFile(path); err != nil {
			return nil, refuse("cannot read it", "", err)
		}
	case errors.Is(err, fs.ErrNotExist):
		old = nil
	default:
		return nil, refuse("cannot read it", "", err)
	}
	out, action, err := mergeEntry(old, e)
	if err != nil {
		return nil, refuse(err.Error(), configHint(old), nil)
	}
	ch.Action = action
	if action == "unchanged" {
		return ch, nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, refuse("cannot create its directory", "", err)
	}
	if old != nil {
		if ch.Backup, err = backupFile(path, old, now); err != nil {
			return nil, refuse("cannot save a backup of it", "", err)
		}
	}
	if err := replaceFile(path, old, out, mode); err != nil {
		if ch.Backup != "" {
			os.Remove(ch.Backup)
		}
		return nil, err
	}
	return ch, nil
}

// configHint says how to go on when a config file cannot be merged.
func configHint(old []byte) string {
	by := "add the entry by hand: the same command without --write prints it"
	if hasJSONComments(old) {
		return "the file has comments, which rukh will not rewrite away; " + by + ", or remove the comments and run again"
	}
	return "fix the file (or move it aside) and run again, or " + by
}

// backupFile copies the old content next to path, under a name no other
// backup has, readable by the owner only.
func backupFile(path string, old []byte, now time.Time) (string, error) {
	base := path + ".bak-" + now.Format("20060102150405")
	for i := 0; ; i++ {
		name := base
		if i > 0 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) && i < 100 {
			continue
		}
		if err != nil {
			return "", err
		}
		if err := writeSynced(f, old); err != nil {
			os.Remove(name)
			return "", err
		}
		return name, nil
	}
}

// writeSynced writes data to f, syncs and closes it.
func writeSynced(f *os.File, data []byte) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// replaceFile writes data to a temporary file beside path and renames it
// over path, unless path no longer holds old (the client wrote it
// meanwhile: its change is kept, and nothing of rukh's is).
func replaceFile(path string, old, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	fail := func(err error) error {
		return (&kernel.Error{Code: kernel.CodeInvalid, Message: "cannot write it; nothing was changed", Path: path, Err: err})
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".rukh-*")
	if err != nil {
		return fail(err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // gone after the rename; cleans up on every failure
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return fail(err)
	}
	if err := writeSynced(f, data); err != nil {
		return fail(err)
	}
	now, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fail(err)
	}
	if (err == nil) != (old != nil) || !bytes.Equal(now, old) {
		return (&kernel.Error{Code: kernel.CodeConflict, Message: "the file changed while rukh was writing it; nothing was changed", Path: path}).
			WithHint("run the command again (quit the client first if it keeps rewriting the file)")
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync() // the rename survives a crash
		d.Close()
	}
	return nil
}

// jsonMember is one member of a JSON object, its value as written.
type jsonMember struct {
	name  string
	value jsontext.Value
}

// mergeEntry returns old with the entry set under its section (and, for
// VS Code, its inputs set by id): every other member, server and input
// keeps its place and its exact value text. A nil old is no file. action
// is created, added, replaced or unchanged.
func mergeEntry(old []byte, e *clientEntry) (out []byte, action string, err error) {
	var top []jsonMember
	action = "created"
	if old != nil {
		action = "added"
	}
	if len(bytes.TrimSpace(old)) > 0 {
		if top, err = readObject(old); err != nil {
			switch {
			case errors.Is(err, errNotObject):
				return nil, "", err
			case hasJSONComments(old):
				return nil, "", fmt.Errorf("not plain JSON: it has comments")
			}
			return nil, "", fmt.Errorf("not valid JSON: %s", strings.TrimPrefix(err.Error(), "jsontext: "))
		}
	}
	entry, err := json.Marshal(e.server, json.Deterministic(true), jsontext.EscapeForHTML(false))
	if err != nil {
		return nil, "", err
	}
	var servers []jsonMember
	at := slices.IndexFunc(top, func(m jsonMember) bool { return m.name == e.section })
	if at >= 0 {
		if servers, err = readObject(top[at].value); err != nil {
			return nil, "", fmt.Errorf("%q is not an object of servers", e.section)
		}
	} else {
		top = append(top, jsonMember{name: e.section})
		at = len(top) - 1
	}
	if i := slices.IndexFunc(servers, func(m jsonMember) bool { return m.name == e.key }); i >= 0 {
		if sameJSON(servers[i].value, entry) && inputsPresent(top, e) {
			return old, "unchanged", nil
		}
		servers[i].value = entry
		action = "replaced"
	} else {
		servers = append(servers, jsonMember{name: e.key, value: entry})
	}
	if top[at].value, err = writeObject(servers); err != nil {
		return nil, "", err
	}
	if len(e.inputs) > 0 {
		if top, err = mergeInputs(top, e.inputs); err != nil {
			return nil, "", err
		}
	}
	v, err := writeObject(top)
	if err != nil {
		return nil, "", err
	}
	if err := v.Indent(jsontext.WithIndent("  "), jsontext.PreserveRawStrings(true), jsontext.EscapeForHTML(false)); err != nil {
		return nil, "", err
	}
	return append(v, '\n'), action, nil
}

// mergeInputs sets VS Code's inputs by id in the "inputs" array, keeping
// every other input as it was.
func mergeInputs(top []jsonMember, inputs []map[string]any) ([]jsonMember, error) {
	var list []jsontext.Value
	at := slices.IndexFunc(top, func(m jsonMember) bool { return m.name == "inputs" })
	if at >= 0 {
		if err := json.Unmarshal(top[at].value, &list); err != nil {
			return nil, fmt.Errorf(`"inputs" is not an array`)
		}
	} else {
		top = append(top, jsonMember{name: "inputs"})
		at = len(top) - 1
	}
	for _, in := range inputs {
		v, err := json.Marshal(in, json.Deterministic(true), jsontext.EscapeForHTML(false))
		if err != nil {
			return nil, err
		}
		i := slices.IndexFunc(list, func(x jsontext.Value) bool { return inputID(x) == in["id"] })
		if i >= 0 {
			list[i] = v
		} else {
			list = append(list, v)
		}
	}
	var buf bytes.Buffer
	enc := jsontext.NewEncoder(&buf, jsontext.PreserveRawStrings(true), jsontext.EscapeForHTML(false))
	enc.WriteToken(jsontext.BeginArray)
	for _, v := range list {
		if err := enc.WriteValue(v); err != nil {
			return nil, err
		}
	}
	if err := enc.WriteToken(jsontext.EndArray); err != nil {
		return nil, err
	}
	top[at].value = bytes.TrimSpace(buf.Bytes())
	return top, nil
}

func inputID(v jsontext.Value) string {
	var x struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(v, &x) != nil {
		return ""
	}
	return x.ID
}

// inputsPresent reports whether the file's inputs already hold e's inputs.
func inputsPresent(top []jsonMember, e *clientEntry) bool {
	if len(e.inputs) == 0 {
		return true
	}
	at := slices.IndexFunc(top, func(m jsonMember) bool { return m.name == "inputs" })
	if at < 0 {
		return false
	}
	var list []jsontext.Value
	if json.Unmarshal(top[at].value, &list) != nil {
		return false
	}
	for _, in := range e.inputs {
		want, _ := json.Marshal(in, json.Deterministic(true), jsontext.EscapeForHTML(false))
		if !slices.ContainsFunc(list, func(v jsontext.Value) bool { return sameJSON(v, want) }) {
			return false
		}
	}
	return true
}

// sameJSON compares two values as JSON (member order and spacing aside).
func sameJSON(a, b []byte) bool {
	x, y := jsontext.Value(slices.Clone(a)), jsontext.Value(slices.Clone(b))
	if x.Canonicalize() != nil || y.Canonicalize() != nil {
		return false
	}
	return bytes.Equal(x, y)
}

var errNotObject = errors.New("not a JSON object")

// readObject reads a JSON object's members in order, each value as written.
// Duplicate names and invalid UTF-8 are refused, as a client would.
func readObject(b []byte) ([]jsonMember, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(b))
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	if tok.Kind() != '{' {
		return nil, errNotObject
	}
	var ms []jsonMember
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		name := tok.String() // before the next read voids tok
		v, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		ms = append(ms, jsonMember{name: name, value: v.Clone()})
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		if err == nil {
			err = fmt.Errorf("more than one value")
		}
		return nil, err
	}
	return ms, nil
}

// writeObject writes members back, keeping each value's text.
func writeObject(ms []jsonMember) (jsontext.Value, error) {
	var buf bytes.Buffer
	enc := jsontext.NewEncoder(&buf, jsontext.PreserveRawStrings(true), jsontext.EscapeForHTML(false))
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return nil, err
	}
	for _, m := range ms {
		if err := enc.WriteToken(jsontext.String(m.name)); err != nil {
			return nil, err
		}
		if err := enc.WriteValue(m.value); err != nil {
			return nil, err
		}
	}
	if err := enc.WriteToken(jsontext.EndObject); err != nil {
		return nil, err
	}
	return jsontext.Value(bytes.TrimSpace(buf.Bytes())), nil
}

// hasJSONComments reports whether b has a // or /* comment outside its
// strings: JSON with comments, as VS Code and Cursor accept in their files.
func hasJSONComments(b []byte) bool {
	in := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && c == '/' && i+1 < len(b) && (b[i+1] == '/' || b[i+1] == '*'):
			return true
		}
	}
	return false
}
