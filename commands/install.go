package commands

import (
	"context"
	"fmt"

	"github.com/rukh-dev/rukh/home"
	"github.com/urfave/cli/v3"
)

func (a *app) installCmd() *cli.Command {
	return &cli.Command{
		Name:      "install",
		Usage:     "verify a package (directory or .tar.gz) and install it as a release",
		ArgsUsage: "PATH",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "allow-unsigned", Usage: "install even if no trusted key signed the package (recorded on the release)"},
			&cli.BoolFlag{Name: "allow-new-signer", Usage: "accept a version signed by another key than the earlier versions of this package"},
			jsonFlag(),
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 1 {
				return usageErr("install takes exactly one PATH")
			}
			return a.runInstall(installOptions{
				path: c.Args().First(), json: c.Bool("json"),
				InstallOptions: home.InstallOptions{AllowUnsigned: c.Bool("allow-unsigned"), AllowNewSigner: c.Bool("allow-new-signer")},
			})
		},
	}
}

type installOptions struct {
	path string
	json bool
	home.InstallOptions
}

func (a *app) runInstall(o installOptions) error {
	res, err := a.h.Install(o.path, o.InstallOptions)
	if err != nil {
		return err
	}
	if o.json {
		return printJSON(a.stdout, res)
	}
	verb := "installed"
	switch {
	case res.Repaired:
		verb = "repaired the installed copy of"
	case res.Existed:
		verb = "already installed"
	}
	fmt.Fprintf(a.stdout, "%s %s@%s %s\n", verb, res.Name, res.Version, res.Digest)
	fmt.Fprintf(a.stdout, "trust: %s\n", home.TrustBasis(res.Signer, res.AllowUnsigned))
	if !res.Existed {
		fmt.Fprintf(a.stdout, "next: rukh activate %s@%s && rukh publish\n", res.Name, res.Version)
	}
	return nil
}
