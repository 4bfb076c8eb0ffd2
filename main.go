// Command rukh is the core of a named CLI whose commands come from trusted,
// installable extensions, served to people as subcommands and to agents as
// MCP tools. It runs package commands, the CLI, over the process's
// arguments and streams; only main exits.
package main

import (
	"context"
	"os"

	"github.com/rukh-dev/rukh/commands"
)

func main() {
	os.Exit(commands.Main(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr))
}
