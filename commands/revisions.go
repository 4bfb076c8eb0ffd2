package commands

import (
	"context"
	"fmt"
	"slices"
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
		Usage:     "list published revisions, newest first, or show what one binds",
		ArgsUsage: "[REV]",
		Flags:     []cli.Flag{jsonFlag()},
		Action: func(ctx context.Context, c *cli.Command) error {
			switch c.Args().Len() {
			case 0:
			case 1:
				return a.showRevision(c.Args().First(), c.Bool("json"))
			default:
				return usageErr("revisions takes at most one REV")
			}
			revs, err := a.store.Revisions()
			if err != nil {
				return err
			}
			active, err := a.store.Active()
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
	rev, err := a.store.Revision(n)
	if err != nil {
		return err
	}
	b, err := a.revisionBinding(rev)
	if err != nil {
		return err
	}
	active, err := a.store.Active()
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
