package commands

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
	"github.com/urfave/cli/v3"
)

func (a *app) publishCmd() *cli.Command {
	return &cli.Command{
		Name:  "publish",
		Usage: "validate the draft and make it the new active revision (CLI routes and MCP tools)",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Usage: "validate and show what would change; commit nothing"},
			&cli.StringFlag{Name: "note", Usage: "a note recorded on the revision"},
			&cli.BoolFlag{Name: "force", Usage: "publish even if nothing changed (compact and full tool names change)"},
			jsonFlag(),
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() > 0 {
				return usageErr("publish takes no arguments")
			}
			return a.runPublish(publishOptions{json: c.Bool("json"),
				PublishOptions: home.PublishOptions{DryRun: c.Bool("dry-run"), Force: c.Bool("force"), Note: c.String("note")}})
		},
	}
}

func (a *app) rollbackCmd() *cli.Command {
	return &cli.Command{
		Name:      "rollback",
		Usage:     "publish a new revision with the binding of an older one",
		ArgsUsage: "REV",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Usage: "show what would change; commit nothing"},
			&cli.BoolFlag{Name: "force", Usage: "publish even if the active revision already has that binding"},
			jsonFlag(),
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 1 {
				return usageErr("rollback takes exactly one REV")
			}
			n, err := store.ParseRevisionID(c.Args().First())
			if err != nil {
				return err
			}
			rev, err := a.h.Store.Revision(n)
			if err != nil {
				return err
			}
			return a.runPublish(publishOptions{json: c.Bool("json"),
				PublishOptions: home.PublishOptions{DryRun: c.Bool("dry-run"), Force: c.Bool("force"), Note: "rollback to " + rev.ID, From: &rev}})
		},
	}
}

type publishOptions struct {
	home.PublishOptions
	json bool
}

// runPublish validates a candidate (the draft, or an older revision for
// rollback), commits it as one new revision unless it is a dry run, and
// prints what it did.
func (a *app) runPublish(o publishOptions) error {
	a.h.BatchGC()
	rep, oldRev, err := a.h.Publish(o.PublishOptions)
	if err != nil {
		return a.unchanged(err, oldRev, o.json)
	}
	if o.json {
		return printJSON(a.stdout, rep)
	}
	// Buffered: a large publish reports a line per release, route and
	// tool, and one write each was a system call each. As before, a failed
	// write of the report does not fail a publish that is committed.
	w := bufio.NewWriterSize(a.stdout, 64<<10)
	a.printPublish(w, *rep, oldRev)
	_ = w.Flush()
	return nil
}

func (a *app) printPublish(w io.Writer, rep home.PublishReport, old store.Revision) {
	switch {
	case rep.DryRun:
		fmt.Fprintf(w, "dry run: would publish %s (the store is unchanged)\n", rep.Revision)
	case rep.RollbackOf != "":
		fmt.Fprintf(w, "published %s (rollback to %s)\n", rep.Revision, rep.RollbackOf)
	default:
		fmt.Fprintf(w, "published %s\n", rep.Revision)
	}
	if old.ID != "" {
		fmt.Fprintf(w, "previous: %s\n", old.ID)
	}
	printChanges(w, rep.Changes)
	for _, e := range rep.Endpoints {
		fmt.Fprintf(w, "endpoint %s: %d tool(s), %s names", e.Endpoint, e.Tools, e.ToolNames)
		if e.Tools > 0 {
			fmt.Fprintf(w, " (longest %d characters)", e.LongestName)
		}
		if e.Unlisted > 0 {
			fmt.Fprintf(w, "; progressive: %d more found through search", e.Unlisted)
		}
		fmt.Fprintln(w)
	}
	for _, n := range rep.NotTools {
		fmt.Fprintf(w, "  not a tool: %s (%s): %s\n", n.Command, n.Release, n.Reason)
		if n.Fix != "" {
			fmt.Fprintf(w, "    fix: %s\n", n.Fix)
		}
	}
	for _, wr := range rep.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", wr)
	}
	for _, e := range rep.Endpoints {
		for _, wr := range e.Warnings {
			fmt.Fprintf(w, "  warning: %s\n", wr.Message)
			if wr.Fix != "" {
				fmt.Fprintf(w, "    fix: %s\n", wr.Fix)
			}
		}
	}
	if rep.DraftReset {
		fmt.Fprintf(w, "the draft now matches %s (its releases and profile)\n", rep.Revision)
	}
}

func printChanges(w io.Writer, c policy.Changes) {
	if c.Empty() {
		fmt.Fprintln(w, "no changes")
		return
	}
	for _, r := range c.ReleasesAdded {
		fmt.Fprintf(w, "  + release %s\n", r)
	}
	for _, r := range c.ReleasesRemoved {
		fmt.Fprintf(w, "  - release %s\n", r)
	}
	if c.ProfileChanged {
		fmt.Fprintln(w, "  ~ profile changed")
	}
	for _, e := range c.EndpointsAdded {
		fmt.Fprintf(w, "  + endpoint %s\n", e)
	}
	for _, e := range c.EndpointsRemoved {
		fmt.Fprintf(w, "  - endpoint %s\n", e)
	}
	for _, r := range c.RoutesAdded {
		fmt.Fprintf(w, "  + route rukh %s\n", r)
	}
	for _, r := range c.RoutesRemoved {
		fmt.Fprintf(w, "  - route rukh %s\n", r)
	}
	for _, r := range c.RoutesChanged {
		fmt.Fprintf(w, "  ~ route rukh %s\n", r)
	}
	for _, t := range c.Added {
		fmt.Fprintf(w, "  + tool %s [%s] %s (%s)\n", t.Name, t.Endpoint, t.Command, t.Release)
	}
	for _, t := range c.Removed {
		fmt.Fprintf(w, "  - tool %s [%s] %s (%s)\n", t.Name, t.Endpoint, t.Command, t.Release)
	}
	for _, t := range c.Updated {
		fmt.Fprintf(w, "  ~ tool %s [%s] %s (%s)\n", t.Name, t.Endpoint, t.Command, t.Release)
	}
	for _, t := range c.Renamed {
		fmt.Fprintf(w, "  ~ tool %s [%s] renamed %s -> %s\n", t.Command, t.Endpoint, t.OldName, t.NewName)
	}
	for _, m := range c.ToolNames {
		if m.Stated {
			fmt.Fprintf(w, "  ~ endpoint %s: tool names %s -> %s\n", m.Endpoint, m.Old, m.New)
			continue
		}
		fmt.Fprintf(w, "  note: endpoint %q: tool names are now %s (the profile states no toolNames); set \"toolNames\": %q in the profile to keep the previous form\n",
			m.Endpoint, m.New, m.Old)
	}
}

// unchanged reports a publish that had nothing to do; other errors pass.
func (a *app) unchanged(err error, active store.Revision, asJSON bool) error {
	if !errors.Is(err, home.ErrUnchanged) {
		return err
	}
	if asJSON {
		return printJSON(a.stdout, map[string]any{"revision": active.ID, "unchanged": true})
	}
	fmt.Fprintf(a.stdout, "nothing to publish: the active revision %s already binds this profile and these releases\n", active.ID)
	fmt.Fprintln(a.stdout, "(use --force to publish a new revision anyway; compact and full tool names change with it)")
	return nil
}
