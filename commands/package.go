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

type packageSignOptions struct {
	Dir  string
	Key  string // the private key file
	JSON bool
}

type packagePackOptions struct {
	Dir, Archive string
	JSON         bool
}

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
					return a.runPackageSign(&packageSignOptions{Dir: c.Args().First(), Key: c.String("key"), JSON: c.Bool("json")})
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
					return a.runPackagePack(&packagePackOptions{Dir: c.Args().Get(0), Archive: c.Args().Get(1), JSON: c.Bool("json")})
				},
			},
		},
	}
}

func (a *app) runPackageSign(opts *packageSignOptions) error {
	b, err := os.ReadFile(opts.Key)
	if err != nil {
		return kernel.Errorf(kernel.CodeInvalid, "cannot read key file %s", opts.Key).Wrap(err)
	}
	priv, err := extpkg.ParsePrivateKey(strings.TrimSpace(string(b)))
	if err != nil {
		return err
	}
	digest, err := extpkg.SignDir(opts.Dir, priv)
	if err != nil {
		return err
	}
	if opts.JSON {
		return printJSON(a.stdout, map[string]string{"digest": digest})
	}
	fmt.Fprintf(a.stdout, "signed %s %s\n", opts.Dir, digest)
	return nil
}

func (a *app) runPackagePack(opts *packagePackOptions) error {
	if err := extpkg.Pack(opts.Dir, opts.Archive); err != nil {
		return err
	}
	if opts.JSON {
		return printJSON(a.stdout, map[string]string{"package": opts.Dir, "archive": opts.Archive})
	}
	fmt.Fprintf(a.stdout, "wrote %s\n", opts.Archive)
	return nil
}
