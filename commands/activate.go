package commands

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
	"github.com/urfave/cli/v3"
)

func (a *app) activateCmd() *cli.Command {
	return &cli.Command{
		Name:      "activate",
		Usage:     "make a release the draft's active release of its name (live after 'rukh publish'); without @VERSION, the highest installed version that is not a pre-release",
		ArgsUsage: "NAME[@VERSION]",
		Flags:     []cli.Flag{jsonFlag()},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 1 {
				return usageErr("activate takes exactly one NAME[@VERSION]")
			}
			r, err := a.resolveRelease(c.Args().First())
			if err != nil {
				return err
			}
			prev := ""
			err = a.h.Store.UpdateDraft(func(d *store.Draft) error {
				if d.Active == nil {
					d.Active = map[string]string{}
				}
				prev = d.Active[r.Name]
				d.Active[r.Name] = r.Version
				return nil
			})
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(a.stdout, map[string]string{"name": r.Name, "version": r.Version, "previous": prev})
			}
			switch prev {
			case r.Version:
				fmt.Fprintf(a.stdout, "%s@%s was already active in the draft\n", r.Name, r.Version)
			case "":
				fmt.Fprintf(a.stdout, "activated %s@%s in the draft (run 'rukh publish' to make it live)\n", r.Name, r.Version)
			case store.DevVersion:
				fmt.Fprintf(a.stdout, "activated %s@%s in the draft, replacing the development release %s@%s (run 'rukh publish' to leave dev mode; its commands return to the endpoints that publish them)\n", r.Name, r.Version, r.Name, prev)
			default:
				fmt.Fprintf(a.stdout, "activated %s@%s in the draft, replacing %s (run 'rukh publish' to make it live)\n", r.Name, r.Version, prev)
			}
			if r.Development && prev != r.Version {
				fmt.Fprintf(a.stdout, "%s@%s is a development release: only endpoint %s publishes it\n", r.Name, r.Version, policy.DevEndpoint)
			}
			return nil
		},
	}
}

func (a *app) deactivateCmd() *cli.Command {
	return &cli.Command{
		Name:      "deactivate",
		Usage:     "remove a package name from the draft (live after 'rukh publish')",
		ArgsUsage: "NAME",
		Flags:     []cli.Flag{jsonFlag()},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 1 {
				return usageErr("deactivate takes exactly one NAME")
			}
			name := c.Args().First()
			err := a.h.Store.UpdateDraft(func(d *store.Draft) error {
				if _, ok := d.Active[name]; !ok {
					return kernel.Errorf(kernel.CodeNotFound, "%s is not active in the draft", name).
						WithHint("'rukh status' shows the draft")
				}
				delete(d.Active, name)
				return nil
			})
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(a.stdout, map[string]string{"deactivated": name})
			}
			fmt.Fprintf(a.stdout, "deactivated %s in the draft (run 'rukh publish' to make it live)\n", name)
			return nil
		},
	}
}

// resolveRelease finds NAME@VERSION, or the highest installed version of NAME.
func (a *app) resolveRelease(ref string) (store.Release, error) {
	name, ver, hasVer := strings.Cut(ref, "@")
	if hasVer {
		return a.h.Store.Release(name, ver)
	}
	all, err := a.h.Store.ReleasesOf(name)
	if err != nil {
		return store.Release{}, err
	}
	// The development release is chosen only by name: NAME@dev.
	rels := slices.DeleteFunc(all, func(r store.Release) bool { return r.Development })
	if len(rels) == 0 {
		return store.Release{}, kernel.Errorf(kernel.CodeNotFound, "no release of %s is installed", name).
			WithHint("install it first with 'rukh install PATH'")
	}
	// Sorted by version: the highest release wins, but a pre-release only
	// when nothing else is installed (as with Go modules' "latest").
	for i := len(rels) - 1; i >= 0; i-- {
		if !strings.Contains(strings.SplitN(rels[i].Version, "+", 2)[0], "-") {
			return rels[i], nil
		}
	}
	return rels[len(rels)-1], nil
}
