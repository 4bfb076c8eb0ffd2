package commands

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/rukh-dev/rukh/store"
	"github.com/urfave/cli/v3"
)

type revisionEntry struct {
	Revision   string    `json:"revision"`
	Active     bool      `json:"active"`
	CreatedAt  time.Time `json:"createdAt"`
	Parent     string    `json:"parent,omitempty"`
	RollbackOf string    `json:"rollbackOf,omitempty"`
	Releases   int       `json:"releases"`
	Note       string    `json:"note,omitempty"`
}

func (a *app) revisionsCmd() *cli.Command {
	return &cli.Command{
		Name:  "revisions",
		Usage: "list published revisions, newest first",
		Flags: []cli.Flag{jsonFlag()},
		Action: func(ctx context.Context, c *cli.Command) error {
			if err := noArgs(c); err != nil {
				return err
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
				e := revisionEntry{Revision: r.ID, Active: r.Number == active, CreatedAt: r.CreatedAt, Releases: len(r.Releases), Note: r.Note}
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
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", e.Revision, yesno(e.Active, "*", ""), e.CreatedAt.Format(time.RFC3339), e.Releases, e.Note)
			}
			return tw.Flush()
		},
	}
}
