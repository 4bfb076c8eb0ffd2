package commands

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"
)

type uninstallOptions struct {
	Name, Version string
	JSON          bool
}

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
			return a.runUninstall(&uninstallOptions{Name: name, Version: ver, JSON: c.Bool("json")})
		},
	}
}

func (a *app) runUninstall(opts *uninstallOptions) error {
	r, err := a.h.Uninstall(opts.Name, opts.Version)
	if err != nil {
		return err
	}
	if r.Development {
		a.h.SweepDevCopies("")
	}
	older := a.h.RevisionsBinding(r)
	if opts.JSON {
		return printJSON(a.stdout, map[string]any{"name": opts.Name, "version": opts.Version, "digest": r.Digest, "development": r.Development, "boundByOlderRevisions": older})
	}
	fmt.Fprintf(a.stdout, "uninstalled %s@%s%s\n", opts.Name, opts.Version, yesno(r.Development, " (dev)", ""))
	if len(older) > 0 {
		fmt.Fprintf(a.stdout, "note: %s bound it; rolling back to them needs this exact package installed again\n", strings.Join(older, ", "))
	}
	return nil
}
