// Command rukh is the core of a named CLI whose commands come from trusted,
// installable extensions, served to people as subcommands and to agents as
// MCP tools. It runs package commands, the CLI, over the process's
// arguments and streams; only main exits. Started as kernel.InitArgv0 it
// is instead the confining init of one invocation (package confine).
package main

import (
	"context"
	"os"

	"github.com/rukh-dev/rukh/commands"
	"github.com/rukh-dev/rukh/confine"
	"github.com/rukh-dev/rukh/kernel"
)

func main() {
	if len(os.Args) > 0 && (os.Args[0] == kernel.InitArgv0 || os.Args[0] == kernel.InitConfineArgv0) {
		os.Exit(confine.Main())
	}
	kernel.SelfInit()
	os.Exit(profiled(func() int { return commands.Main(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr) }))
}
