package commands

import (
	"context"
	"fmt"
	"strings"

	"github.com/rukh-dev/rukh/extpkg"
	"github.com/urfave/cli/v3"
)

func (a *app) uninstallCmd() *cli.Command {
	return &cli.Command{
		Name:      "uninstall",
		Usage:     "remove an installed release that no published revision or draft uses",
		ArgsUsage: "NAME@VERSION",
		Flags:     []cli.Flag{jsonFlag()},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 1 {
				return usageErr("uninstall takes exactly one NAME@VERSION")
			}
			name, ver, ok := strings.Cut(c.Args().First(), "@")
			if !ok || name == "" || ver == "" {
				return usageErr("uninstall needs NAME@VERSION, got %q", c.Args().First())
			}
			r, err := a.store.Release(name, ver)
			if err != nil {
				return err
			}
			if err := a.store.DeleteRelease(name, ver); err != nil {
				return err
			}
			if err := extpkg.Remove(a.store.ReleasesDir(), r.Digest); err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(a.stdout, map[string]string{"name": name, "version": ver, "digest": r.Digest})
			}
			fmt.Fprintf(a.stdout, "uninstalled %s@%s\n", name, ver)
			return nil
		},
	}
}
