package commands

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime/debug"
	"slices"
	"time"

	"github.com/rukh-dev/rukh/kernel"
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
			return a.publish(publishOptions{dryRun: c.Bool("dry-run"), force: c.Bool("force"), note: c.String("note"), json: c.Bool("json")})
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
			return a.publish(publishOptions{dryRun: c.Bool("dry-run"), force: c.Bool("force"), note: "rollback to " + rev.ID, json: c.Bool("json"), from: &rev})
		},
	}
}

type publishReport struct {
	Revision   string                  `json:"revision"`
	DryRun     bool                    `json:"dryRun"`
	RollbackOf string                  `json:"rollbackOf,omitempty"`
	Changes    policy.Changes          `json:"changes"`
	Warnings   []string                `json:"warnings,omitempty"` // about the profile's publish lists
	NotTools   []policy.NotTool        `json:"notTools,omitempty"`
	Tools      map[string]int          `json:"tools"` // per endpoint
	Endpoints  []policy.EndpointReport `json:"endpoints"`
	NoProfile  bool                    `json:"noProfile,omitempty"` // the owner never set a profile
	DraftReset bool                    `json:"draftReset,omitempty"`

	binding *policy.Binding // what was built, for callers that print more
}

type publishOptions struct {
	dryRun, force, json bool
	note                string
	from                *store.Revision // rollback: publish this revision's binding
}

// errUnchanged stops a publish whose candidate binds exactly what the
// active revision binds: a new revision would only rename every tool.
var errUnchanged = errors.New("unchanged")

// publish validates a candidate (the draft, or an older revision for
// rollback) and commits it as one new revision unless it is a dry run.
func (a *app) publish(o publishOptions) error {
	batchGC(a.h.Env)
	rep, oldRev, err := a.commitCandidate(o)
	if err != nil {
		return a.unchanged(err, oldRev, o.json)
	}
	if o.json {
		return printJSON(a.stdout, rep)
	}
	a.printPublish(a.stdout, *rep, oldRev)
	return nil
}

// publishMemory is the soft bound on what a publish keeps in the Go heap:
// garbage is collected less often than by default below it, and more often
// near it (what the largest candidates hold live: docs/performance.md).
const publishMemory = 200 << 20

// batchGC tunes the collector for a publish, a batch verb whose process
// ends with it: fewer collections while the heap is small, a soft memory
// limit when it is large. GOGC or GOMEMLIMIT in the environment win.
func batchGC(env func(string) string) {
	if env("GOGC") == "" && env("GOMEMLIMIT") == "" {
		debug.SetGCPercent(400)
		debug.SetMemoryLimit(publishMemory)
	}
}

