package commands

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rukh-dev/rukh/extpkg"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/urfave/cli/v3"
)

func (a *app) uninstallCmd() *cli.Command {
	return &cli.Command{
		Name:      "uninstall",
		Usage:     "remove an installed release that neither the active revision nor the draft uses, once no running call uses it",
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
			r, err := a.h.Store.Release(name, ver)
			if err != nil {
				return err
			}
			err = a.h.RemoveRelease(r, func() error {
				if err := a.h.Store.DeleteRelease(name, ver); err != nil {
					var ke *kernel.Error
					if r.Development && errors.As(err, &ke) && ke.Code == kernel.CodeConflict {
						return ke.WithHint(fmt.Sprintf("take it out of the draft and publish ('rukh dev --stop %s', or 'rukh publish' when the draft already activates another release), before removing it", name))
					}
					return err
				}
				return extpkg.Remove(a.h.CopiesDir(r.Development), r.Digest)
			})
			if err != nil {
				return err
			}
			if r.Development {
				a.sweepDevCopies("")
			}
			var older []string
			if revs, err := a.h.Store.Revisions(); err == nil {
				for _, rev := range revs {
					if slices.Contains(rev.Releases, r.Ref()) {
						older = append(older, rev.ID)
					}
				}
			}
			if c.Bool("json") {
				return printJSON(a.stdout, map[string]any{"name": name, "version": ver, "digest": r.Digest, "development": r.Development, "boundByOlderRevisions": older})
			}
			fmt.Fprintf(a.stdout, "uninstalled %s@%s%s\n", name, ver, yesno(r.Development, " (dev)", ""))
			if len(older) > 0 {
				fmt.Fprintf(a.stdout, "note: %s bound it; rolling back to them needs this exact package installed again\n", strings.Join(older, ", "))
			}
			return nil
		},
	}
}
