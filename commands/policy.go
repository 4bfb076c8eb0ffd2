package commands

import (
	"context"
	"fmt"
	"os"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
	"github.com/urfave/cli/v3"
)

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
					data, err := os.ReadFile(c.Args().First())
					if err != nil {
						return kernel.Errorf(kernel.CodeInvalid, "cannot read %s", c.Args().First()).Wrap(err)
					}
					p, err := policy.ParseProfile(data)
					if err != nil {
						return kernel.InFile(c.Args().First(), data, err)
					}
					canon := p.Canonical()
					if err := a.h.Store.UpdateDraft(func(d *store.Draft) error {
						d.Profile = canon
						return nil
					}); err != nil {
						return err
					}
					for _, w := range p.TaskWarnings() {
						fmt.Fprintf(a.stderr, "rukh: warning: %s\n", w)
					}
					if c.Bool("json") {
						return printJSON(a.stdout, canon)
					}
					fmt.Fprintf(a.stdout, "draft profile set: %d endpoint(s) (run 'rukh publish' to make it live)\n", len(p.Endpoints))
					return nil
				},
			},
			{
				Name:  "show",
				Usage: "print the draft profile (defaults filled in)",
				Flags: []cli.Flag{&cli.BoolFlag{Name: "published", Usage: "show the active revision's profile instead"}, jsonFlag()},
				Action: func(ctx context.Context, c *cli.Command) error {
					if c.Bool("published") {
						b, _, err := a.h.ActiveBinding()
						if err != nil {
							return err
						}
						if b == nil {
							return kernel.Errorf(kernel.CodeNotFound, "nothing is published yet").WithHint("run 'rukh publish'")
						}
						return printJSON(a.stdout, b.Profile)
					}
					p, err := a.draftProfile()
					if err != nil {
						return err
					}
					return printJSON(a.stdout, p.Canonical())
				},
			},
		},
	}
}

func (a *app) draftProfile() (*policy.Profile, error) { return a.h.DraftProfile() }
