package commands

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"
)

type revisionsOptions struct {
	Show     bool // show Revision, else list them all
	Revision string
	JSON     bool
}

type revisionsPruneOptions struct {
	Keep int
	JSON bool
}

func (a *app) revisionsCmd() *cli.Command {
	return &cli.Command{
		Name:      "revisions",
		Usage:     "list published revisions, newest first, show what one binds, or prune old ones",
		ArgsUsage: "[REV]",
		Flags:     []cli.Flag{jsonFlag()},
		Commands: []*cli.Command{{
			Name:  "prune",
			Usage: "remove all but the newest N revisions (the active one and any a running call holds are kept) and what only they used",
			Flags: []cli.Flag{jsonFlag(),
				&cli.IntFlag{Name: "keep", Usage: "how many of the newest revisions to keep (the active one is always kept)"}},
			Action: func(ctx context.Context, c *cli.Command) error {
				if c.Args().Len() > 0 {
					return usageErr("revisions prune takes no arguments besides --keep N")
				}
				if !c.IsSet("keep") {
					return usageErr("revisions prune needs --keep N (how many of the newest revisions to keep)")
				}
				return a.runRevisionsPrune(&revisionsPruneOptions{Keep: int(c.Int("keep")), JSON: c.Bool("json")})
			},
		}},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() > 1 {
				return usageErr("revisions takes at most one REV")
			}
			return a.runRevisions(&revisionsOptions{Show: c.Args().Len() == 1, Revision: c.Args().First(), JSON: c.Bool("json")})
		},
	}
}

func (a *app) runRevisions(opts *revisionsOptions) error {
	if opts.Show {
		return a.showRevision(opts)
	}
	entries, err := a.h.RevisionList()
	if err != nil {
		return err
	}
	if opts.JSON {
		return printJSON(a.stdout, entries)
	}
	if len(entries) == 0 {
		fmt.Fprintln(a.stdout, "nothing published yet (rukh publish)")
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REVISION\tACTIVE\tCREATED\tRELEASES\tNOTE")
	for _, e := range entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d%s\t%s\n", e.Revision, yesno(e.Active, "*", ""), e.CreatedAt.Format(time.RFC3339), e.Releases, yesno(e.Development, " (dev)", ""), e.Note)
	}
	return tw.Flush()
}

// showRevision prints what one revision binds.
func (a *app) showRevision(opts *revisionsOptions) error {
	d, err := a.h.ShowRevision(opts.Revision)
	if err != nil {
		return err
	}
	if opts.JSON {
		return printJSON(a.stdout, d)
	}
	b := d.Binding
	fmt.Fprintf(a.stdout, "revision %s%s, published %s\n", d.Revision, yesno(d.Active, " (active)", ""), d.CreatedAt.Format(time.RFC3339))
	if d.Note != "" {
		fmt.Fprintf(a.stdout, "note: %s\n", d.Note)
	}
	fmt.Fprintln(a.stdout, "releases:")
	for i, r := range d.Bound {
		fmt.Fprintf(a.stdout, "  %s%s\n", r, yesno(b.Releases[i].Development, " (dev)", ""))
	}
	for _, p := range b.Endpoints {
		fmt.Fprintf(a.stdout, "endpoint %s (namespace %s): %d tool(s)\n", p.Endpoint, p.Namespace, len(p.Tools))
	}
	return nil
}

// runRevisionsPrune removes older revisions and the records only they use.
func (a *app) runRevisionsPrune(opts *revisionsPruneOptions) error {
	p, err := a.h.Store.PruneRevisions(opts.Keep)
	if err != nil {
		return err
	}
	if opts.JSON {
		held := map[string]string{}
		for _, h := range p.Held {
			held[h[0]] = h[1]
		}
		return printJSON(a.stdout, map[string]any{"removed": append([]string{}, p.Revisions...), "held": held, "objects": p.Objects, "abandoned": p.Abandoned, "swept": p.Swept})
	}
	for _, h := range p.Held {
		fmt.Fprintf(a.stdout, "kept %s: it is in use by %s\n", h[0], h[1])
	}
	if len(p.Revisions) == 0 {
		fmt.Fprintln(a.stdout, "nothing to prune")
	} else {
		fmt.Fprintf(a.stdout, "removed %s\n", strings.Join(p.Revisions, ", "))
	}
	if p.Objects > 0 {
		fmt.Fprintf(a.stdout, "removed %d declaration(s) and tool object(s) no kept revision uses\n", p.Objects)
	}
	if p.Abandoned > 0 {
		fmt.Fprintf(a.stdout, "removed %d index(es) left by publishes that never finished\n", p.Abandoned)
	}
	if !p.Swept {
		fmt.Fprintln(a.stdout, "a publish is writing: unused declarations are left for the next prune")
	}
	return nil
}
