package commands

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
	"github.com/urfave/cli/v3"
)

type auditOptions struct {
	Agent string // only this agent's calls
	Since string // an RFC 3339 time or a duration
	Limit int    // the newest N; 0 for all
	JSON  bool
}

func (a *app) auditCmd() *cli.Command {
	return &cli.Command{
		Name:  "audit",
		Usage: "show the audit log of served calls: time, agent, endpoint, tool, command, outcome, duration",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "agent", Usage: "only this agent's calls"},
			&cli.StringFlag{Name: "since", Usage: "only calls since T: an RFC 3339 time or a duration such as 1h"},
			&cli.IntFlag{Name: "limit", Value: 100, Usage: "the newest N calls; 0 for all"},
			jsonFlag(),
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			if err := noArgs(c); err != nil {
				return err
			}
			return a.runAudit(&auditOptions{Agent: c.String("agent"), Since: c.String("since"), Limit: c.Int("limit"), JSON: c.Bool("json")})
		},
	}
}

func (a *app) runAudit(opts *auditOptions) error {
	since, err := parseSince(opts.Since, time.Now())
	if err != nil {
		return err
	}
	if opts.Limit < 0 {
		return usageErr("--limit must be 0 or more")
	}
	recs, total, err := a.h.Store.Audit(store.AuditQuery{Agent: opts.Agent, Since: since, Limit: opts.Limit})
	if err != nil {
		return err
	}
	if recs == nil {
		recs = []store.AuditRecord{}
	}
	if opts.JSON {
		return printJSON(a.stdout, map[string]any{"records": recs, "total": total})
	}
	if total == 0 {
		fmt.Fprintln(a.stdout, "no calls recorded")
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tTRANSPORT\tAGENT\tCREDENTIAL\tENDPOINT\tTOOL\tCOMMAND\tOUTCOME\tDURATION\tREASON")
	for _, r := range recs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%dms\t%s\n", r.Time.UTC().Format(time.RFC3339Nano), r.Transport,
			dash(r.Agent), dash(r.Credential), r.Endpoint, dash(r.Tool), dash(r.Command), r.Outcome, r.DurationMs, dash(r.Reason))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if total > len(recs) {
		fmt.Fprintf(a.stdout, "(the newest %d of %d; --limit 0 shows all)\n", len(recs), total)
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// parseSince reads --since: an RFC 3339 time, or a duration back from now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, kernel.Errorf(kernel.CodeUsage, "invalid --since %q", s).
		WithHint("give an RFC 3339 time (2026-07-01T12:00:00Z) or a duration back from now (90m, 24h)")
}
