package commands

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/rukh-dev/rukh/extpkg"
	"github.com/urfave/cli/v3"
)

func (a *app) uninstallCmd() *cli.Command {
	return &cli.Command{
		Name:      "uninstall",
		Usage:     "remove an installed release that neither the active revision nor the draft uses",
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
			var older []string
			if revs, err := a.store.Revisions(); err == nil {
				for _, rev := range revs {
					if slices.Contains(rev.Releases, r.Digest) {
						older = append(older, rev.ID)
					}
				}
			}
			if c.Bool("json") {
				return printJSON(a.stdout, map[string]any{"name": name, "version": ver, "digest": r.Digest, "boundByOlderRevisions": older})
			}
			fmt.Fprintf(a.stdout, "uninstalled %s@%s\n", name, ver)
			if len(older) > 0 {
				fmt.Fprintf(a.stdout, "note: %s bound it; rolling back to them needs this exact package installed again\n", strings.Join(older, ", "))
			}
			return nil
		},
	}
}
