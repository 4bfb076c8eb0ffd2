package commands

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
	"github.com/urfave/cli/v3"
)

type trustAddOptions struct {
	Name   string
	Source string // a key file, or the key text itself
	JSON   bool
}

type trustListOptions struct {
	JSON bool
}

type trustRemoveOptions struct {
	Name  string
	Force bool
	JSON  bool
}

func (a *app) trustCmd() *cli.Command {
	return &cli.Command{
		Name:  "trust",
		Usage: "manage the publisher keys whose signatures you trust",
		Commands: []*cli.Command{
			{
				Name:      "add",
				Usage:     "trust a publisher's ed25519 public key",
				ArgsUsage: "NAME KEYFILE|KEY",
				Flags:     []cli.Flag{jsonFlag()},
				Action: func(ctx context.Context, c *cli.Command) error {
					if c.Args().Len() != 2 {
						return usageErr("trust add takes NAME and KEYFILE|KEY")
					}
					return a.runTrustAdd(&trustAddOptions{Name: c.Args().Get(0), Source: c.Args().Get(1), JSON: c.Bool("json")})
				},
			},
			{
				Name:  "list",
				Usage: "list trusted publisher keys",
				Flags: []cli.Flag{jsonFlag()},
				Action: func(ctx context.Context, c *cli.Command) error {
					return a.runTrustList(&trustListOptions{JSON: c.Bool("json")})
				},
			},
			{
				Name:      "remove",
				Usage:     "stop trusting a publisher key; refused while the active revision or the draft uses a release it signed, unless --force",
				ArgsUsage: "NAME",
				Flags: []cli.Flag{jsonFlag(),
					&cli.BoolFlag{Name: "force", Usage: "remove it even so: the tools of those releases then refuse every call until a publish without them"}},
				Action: func(ctx context.Context, c *cli.Command) error {
					if c.Args().Len() != 1 {
						return usageErr("trust remove takes exactly one NAME")
					}
					return a.runTrustRemove(&trustRemoveOptions{Name: c.Args().First(), Force: c.Bool("force"), JSON: c.Bool("json")})
				},
			},
		},
	}
}

func (a *app) runTrustAdd(opts *trustAddOptions) error {
	text := opts.Source
	if !strings.HasPrefix(opts.Source, "rukh-ed25519-pub:") {
		b, err := os.ReadFile(opts.Source)
		if err != nil {
			return kernel.Errorf(kernel.CodeInvalid, "cannot read key file %s", opts.Source).Wrap(err).
				WithHint("pass a key file or the key text itself (rukh-ed25519-pub:…)")
		}
		text = strings.TrimSpace(string(b))
	}
	k, err := a.h.AddKey(opts.Name, text)
	if err != nil {
		return err
	}
	if opts.JSON {
		return printJSON(a.stdout, k)
	}
	fmt.Fprintf(a.stdout, "trusted key %s (%s)\n", opts.Name, k.KeyID)
	return nil
}

func (a *app) runTrustList(opts *trustListOptions) error {
	keys, err := a.h.Store.Keys()
	if err != nil {
		return err
	}
	if opts.JSON {
		if keys == nil {
			keys = []store.Key{}
		}
		return printJSON(a.stdout, keys)
	}
	if len(keys) == 0 {
		fmt.Fprintln(a.stdout, "no trusted keys")
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKEY ID\tADDED")
	for _, k := range keys {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", k.Name, k.KeyID, k.AddedAt.Format(time.RFC3339))
	}
	return tw.Flush()
}

func (a *app) runTrustRemove(opts *trustRemoveOptions) error {
	uses, err := a.h.RemoveKey(opts.Name, opts.Force)
	if err != nil {
		return err
	}
	if opts.JSON {
		untrusted := []string{}
		for _, u := range uses {
			untrusted = append(untrusted, u.Release)
		}
		return printJSON(a.stdout, map[string]any{"removed": opts.Name, "untrusted": untrusted})
	}
	fmt.Fprintf(a.stdout, "removed key %s\n", opts.Name)
	for _, u := range uses {
		fmt.Fprintf(a.stderr, "rukh: warning: %s (%s) no longer runs: its signer is not trusted\n", u.Release, u.Where)
	}
	if len(uses) > 0 {
		fmt.Fprintf(a.stderr, "rukh: hint: %s\n", home.RepublishHint(uses))
	}
	return nil
}