// commitCandidate is publish without the printing: it returns the report and
// the revision that was active before; errUnchanged when there was nothing to do.
func (a *app) commitCandidate(o publishOptions) (*publishReport, store.Revision, error) {
	dryRun, note, from := o.dryRun, o.note, o.from
	// Summaries, not whole bindings: a publish holds the names, paths and
	// tool sums of both revisions, never every declaration.
	var (
		old    *policy.Binding
		oldRev store.Revision
	)
	if rev, err := a.h.Store.ActiveRevision(); err == nil {
		oldRev = rev
		if old, err = a.h.RevisionSummary(rev); err != nil {
			return nil, oldRev, err
		}
	} else if kernel.ErrorCode(err) != kernel.CodeNotFound {
		return nil, oldRev, err
	}
	// candidate is the input and its releases' name@version, by name.
	candidate := func(id string) (policy.Input, []string, error) {
		if from != nil {
			fb, err := a.h.RevisionSummary(*from)
			if err != nil {
				return policy.Input{}, nil, err
			}
			in, err := a.h.BindingSource(fb, id)
			return in, releaseKeys(fb.Releases), err
		}
		d, err := a.h.Store.Draft()
		if err != nil {
			return policy.Input{}, nil, err
		}
		var versions []string
		for _, n := range slices.Sorted(maps.Keys(d.Active)) {
			versions = append(versions, n+"@"+d.Active[n])
		}
		slices.Sort(versions) // as releaseKeys
		in, err := a.h.DraftSource(id)
		return in, versions, err
	}
	var (
		built     *policy.Binding
		warns     []string
		noProfile bool
	)
	build := func(id string, w policy.IndexSink) error {
		in, versions, err := candidate(id)
		if err != nil {
			return err
		}
		noProfile = in.Profile == nil
		if w != nil && !o.force && mayBeUnchanged(old, in, versions) {
			// Find out before writing a whole index only to drop it.
			built, _, err = policy.Stream(in, nil)
			if err == nil && sameBinding(old, built) {
				return errUnchanged
			}
		}
		built, warns, err = policy.Stream(in, w)
		if err == nil && !o.force && sameBinding(old, built) {
			return errUnchanged
		}
		return err
	}

	var newID string
	if dryRun {
		revs, err := a.h.Store.Revisions()
		if err != nil {
			return nil, oldRev, err
		}
		next := uint64(1)
		if len(revs) > 0 {
			next = revs[len(revs)-1].Number + 1 // numbers go on after a prune
		}
		newID = store.RevisionID(next)
		if err := build(newID, nil); err != nil {
			return nil, oldRev, err
		}
	} else {
		rev, err := a.h.Store.Publish(oldRev.Number, func(number uint64, id string, w *store.IndexWriter) (store.Revision, error) {
			if err := build(id, w); err != nil {
				return store.Revision{}, err
			}
			r := store.Revision{Number: number, ID: id, CreatedAt: time.Now().UTC(), Parent: oldRev.Number, Note: note}
			if from != nil {
				r.RollbackOf = from.Number
			}
			for _, br := range built.Releases {
				r.Releases = append(r.Releases, store.ReleaseRef(br.Digest, br.Development))
			}
			return r, nil
		})
		if err != nil {
			return nil, oldRev, err
		}
		newID = rev.ID
	}

	rep := publishReport{Revision: newID, DryRun: dryRun, Changes: policy.Diff(old, built), Warnings: warns, Tools: map[string]int{},
		NotTools: policy.NotTools(built), Endpoints: policy.Endpoints(built, noProfile), NoProfile: noProfile, binding: built}
	if from != nil {
		rep.RollbackOf = from.ID
	}
	for i := range built.Endpoints {
		p := &built.Endpoints[i]
		rep.Tools[p.Endpoint] = len(policy.ServedToolNames(built, p))
	}
	if from != nil && !dryRun {
		// The draft follows a rollback: otherwise the next publish, for any
		// reason, would quietly bring back what was rolled back.
		if err := a.resetDraft(built); err != nil {
			return nil, oldRev, err
		}
		rep.DraftReset = true
	}
	return &rep, oldRev, nil
}

func (a *app) printPublish(w io.Writer, rep publishReport, old store.Revision) {
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

// sameBinding reports whether a candidate binds the same profile and
// releases as the active revision; everything else follows from those.
func sameBinding(old, built *policy.Binding) bool {
	if old == nil || !bytes.Equal(old.Profile, built.Profile) || len(old.Releases) != len(built.Releases) {
		return false
	}
	for i := range old.Releases {
		if old.Releases[i].Digest != built.Releases[i].Digest {
			return false
		}
	}
	return true
}

// mayBeUnchanged reports whether a candidate could bind what old binds:
// the same profile and the same release versions (digests are known only
// once the releases are read).
func mayBeUnchanged(old *policy.Binding, in policy.Input, versions []string) bool {
	return old != nil && bytes.Equal(old.Profile, policy.BoundProfile(in.Profile)) && slices.Equal(releaseKeys(old.Releases), versions)
}

// releaseKeys are the releases' name@version, by name.
func releaseKeys(rs []policy.BoundRelease) []string {
	keys := make([]string, len(rs))
	for i, r := range rs {
		keys[i] = r.Name + "@" + r.Version
	}
	slices.Sort(keys)
	return keys
}

// unchanged reports a publish that had nothing to do; other errors pass.
func (a *app) unchanged(err error, active store.Revision, asJSON bool) error {
	if !errors.Is(err, errUnchanged) {
		return err
	}
	if asJSON {
		return printJSON(a.stdout, map[string]any{"revision": active.ID, "unchanged": true})
	}
	fmt.Fprintf(a.stdout, "nothing to publish: the active revision %s already binds this profile and these releases\n", active.ID)
	fmt.Fprintln(a.stdout, "(use --force to publish a new revision anyway; compact and full tool names change with it)")
	return nil
}

// resetDraft makes the draft activate exactly b's releases under b's profile.
func (a *app) resetDraft(b *policy.Binding) error {
	return a.h.Store.UpdateDraft(func(d *store.Draft) error {
		d.Active = make(map[string]string, len(b.Releases))
		for _, r := range b.Releases {
			d.Active[r.Name] = r.Version
		}
		d.Profile = append([]byte(nil), b.Profile...)
		return nil
	})
}
