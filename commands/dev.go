package commands

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
	"github.com/urfave/cli/v3"
)

func (a *app) devCmd() *cli.Command {
	return &cli.Command{
		Name:      "dev",
		Usage:     "try a package while you write it: install it as NAME@dev (replacing the previous one), activate and publish it, live on the CLI and endpoint dev, no version bump",
		ArgsUsage: "PATH | --stop NAME",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "stop", Usage: "leave dev mode: take NAME@dev out of the draft and publish"},
			jsonFlag(),
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			if name := c.String("stop"); name != "" {
				if c.Args().Len() != 0 {
					return usageErr("dev --stop NAME takes no PATH")
				}
				return a.runDevStop(devOptions{stop: name, json: c.Bool("json")})
			}
			if c.Args().Len() != 1 {
				return usageErr("dev takes exactly one PATH (a package directory or .tar.gz), or --stop NAME")
			}
			return a.runDev(devOptions{path: c.Args().First(), json: c.Bool("json")})
		},
	}
}

type devOptions struct {
	path string // the package to try
	stop string // the package whose dev mode ends
	json bool
}

// runDev tries the package at o.path in dev mode (home.Dev) and prints
// what it did.
func (a *app) runDev(o devOptions) error {
	rep, oldRev, err := a.h.Dev(o.path)
	if err != nil {
		return err
	}
	if o.json {
		return printJSON(a.stdout, rep)
	}
	a.printDev(a.stdout, rep, oldRev)
	return nil
}

func (a *app) printDev(w io.Writer, rep *home.DevReport, oldRev store.Revision) {
	if rep.Unchanged {
		fmt.Fprintf(w, "no change: %s (dev) is already %s and live in %s\n", rep.Release, rep.Digest, rep.Revision)
	} else {
		fmt.Fprintf(w, "development release %s (dev) %s, manifest version %s (not signed, no trust check)\n", rep.Release, rep.Digest, rep.ManifestVersion)
		if rep.Replaced != "" {
			fmt.Fprintf(w, "  replaces the development copy %s\n", rep.Replaced)
		}
		if rep.DraftReplaced != "" {
			fmt.Fprintf(w, "  replaces %s@%s in the draft\n", rep.Name, rep.DraftReplaced)
		}
		switch {
		case rep.EndpointAdded:
			fmt.Fprintf(w, "added endpoint %s (namespace %s, stdio) to the draft profile, publishing %s\n", policy.DevEndpoint, policy.DevEndpoint, rep.Name)
		case rep.PublishAdded:
			fmt.Fprintf(w, "endpoint %s now publishes %s\n", policy.DevEndpoint, rep.Name)
		}
		a.printPublish(w, *rep.Publish, oldRev)
	}
	fmt.Fprintf(w, "endpoint %s: %d tool(s)\n", policy.DevEndpoint, len(rep.Tools))
	for _, t := range rep.Tools {
		fmt.Fprintf(w, "  %s  %s\n", t.Name, t.Command)
	}
	fmt.Fprintf(w, "serve it to an agent: %s\n", rep.Serve)
	if len(rep.NotPublishedOn) > 0 {
		fmt.Fprintf(w, "while %s is in dev mode, endpoint(s) %s do not publish its commands; they come back when a release is active again: %s\n",
			rep.Name, strings.Join(rep.NotPublishedOn, ", "), a.leaveDevHint(rep.Name))
	}
}

// leaveDevHint says how to make a real release of name active again.
func (a *app) leaveDevHint(name string) string {
	if r, err := a.h.ResolveRelease(name); err == nil {
		return fmt.Sprintf("rukh activate %s@%s && rukh publish", r.Name, r.Version)
	}
	return fmt.Sprintf("rukh install PATH, then rukh activate %s && rukh publish (or rukh dev --stop %s)", name, name)
}

// runDevStop leaves dev mode for o.stop (home.DevStop) and prints what
// it did.
func (a *app) runDevStop(o devOptions) error {
	rep, err := a.h.DevStop(o.stop)
	if err != nil {
		return err
	}
	name, pub, oldRev := rep.Name, rep.Publish, rep.Active
	if o.json {
		out := map[string]any{"name": name, "stopped": name + "@" + store.DevVersion, "unchanged": pub == nil}
		if pub != nil {
			out["revision"], out["publish"] = pub.Revision, pub
		}
		return printJSON(a.stdout, out)
	}
	fmt.Fprintf(a.stdout, "left dev mode: %s@%s is no longer in the draft\n", name, store.DevVersion)
	if pub != nil {
		a.printPublish(a.stdout, *pub, oldRev)
	} else {
		fmt.Fprintf(a.stdout, "nothing to publish: the active revision %s already has no %s@%s\n", oldRev.ID, name, store.DevVersion)
	}
	fmt.Fprintf(a.stdout, "%s@%s stays installed ('rukh uninstall %s@%s' removes it); to make a release active again: %s\n",
		name, store.DevVersion, name, store.DevVersion, a.leaveDevHint(name))
	return nil
}
