package commands

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"
)

func (a *app) versionCmd() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print rukh's version",
		Action: func(ctx context.Context, c *cli.Command) error {
			_, err := fmt.Fprintf(a.stdout, "rukh version %s\n", version())
			return err
		},
	}
}
