package commands

import (
	"context"
	"fmt"
	"os"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
	"github.com/urfave/cli/v3"
)

type policySetOptions struct {
	File string
	JSON bool
}

type policyShowOptions struct {
	Published bool // the active revision's profile, not the draft's
}

func (a *app) policyCmd() *cli.Command {
	return &cli.Command{
		Name:  "policy",
		Usage: "edit the draft profile: endpoints, what each publishes, limits",
		Commands: []*cli.Command{
			{
				Name:      "set",
				Usage:     "replace the draft profile with a JSON file (live after 'rukh publish')",
				ArgsUsage: "FILE",
				Flags:     []cli.Flag{jsonFlag()},
				Action: func(ctx context.Context, c *cli.Command) error {
					if c.Args().Len() != 1 {
						return usageErr("policy set takes exactly one FILE")
					}
					return a.runPolicySet(&policySetOptions{File: c.Args().First(), JSON: c.Bool("json")})
				},
			},
			{
				Name:  "show",
				Usage: "print the draft profile (defaults filled in)",
				Flags: []cli.Flag{&cli.BoolFlag{Name: "published", Usage: "show the active revision's profile instead"}, jsonFlag()},
				Action: func(ctx context.Context, c *cli.Command) error {
					return a.runPolicyShow(&policyShowOptions{Published: c.Bool("published")})
				},
			},
		},
	}
}

func (a *app) runPolicySet(opts *policySetOptions) error {
	data, err := os.ReadFile(opts.File)
	if err != nil {
		return kernel.Errorf(kernel.CodeInvalid, "cannot read %s", opts.File).Wrap(err)
	}
	p, err := policy.ParseProfile(data)
	if err != nil {
		return kernel.InFile(opts.File, data, err)
	}
	canon, err := a.h.SetDraftProfile(p)
	if err != nil {
		return err
	}
	for _, w := range p.TaskWarnings() {
		fmt.Fprintf(a.stderr, "rukh: warning: %s\n", w)
	}
	if opts.JSON {
		return printJSON(a.stdout, canon)
	}
	fmt.Fprintf(a.stdout, "draft profile set: %d endpoint(s) (run 'rukh publish' to make it live)\n", len(p.Endpoints))
	return nil
}

func (a *app) runPolicyShow(opts *policyShowOptions) error {
	if opts.Published {
		b, _, err := a.h.ActiveBinding()
		if err != nil {
			return err
		}
		if b == nil {
			return kernel.Errorf(kernel.CodeNotFound, "nothing is published yet").WithHint("run 'rukh publish'")
		}
		return printJSON(a.stdout, b.Profile)
	}
	p, err := a.h.DraftProfile()
	if err != nil {
		return err
	}
	return printJSON(a.stdout, p.Canonical())
}
