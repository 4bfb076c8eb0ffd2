package commands

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rukh-dev/rukh/store"
	"github.com/urfave/cli/v3"
)

type revisionEntry struct {
	Revision    string    `json:"revision"`
	Active      bool      `json:"active"`
	CreatedAt   time.Time `json:"createdAt"`
	Parent      string    `json:"parent,omitempty"`
	RollbackOf  string    `json:"rollbackOf,omitempty"`
	Releases    int       `json:"releases"`
	Development bool      `json:"development"` // binds a development release (NAME@dev)
	Note        string    `json:"note,omitempty"`
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
				return a.pruneRevisions(int(c.Int("keep")), c.Bool("json"))
			},
		}},
		Action: func(ctx context.Context, c *cli.Command) error {
			switch c.Args().Len() {
			case 0:
			case 1:
				return a.showRevision(c.Args().First(), c.Bool("json"))
			default:
				return usageErr("revisions takes at most one REV")
			}
			revs, err := a.h.Store.Revisions()
			if err != nil {
				return err
			}
			active, err := a.h.Store.Active()
			if err != nil {
				return err
			}
			entries := []revisionEntry{}
			for i := len(revs) - 1; i >= 0; i-- {
				r := revs[i]
				e := revisionEntry{Revision: r.ID, Active: r.Number == active, CreatedAt: r.CreatedAt, Releases: len(r.Releases), Note: r.Note,
					Development: slices.ContainsFunc(r.Releases, store.IsDevRef)}
				if r.Parent != 0 {
					e.Parent = store.RevisionID(r.Parent)
				}
				if r.RollbackOf != 0 {
					e.RollbackOf = store.RevisionID(r.RollbackOf)
				}
				entries = append(entries, e)
			}
			if c.Bool("json") {
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
		},
	}
}

type revisionDetail struct {
	revisionEntry
	Bound     []string       `json:"bound"`     // name@version digest
	Endpoints map[string]int `json:"endpoints"` // tools per endpoint
	// DevReleases are the bound development releases (NAME@dev).
	DevReleases []string `json:"developmentReleases"`
}

// showRevision prints what one revision binds: releases and tools per
// endpoint, so an owner can see what a rollback would bring back.
func (a *app) showRevision(ref string, asJSON bool) error {
	n, err := store.ParseRevisionID(ref)
	if err != nil {
		return err
	}
	rev, err := a.h.Store.Revision(n)
	if err != nil {
		return err
	}
	b, err := a.h.RevisionBinding(rev)
	if err != nil {
		return err
	}
	active, err := a.h.Store.Active()
	if err != nil {
		return err
	}
	d := revisionDetail{
		revisionEntry: revisionEntry{Revision: rev.ID, Active: rev.Number == active, CreatedAt: rev.CreatedAt, Releases: len(rev.Releases), Note: rev.Note},
		Bound:         []string{},
		Endpoints:     map[string]int{},
		DevReleases:   []string{},
	}
	if rev.Parent != 0 {
		d.Parent = store.RevisionID(rev.Parent)
	}
	if rev.RollbackOf != 0 {
		d.RollbackOf = store.RevisionID(rev.RollbackOf)
	}
	for _, r := range b.Releases {
		d.Bound = append(d.Bound, r.Name+"@"+r.Version+" "+r.Digest)
		if r.Development {
			d.DevReleases = append(d.DevReleases, r.Name+"@"+r.Version)
			d.Development = true
		}
	}
	for _, p := range b.Endpoints {
		d.Endpoints[p.Endpoint] = len(p.Tools)
	}
	if asJSON {
		return printJSON(a.stdout, d)
	}
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

// pruneRevisions removes older revisions and the records only they use.
func (a *app) pruneRevisions(keep int, asJSON bool) error {
	p, err := a.h.Store.PruneRevisions(keep)
	if err != nil {
		return err
	}
	if asJSON {
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
