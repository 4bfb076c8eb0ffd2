package commands

import (
	"context"
	"fmt"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/urfave/cli/v3"
)

type doctorOptions struct {
	JSON bool
}

func (a *app) doctorCmd() *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "check the home: permissions, the store's consistency, every installed release against its digest",
		Flags: []cli.Flag{jsonFlag()},
		Action: func(ctx context.Context, c *cli.Command) error {
			if err := noArgs(c); err != nil {
				return err
			}
			return a.runDoctor(&doctorOptions{JSON: c.Bool("json")})
		},
	}
}

func (a *app) runDoctor(opts *doctorOptions) error {
	rep := a.h.Doctor()
	if opts.JSON {
		if err := printJSON(a.stdout, rep); err != nil {
			return err
		}
	} else {
		for _, ch := range rep.Checks {
			if ch.OK {
				fmt.Fprintf(a.stdout, "ok    %s\n", ch.Check)
				continue
			}
			fmt.Fprintf(a.stdout, "FAIL  %s: %s\n", ch.Check, printable(ch.Problem))
			if ch.Hint != "" {
				fmt.Fprintf(a.stdout, "      hint: %s\n", printable(ch.Hint))
			}
		}
		if rep.Healthy {
			fmt.Fprintf(a.stdout, "home %s is healthy\n", rep.Home)
		}
	}
	if !rep.Healthy {
		return &exitError{code: ExitFailed, err: kernel.Errorf(kernel.CodeInvalid, "%d problem(s) in home %s", rep.Problems, rep.Home)}
	}
	return nil
}
