package commands

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v3"
)

type listOptions struct {
	JSON bool
}

func (a *app) listCmd() *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list installed releases, whether the draft activates them and whether they are published",
		Flags: []cli.Flag{jsonFlag()},
		Action: func(ctx context.Context, c *cli.Command) error {
			if err := noArgs(c); err != nil {
				return err
			}
			return a.runList(&listOptions{JSON: c.Bool("json")})
		},
	}
}

func (a *app) runList(opts *listOptions) error {
	entries, err := a.h.ListReleases()
	if err != nil {
		return err
	}
	if opts.JSON {
		return printJSON(a.stdout, entries)
	}
	if len(entries) == 0 {
		fmt.Fprintln(a.stdout, "no releases installed (rukh install PATH)")
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RELEASE\tDRAFT\tPUBLISHED\tTRUST")
	for _, e := range entries {
		pub := yesno(e.Published, "live", "-")
		if e.Damaged {
			pub = "damaged" // published or not, none of its calls run
		}
		fmt.Fprintf(tw, "%s@%s%s\t%s\t%s\t%s\n", e.Name, e.Version, yesno(e.Development, " (dev)", ""), yesno(e.Draft, "active", "-"), pub, e.Trust)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, e := range entries {
		if e.Damaged {
			fmt.Fprintf(a.stdout, "%s@%s is damaged, its calls are refused: %s\n  hint: %s\n", e.Name, e.Version, printable(e.Problem), printable(e.Hint))
		}
	}
	return nil
}

func yesno(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}
