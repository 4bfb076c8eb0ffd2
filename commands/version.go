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
		Flags: []cli.Flag{jsonFlag()},
		Action: func(ctx context.Context, c *cli.Command) error {
			if err := noArgs(c); err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(a.stdout, map[string]string{"version": version()})
			}
			_, err := fmt.Fprintf(a.stdout, "rukh version %s\n", version())
			return err
		},
	}
}
