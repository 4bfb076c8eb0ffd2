package commands

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rukh-dev/rukh/extpkg"
	"github.com/rukh-dev/rukh/home"
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
					if err := a.h.Store.PutKey(k); err != nil {
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
					keys, err := a.h.Store.Keys()
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
				Usage:     "stop trusting a publisher key; refused while the active revision or the draft uses a release it signed, unless --force",
				ArgsUsage: "NAME",
				Flags: []cli.Flag{jsonFlag(),
					&cli.BoolFlag{Name: "force", Usage: "remove it even so: the tools of those releases then refuse every call until a publish without them"}},
				Action: func(ctx context.Context, c *cli.Command) error {
					if c.Args().Len() != 1 {
						return usageErr("trust remove takes exactly one NAME")
					}
					name := c.Args().First()
					k, ok, err := a.h.Store.Key(name)
					if err != nil {
						return err
					}
					if !ok {
						return a.h.Store.DeleteKey(name) // its not-found error
					}
					uses, err := a.keyUses(k)
					if err != nil {
						return err
					}
					if len(uses) > 0 && !c.Bool("force") {
						return a.keyInUse(k, uses)
					}
					if err := a.h.Store.DeleteKey(name); err != nil {
						return err
					}
					if c.Bool("json") {
						out := map[string]any{"removed": name, "untrusted": []string{}}
						for _, u := range uses {
							out["untrusted"] = append(out["untrusted"].([]string), u.release)
						}
						return printJSON(a.stdout, out)
					}
					fmt.Fprintf(a.stdout, "removed key %s\n", name)
					for _, u := range uses {
						fmt.Fprintf(a.stderr, "rukh: warning: %s (%s) no longer runs: its signer is not trusted\n", u.release, u.where)
					}
					if len(uses) > 0 {
						fmt.Fprintf(a.stderr, "rukh: hint: %s\n", republishHint(uses))
					}
					return nil
				},
			},
		},
	}
}

// keyUse is a release signed by a key that the active revision or the
// draft uses.
type keyUse struct {
	name, release string // package name, name@version
	where         string // "published in r3", "activated in the draft", or both
}

// keyUses lists the releases signed by k that the active revision binds or
// the draft activates, by name.
func (a *app) keyUses(k store.Key) ([]keyUse, error) {
	rels, err := a.h.Store.Releases()
	if err != nil {
		return nil, err
	}
	published := map[string]bool{}
	revID := ""
	if rev, err := a.h.Store.ActiveRevision(); err == nil {
		revID = rev.ID
		for _, ref := range rev.Releases {
			published[ref] = true
		}
	} else if kernel.ErrorCode(err) != kernel.CodeNotFound {
		return nil, err
	}
	d, err := a.h.Store.Draft()
	if err != nil {
		return nil, err
	}
	var uses []keyUse
	for _, r := range rels {
		if r.Signer == "" || r.KeyID != k.KeyID {
			continue
		}
		var where []string
		if published[r.Ref()] {
			where = append(where, "published in the active revision "+revID)
		}
		if v, ok := d.Active[r.Name]; ok && v == r.Version {
			where = append(where, "activated in the draft")
		}
		if len(where) > 0 {
			uses = append(uses, keyUse{name: r.Name, release: r.Name + "@" + r.Version, where: strings.Join(where, ", ")})
		}
	}
	return uses, nil
}

func (a *app) keyInUse(k store.Key, uses []keyUse) error {
	var names []string
	for _, u := range uses {
		names = append(names, u.release+" ("+u.where+")")
	}
	return kernel.Errorf(kernel.CodeConflict, "key %s (%s) signed releases in use: %s", k.Name, k.KeyID, strings.Join(names, "; ")).
		WithHint(republishHint(uses) + ", then remove the key\n" +
			"or 'rukh trust remove " + k.Name + " --force': those releases' tools then refuse every call until that publish")
}

// republishHint says how to publish without the releases in uses.
func republishHint(uses []keyUse) string {
	var cmds []string
	seen := map[string]bool{}
	for _, u := range uses {
		if !seen[u.name] {
			seen[u.name] = true
			cmds = append(cmds, "rukh deactivate "+u.name)
		}
	}
	return strings.Join(cmds, ", ") + ", then rukh publish"
}

// untrustedActive lists the releases the active revision binds whose
// signing key is no longer trusted: their calls are refused.
func (a *app) untrustedActive() ([]store.Release, error) {
	rev, err := a.h.Store.ActiveRevision()
	if kernel.ErrorCode(err) == kernel.CodeNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rels, err := a.h.Store.Releases()
	if err != nil {
		return nil, err
	}
	trusted, err := a.h.TrustedKeys()
	if err != nil {
		return nil, err
	}
	bound := map[string]bool{}
	for _, ref := range rev.Releases {
		bound[ref] = true
	}
	var out []store.Release
	for _, r := range rels {
		if bound[r.Ref()] && home.CheckTrusted(r, trusted) != nil {
			out = append(out, r)
		}
	}
	return out, nil
}
