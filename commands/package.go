package commands

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/rukh-dev/rukh/extpkg"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/urfave/cli/v3"
)

func (a *app) packageCmd() *cli.Command {
	return &cli.Command{
		Name:  "package",
		Usage: "tools for extension authors: sign and pack a package directory",
		Commands: []*cli.Command{
			{
				Name:      "sign",
				Usage:     "compute a package directory's digest and write rukh-extension.sig with your key",
				ArgsUsage: "DIR",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "key", Aliases: []string{"k"}, Usage: "private key file from 'rukh keygen'", Required: true},
					jsonFlag(),
				},
				Action: func(ctx context.Context, c *cli.Command) error {
					if c.Args().Len() != 1 {
						return usageErr("package sign takes exactly one DIR")
					}
					b, err := os.ReadFile(c.String("key"))
					if err != nil {
						return kernel.Errorf(kernel.CodeInvalid, "cannot read key file %s", c.String("key")).Wrap(err)
					}
					priv, err := extpkg.ParsePrivateKey(strings.TrimSpace(string(b)))
					if err != nil {
						return err
					}
					digest, err := extpkg.SignDir(c.Args().First(), priv)
					if err != nil {
						return err
					}
					if c.Bool("json") {
						return printJSON(a.stdout, map[string]string{"digest": digest})
					}
					fmt.Fprintf(a.stdout, "signed %s %s\n", c.Args().First(), digest)
					return nil
				},
			},
			{
				Name:      "pack",
				Usage:     "write a package directory as a reproducible .tar.gz",
				ArgsUsage: "DIR OUT.tar.gz",
				Flags:     []cli.Flag{jsonFlag()},
				Action: func(ctx context.Context, c *cli.Command) error {
					if c.Args().Len() != 2 {
						return usageErr("package pack takes DIR and OUT.tar.gz")
					}
					if err := extpkg.Pack(c.Args().Get(0), c.Args().Get(1)); err != nil {
						return err
					}
					if c.Bool("json") {
						return printJSON(a.stdout, map[string]string{"package": c.Args().Get(0), "archive": c.Args().Get(1)})
					}
					fmt.Fprintf(a.stdout, "wrote %s\n", c.Args().Get(1))
					return nil
				},
			},
		},
	}
}
