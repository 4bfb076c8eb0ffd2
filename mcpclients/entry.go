package mcpclients

import (
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Entry is one server entry and where it goes in a client's file.
type Entry struct {
	Client  string
	Section string // the object the servers are kept in
	Key     string
	Server  map[string]any
	Inputs  []map[string]any // VS Code's prompted inputs the entry uses
}

// Snippet is the entry as a client's file holds it.
func (e *Entry) Snippet() map[string]any {
	out := map[string]any{e.Section: map[string]any{e.Key: e.Server}}
	if len(e.Inputs) > 0 {
		out["inputs"] = e.Inputs
	}
	return out
}

// StdioEntry is the entry that has client start command with args and env
// and speak MCP over its stdin and stdout.
func StdioEntry(client, key, command string, args []string, env map[string]string) *Entry {
	e := &Entry{Client: client, Section: "mcpServers", Key: key, Server: map[string]any{
		"command": command,
		"args":    args,
		"env":     env,
	}}
	switch client {
	case VSCode:
		e.Section = "servers"
		e.Server["type"] = "stdio"
	case ClaudeCode:
		e.Server["type"] = "stdio"
	}
	return e
}

// Auth is how an HTTP entry authenticates: a bearer token the client reads
// from the environment variable TokenEnv, or (VS Code) asks for once with
// Prompt and keeps as a secret. The token itself is never written.
type Auth struct {
	TokenEnv string
	Prompt   string
}

// HTTPEntry is the entry that has client connect to url over Streamable
// HTTP, with an Authorization header unless auth is nil.
func HTTPEntry(client, key, url string, auth *Auth) *Entry {
	e := &Entry{Client: client, Section: "mcpServers", Key: key, Server: map[string]any{"url": url}}
	switch client {
	case ClaudeDesktop, ClaudeCode:
		e.Server["type"] = "http"
		if auth != nil {
			e.Server["headers"] = map[string]string{"Authorization": "Bearer ${" + auth.TokenEnv + "}"}
		}
	case Cursor:
		if auth != nil {
			e.Server["headers"] = map[string]string{"Authorization": "Bearer ${env:" + auth.TokenEnv + "}"}
		}
	case VSCode:
		e.Section = "servers"
		e.Server["type"] = "http"
		if auth != nil {
			e.Server["headers"] = map[string]string{"Authorization": "Bearer ${input:" + key + "-token}"}
			e.Inputs = []map[string]any{{"type": "promptString", "id": key + "-token", "password": true, "description": auth.Prompt}}
		}
	}
	return e
}

// ClaudeAddLine is the 'claude mcp add-json' line that registers the entry
// with Claude Code for every project. Claude Code keeps its servers in
// ~/.claude.json together with its own state and rewrites that file while
// it runs, so its own command makes that edit, not Write.
func ClaudeAddLine(e *Entry) (string, error) {
	b, err := marshal(e.Server)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("claude mcp add-json --scope user %s %s", e.Key, shellQuote(string(b))), nil
}

// shellQuote quotes s as one word for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// marshal writes v as entries are written: members sorted, no HTML escapes.
func marshal(v any) ([]byte, error) {
	return json.Marshal(v, json.Deterministic(true), jsontext.EscapeForHTML(false))
}
