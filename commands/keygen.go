package commands

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rukh-dev/rukh/extpkg"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/urfave/cli/v3"
)

type keygenOptions struct {
	Out  string // the private key file; the public key goes to Out.pub
	JSON bool
}

func (a *app) keygenCmd() *cli.Command {
	return &cli.Command{
		Name:  "keygen",
		Usage: "create an ed25519 publisher key pair for signing packages",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write the private key to this file (mode 0600); the public key goes to FILE.pub", Required: true},
			jsonFlag(),
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			return a.runKeygen(&keygenOptions{Out: c.String("out"), JSON: c.Bool("json")})
		},
	}
}

func (a *app) runKeygen(opts *keygenOptions) error {
	pub, priv, err := extpkg.GenerateKey()
	if err != nil {
		return err
	}
	out := opts.Out
	if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
		return kernel.Errorf(kernel.CodeInvalid, "cannot create the directory for %s", out).Wrap(err)
	}
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return kernel.Errorf(kernel.CodeConflict, "cannot create %s", out).Wrap(err).
			WithHint("keygen never overwrites a key; choose another --out")
	}
	if _, err := fmt.Fprintln(f, priv); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(out+".pub", []byte(pub+"\n"), 0o644); err != nil {
		return err
	}
	if opts.JSON {
		return printJSON(a.stdout, map[string]string{"privateKeyFile": out, "publicKeyFile": out + ".pub", "publicKey": pub})
	}
	fmt.Fprintf(a.stdout, "private key: %s\npublic key:  %s.pub\n%s\n", out, out, pub)
	return nil
}
