package commands

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/kernel"
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
	// Damaged: the installed copy was changed since it was installed, so
	// no call of it runs; Problem says what, Hint how to repair it.
	Damaged bool   `json:"damaged"`
	Problem string `json:"problem,omitempty"`
	Hint    string `json:"hint,omitempty"`
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
			rels, err := a.h.Store.Releases()
			if err != nil {
				return err
			}
			d, err := a.h.Store.Draft()
			if err != nil {
				return err
			}
			b, _, err := a.h.ActiveBinding()
			if err != nil {
				return err
			}
			trusted, err := a.h.TrustedKeys()
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
				e := listEntry{
					Name: r.Name, Version: r.Version, Digest: r.Digest,
					Trust: home.CurrentTrust(r, trusted), Signer: r.Signer, AllowUnsigned: r.AllowUnsigned,
					Draft: d.Active[r.Name] == r.Version, Published: published[r.Ref()], Development: r.Development,
				}
				if err := a.h.CopyProblem(r.Name, r.Version, r.Digest, r.Development); err != nil {
					e.Damaged, e.Problem, e.Hint = true, home.ProblemDetail(err), kernel.ErrorHint(err)
				}
				entries = append(entries, e)
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
		},
	}
}

func yesno(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}
