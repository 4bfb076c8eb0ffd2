package commands

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rukh-dev/rukh/extpkg"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
	"github.com/urfave/cli/v3"
)

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
					name, src := c.Args().Get(0), c.Args().Get(1)
					text := src
					if !strings.HasPrefix(src, "rukh-ed25519-pub:") {
						b, err := os.ReadFile(src)
						if err != nil {
							return kernel.Errorf(kernel.CodeInvalid, "cannot read key file %s", src).Wrap(err).
								WithHint("pass a key file or the key text itself (rukh-ed25519-pub:…)")
						}
						text = strings.TrimSpace(string(b))
					}
					pub, err := extpkg.ParsePublicKey(text)
					if err != nil {
						return err
					}
					k := store.Key{Name: name, Public: text, KeyID: extpkg.KeyID(pub), AddedAt: time.Now().UTC()}
					if err := a.store.PutKey(k); err != nil {
						return err
					}
					if c.Bool("json") {
						return printJSON(a.stdout, k)
					}
					fmt.Fprintf(a.stdout, "trusted key %s (%s)\n", name, k.KeyID)
					return nil
				},
			},
			{
				Name:  "list",
				Usage: "list trusted publisher keys",
				Flags: []cli.Flag{jsonFlag()},
				Action: func(ctx context.Context, c *cli.Command) error {
					keys, err := a.store.Keys()
					if err != nil {
						return err
					}
					if c.Bool("json") {
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
				},
			},
			{
				Name:      "remove",
				Usage:     "stop trusting a publisher key (installed releases keep their recorded trust basis)",
				ArgsUsage: "NAME",
				Flags:     []cli.Flag{jsonFlag()},
				Action: func(ctx context.Context, c *cli.Command) error {
					if c.Args().Len() != 1 {
						return usageErr("trust remove takes exactly one NAME")
					}
					if err := a.store.DeleteKey(c.Args().First()); err != nil {
						return err
					}
					if c.Bool("json") {
						return printJSON(a.stdout, map[string]string{"removed": c.Args().First()})
					}
					fmt.Fprintf(a.stdout, "removed key %s\n", c.Args().First())
					return nil
				},
			},
		},
	}
}
