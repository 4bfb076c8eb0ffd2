package commands

import (
	"context"
	"fmt"

	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
	"github.com/urfave/cli/v3"
)

type activateOptions struct {
	Ref  string // NAME[@VERSION]
	JSON bool
}

type deactivateOptions struct {
	Name string
	JSON bool
}

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
			return a.runActivate(&activateOptions{Ref: c.Args().First(), JSON: c.Bool("json")})
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
			return a.runDeactivate(&deactivateOptions{Name: c.Args().First(), JSON: c.Bool("json")})
		},
	}
}

func (a *app) runActivate(opts *activateOptions) error {
	r, prev, err := a.h.Activate(opts.Ref)
	if err != nil {
		return err
	}
	if opts.JSON {
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
}

func (a *app) runDeactivate(opts *deactivateOptions) error {
	if err := a.h.Deactivate(opts.Name); err != nil {
		return err
	}
	if opts.JSON {
		return printJSON(a.stdout, map[string]string{"deactivated": opts.Name})
	}
	fmt.Fprintf(a.stdout, "deactivated %s in the draft (run 'rukh publish' to make it live)\n", opts.Name)
	return nil
}
