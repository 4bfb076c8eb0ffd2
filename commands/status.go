package commands

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/rukh-dev/rukh/policy"
	"github.com/urfave/cli/v3"
)

type statusOptions struct {
	JSON bool
}

func (a *app) statusCmd() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show the active revision and what publishing the draft would change",
		Flags: []cli.Flag{jsonFlag()},
		Action: func(ctx context.Context, c *cli.Command) error {
			if err := noArgs(c); err != nil {
				return err
			}
			return a.runStatus(&statusOptions{JSON: c.Bool("json")})
		},
	}
}

func (a *app) runStatus(opts *statusOptions) error {
	rep, err := a.h.Status()
	if err != nil {
		return err
	}
	if opts.JSON {
		return printJSON(a.stdout, rep)
	}
	if rep.Active == "" {
		fmt.Fprintln(a.stdout, "active revision: none (nothing published yet)")
	} else {
		fmt.Fprintf(a.stdout, "active revision: %s (published %s)\n", rep.Active, rep.PublishedAt.Format(time.RFC3339))
		eps := make([]string, 0, len(rep.Tools))
		for e := range rep.Tools {
			eps = append(eps, e)
		}
		sort.Strings(eps)
		for _, e := range eps {
			fmt.Fprintf(a.stdout, "  endpoint %s: %d tool(s)\n", e, rep.Tools[e])
		}
		for _, r := range rep.Development {
			fmt.Fprintf(a.stdout, "  %s (dev): development release, published only on endpoint %s\n", r, policy.DevEndpoint)
		}
		for _, d := range rep.Damaged {
			fmt.Fprintf(a.stdout, "  %s: damaged, its calls are refused: %s\n    hint: %s\n", d.Release, printable(d.Problem), printable(d.Hint))
		}
		for _, d := range rep.Untrusted {
			fmt.Fprintf(a.stdout, "  %s: %s, its calls are refused\n    hint: %s\n", d.Release, printable(d.Problem), printable(d.Hint))
		}
		for _, m := range rep.MissingSettings {
			fmt.Fprintf(a.stdout, "  warning: %s\n", printable(m.String()))
		}
	}
	if len(rep.Pending) == 0 {
		fmt.Fprintln(a.stdout, "draft: no changes to publish")
	} else {
		fmt.Fprintln(a.stdout, "draft changes (run 'rukh publish' to make them live):")
		for _, p := range rep.Pending {
			fmt.Fprintf(a.stdout, "  %s\n", p)
		}
	}
	if rep.DraftError != "" {
		fmt.Fprintf(a.stdout, "draft would not publish: %s\n", rep.DraftError)
	}
	return nil
}
