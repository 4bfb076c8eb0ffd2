package commands

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/urfave/cli/v3"
)

type diagnosticsOptions struct {
	Invocation string // show this one; "" lists them all
	JSON       bool
}

func (a *app) diagnosticsCmd() *cli.Command {
	return &cli.Command{
		Name:      "diagnostics",
		Usage:     "show what served invocations wrote to stdout and stderr (kept bounded in the home)",
		ArgsUsage: "[INVOCATION]",
		Flags:     []cli.Flag{jsonFlag()},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() > 1 {
				return usageErr("diagnostics takes at most one INVOCATION")
			}
			return a.runDiagnostics(&diagnosticsOptions{Invocation: c.Args().First(), JSON: c.Bool("json")})
		},
	}
}

func withNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

func withReason(reason string) string {
	if reason == "" {
		return ""
	}
	return " (" + reason + ")"
}

func (a *app) runDiagnostics(opts *diagnosticsOptions) error {
	recs, err := a.h.LoadDiagnostics()
	if err != nil {
		return err
	}
	if id := opts.Invocation; id != "" {
		for _, r := range recs {
			if r.InvocationID == id {
				if opts.JSON {
					return printJSON(a.stdout, r)
				}
				fmt.Fprintf(a.stdout, "invocation %s: %s on endpoint %s at %s\n", r.InvocationID, r.Command, r.Endpoint, r.At.Format(time.RFC3339))
				fmt.Fprintf(a.stdout, "outcome: %s%s\n", r.Outcome, withReason(r.Reason))
				fmt.Fprintf(a.stdout, "--- stdout (%d bytes kept, %d dropped)\n%s", len(r.Stdout), r.StdoutDropped, withNewline(r.Stdout))
				fmt.Fprintf(a.stdout, "--- stderr (%d bytes kept, %d dropped)\n%s", len(r.Stderr), r.StderrDropped, withNewline(r.Stderr))
				return nil
			}
		}
		return kernel.Errorf(kernel.CodeNotFound, "no diagnostics for invocation %q", id).
			WithHint("run 'rukh diagnostics' to list the kept invocations")
	}
	if opts.JSON {
		if recs == nil {
			recs = []home.DiagnosticRecord{}
		}
		return printJSON(a.stdout, recs)
	}
	if len(recs) == 0 {
		fmt.Fprintln(a.stdout, "no diagnostics kept")
		return nil
	}
	for _, r := range recs {
		fmt.Fprintf(a.stdout, "%s  %s  %s  %s  stdout %d+%d  stderr %d+%d bytes\n", r.At.Format(time.RFC3339), r.InvocationID, r.Command,
			r.Outcome, len(r.Stdout), r.StdoutDropped, len(r.Stderr), r.StderrDropped)
	}
	return nil
}
