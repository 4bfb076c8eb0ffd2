package commands

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/rukh-dev/rukh/store"
	"github.com/urfave/cli/v3"
)

type listEntry struct {
	Name          string `json:"name"`
	Version       string `json:"version"`
	Digest        string `json:"digest"`
	Trust         string `json:"trust"`
	Signer        string `json:"signer,omitempty"`
	AllowUnsigned bool   `json:"allowUnsigned"`
	Draft         bool   `json:"draftActive"`
	Published     bool   `json:"published"`
	Development   bool   `json:"development"` // a `rukh dev` working copy, NAME@dev
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
			rels, err := a.store.Releases()
			if err != nil {
				return err
			}
			d, err := a.store.Draft()
			if err != nil {
				return err
			}
			b, _, err := a.activeBinding()
			if err != nil {
				return err
			}
			trusted, err := a.trustedKeys()
			if err != nil {
				return err
			}
			published := map[string]bool{}
			if b != nil {
				for _, br := range b.Releases {
					published[store.ReleaseRef(br.Digest, br.Development)] = true
				}
			}
			entries := []listEntry{}
			for _, r := range rels {
				entries = append(entries, listEntry{
					Name: r.Name, Version: r.Version, Digest: r.Digest,
					Trust: currentTrust(r, trusted), Signer: r.Signer, AllowUnsigned: r.AllowUnsigned,
					Draft: d.Active[r.Name] == r.Version, Published: published[r.Ref()], Development: r.Development,
				})
			}
			if c.Bool("json") {
				return printJSON(a.stdout, entries)
			}
			if len(entries) == 0 {
				fmt.Fprintln(a.stdout, "no releases installed (rukh install PATH)")
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "RELEASE\tDRAFT\tPUBLISHED\tTRUST")
			for _, e := range entries {
				fmt.Fprintf(tw, "%s@%s%s\t%s\t%s\t%s\n", e.Name, e.Version, yesno(e.Development, " (dev)", ""), yesno(e.Draft, "active", "-"), yesno(e.Published, "live", "-"), e.Trust)
			}
			return tw.Flush()
		},
	}
}

func yesno(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}
