package commands

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rukh-dev/rukh/extpkg"
	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
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
			res, err := a.install(c.Args().First(), c.Bool("allow-unsigned"), c.Bool("allow-new-signer"))
			if err != nil {
				return err
			}
			if c.Bool("json") {
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
		},
	}
}

type installResult struct {
	Name          string `json:"name"`
	Version       string `json:"version"`
	Digest        string `json:"digest"`
	Signer        string `json:"signer,omitempty"`
	KeyID         string `json:"keyId,omitempty"`
	AllowUnsigned bool   `json:"allowUnsigned"`
	Existed       bool   `json:"existed"`
	Repaired      bool   `json:"repaired,omitempty"`
	Commands      int    `json:"commands"`
}

func (a *app) install(src string, allowUnsigned, allowNewSigner bool) (*installResult, error) {
	scratch := filepath.Join(a.h.Store.Home(), "tmp")
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		return nil, kernel.Errorf(kernel.CodeInternal, "cannot create %s", scratch).Wrap(err)
	}
	p, err := extpkg.Load(src, scratch)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	m := p.Manifest

	// The same name@version with another digest is refused before anything is copied.
	if prev, err := a.h.Store.Release(m.Name, m.Version); err == nil {
		if prev.Digest != p.Digest {
			return nil, kernel.Errorf(kernel.CodeConflict, "%s@%s is already installed with digest %s, this package has %s", m.Name, m.Version, prev.Digest, p.Digest).
				WithHint("publish a new version number for changed content")
		}
	} else if kernel.ErrorCode(err) != kernel.CodeNotFound {
		return nil, err
	}

	signer, keyID, err := a.h.CheckSignature(p)
	if err != nil {
		return nil, err
	}
	if signer == "" && !allowUnsigned {
		why := "the package is not signed"
		if p.Signature != nil {
			why = fmt.Sprintf("the package is signed by key %s, which is not trusted", keyID)
		}
		return nil, kernel.Errorf(kernel.CodeDenied, "%s@%s: %s", m.Name, m.Version, why).
			WithHint("trust the publisher's key with 'rukh trust add NAME KEYFILE', or install with --allow-unsigned")
	}
	if signer != "" && !allowNewSigner {
		if err := a.h.CheckSameSigner(m.Name, m.Version, signer, keyID); err != nil {
			return nil, err
		}
	}

	dir, copyExisted, err := extpkg.Install(p, a.h.Store.ReleasesDir())
	if err != nil {
		return nil, err
	}
	if err := a.h.ShareCopy(dir, p.Digest); err != nil {
		return nil, err
	}
	existed, err := a.h.Store.PutRelease(store.Release{
		Name: m.Name, Version: m.Version, Digest: p.Digest, Manifest: p.ManifestJSON, Dir: dir,
		Signer: signer, KeyID: keyID, AllowUnsigned: signer == "", InstalledAt: time.Now().UTC(),
	})
	if err != nil {
		return nil, err
	}
	return &installResult{
		Name: m.Name, Version: m.Version, Digest: p.Digest, Signer: signer, KeyID: keyID,
		AllowUnsigned: signer == "", Existed: existed, Commands: len(m.Commands),
		Repaired: existed && !copyExisted, // the record was there, the copy had to be made again
	}, nil
}
