// Package mcpclients owns the configuration files of the MCP clients rukh
// registers endpoints with (Claude Desktop, Claude Code, Cursor, VS Code):
// where each keeps its file on each platform, the shape of a server entry
// in it, and writing an entry into such a file in place (a backup first,
// every other member kept as written, JSON with comments refused, the new
// file renamed over the old). It returns what it did and never prints; it
// imports neither the CLI library nor the store, and of rukh only kernel
// (for errors).
package mcpclients

import (
	"path/filepath"

	"github.com/rukh-dev/rukh/kernel"
)

// The clients, by the names mcp-config takes.
const (
	ClaudeDesktop = "claude"
	ClaudeCode    = "claude-code"
	Cursor        = "cursor"
	VSCode        = "vscode"
)

// Names are the clients this package knows the formats and files of.
var Names = []string{ClaudeDesktop, ClaudeCode, Cursor, VSCode}

// ConfigPath is the file where client keeps a user's MCP servers on
// platform goos, from the environment alone (HOME, XDG_CONFIG_HOME): Claude
// Desktop and VS Code under the platform's application-data directory
// (macOS: ~/Library/Application Support; elsewhere $XDG_CONFIG_HOME or
// ~/.config), Cursor in ~/.cursor, Claude Code in ~/.claude.json.
func ConfigPath(client, goos string, env func(string) string) (string, error) {
	home := env("HOME")
	if home == "" || !filepath.IsAbs(home) {
		return "", kernel.Errorf(kernel.CodeInvalid, "cannot find the client's config file: HOME is unset").
			WithHint("name the file with --file")
	}
	if goos == "windows" {
		return "", kernel.Errorf(kernel.CodeUnsupported, "rukh does not know the client config files of Windows").
			WithHint("name the file with --file")
	}
	appData := filepath.Join(home, ".config")
	if goos == "darwin" {
		appData = filepath.Join(home, "Library", "Application Support")
	} else if x := env("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		appData = x
	}
	switch client {
	case ClaudeDesktop:
		return filepath.Join(appData, "Claude", "claude_desktop_config.json"), nil
	case VSCode:
		return filepath.Join(appData, "Code", "User", "mcp.json"), nil
	case Cursor:
		return filepath.Join(home, ".cursor", "mcp.json"), nil
	case ClaudeCode:
		return filepath.Join(home, ".claude.json"), nil
	}
	return "", kernel.Errorf(kernel.CodeUsage, "--client must be claude, claude-code, cursor or vscode, got %q", client)
}
