package commands

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rukh-dev/rukh/extpkg"
	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
	"github.com/urfave/cli/v3"
)

// Dev mode (`rukh dev PATH`): an author's working copy becomes the
// development release NAME@dev, replaced in place by every run, active in
// the draft and published at once. Only endpoint dev publishes it (policy
// enforces that); the package's commands leave every other endpoint until
// a real release is active again, since a name has one active release.

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
				return a.devStop(name, c.Bool("json"))
			}
			if c.Args().Len() != 1 {
				return usageErr("dev takes exactly one PATH (a package directory or .tar.gz), or --stop NAME")
			}
			return a.dev(c.Args().First(), c.Bool("json"))
		},
	}
}

type devTool struct {
	Name    string `json:"name"`
	Command string `json:"command"`
}

type devReport struct {
	Name            string              `json:"name"`
	Release         string              `json:"release"`         // NAME@dev
	ManifestVersion string              `json:"manifestVersion"` // the version the manifest declares
	Digest          string              `json:"digest"`
	Development     bool                `json:"development"`
	Replaced        string              `json:"replacedDigest,omitempty"` // the previous development copy
	DraftReplaced   string              `json:"draftReplaced,omitempty"`  // the release the draft activated before
	Unchanged       bool                `json:"unchanged"`
	EndpointAdded   bool                `json:"endpointAdded,omitzero"`
	PublishAdded    bool                `json:"publishAdded,omitzero"` // the package was added to endpoint dev's publish list
	Revision        string              `json:"revision"`
	Publish         *home.PublishReport `json:"publish,omitempty"`
	Tools           []devTool           `json:"tools"` // on endpoint dev
	NotPublishedOn  []string            `json:"notPublishedOn"`
	Serve           string              `json:"serve"`
}

func (a *app) dev(src string, asJSON bool) error {
	scratch := filepath.Join(a.h.Store.Home(), "tmp")
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		return kernel.Errorf(kernel.CodeInternal, "cannot create %s", scratch).Wrap(err)
	}
	// The same checks as install: manifest, programs, defaults, hostile
	// content, digest. Only trust is skipped: the owner is the author.
	p, err := extpkg.Load(src, scratch)
	if err != nil {
		return err
	}
	defer p.Close()
	m := p.Manifest
	dir, _, err := extpkg.Install(p, a.h.Store.DevReleasesDir())
	if err != nil {
		return err
	}
	if err := a.h.ShareCopy(dir, p.Digest); err != nil {
		return err
	}
	prev, err := a.h.Store.PutDevRelease(store.Release{Name: m.Name, Digest: p.Digest, Manifest: p.ManifestJSON, Dir: dir, InstalledAt: time.Now().UTC()})
	if err != nil {
		return err
	}
	rep := devReport{Name: m.Name, Release: m.Name + "@" + store.DevVersion, ManifestVersion: m.Version, Digest: p.Digest,
		Development: true, Tools: []devTool{}, NotPublishedOn: []string{}, Serve: "rukh serve-mcp --endpoint " + policy.DevEndpoint}
	if prev != nil && prev.Digest != p.Digest {
		rep.Replaced = prev.Digest
	}

	ids := make([]string, len(m.Commands))
	for i, c := range m.Commands {
		ids[i] = c.ID
	}
	var prof *policy.Profile
	err = a.h.Store.UpdateDraft(func(d *store.Draft) error {
		if v := d.Active[m.Name]; v != store.DevVersion {
			rep.DraftReplaced = v
		}
		d.Active[m.Name] = store.DevVersion
		var err error
		prof = policy.DefaultProfile()
		if d.Profile != nil {
			if prof, err = policy.ParseProfile(d.Profile); err != nil {
				return err
			}
		}
		ep, ok := prof.Endpoints[policy.DevEndpoint]
		if !ok {
			ep = policy.Endpoint{Namespace: policy.DevEndpoint, Transports: []string{policy.TransportStdio}}
			rep.EndpointAdded = true
		}
		if !ep.Publish.Names(m.Name, ids) {
			ep.Publish.Packages = append(slices.Clone(ep.Publish.Packages), m.Name)
			rep.PublishAdded = true
		}
		if rep.EndpointAdded || rep.PublishAdded {
			prof.Endpoints[policy.DevEndpoint] = ep
			if err := prof.Validate(); err != nil {
				return kernel.Errorf(kernel.CodeInvalid, "cannot add endpoint %s to the draft profile", policy.DevEndpoint).Wrap(err).
					WithHint("give the profile an endpoint named dev yourself ('rukh policy set FILE'), then run 'rukh dev' again")
			}
			d.Profile = prof.Canonical()
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(prof.Endpoints)) {
		if name == policy.DevEndpoint {
			continue
		}
		if prof.Endpoints[name].Publish.Names(m.Name, ids) {
			rep.NotPublishedOn = append(rep.NotPublishedOn, name)
		}
	}

	pub, oldRev, err := a.h.Publish(home.PublishOptions{Note: "rukh dev " + m.Name})
	switch {
	case errors.Is(err, home.ErrUnchanged):
		rep.Unchanged, rep.Revision = true, oldRev.ID
		if b, _, err := a.h.ActiveBinding(); err == nil && b != nil {
			rep.Tools = devTools(b)
		}
	case err != nil:
		return withHintLine(err, fmt.Sprintf("the draft now activates %s; fix the package and run 'rukh dev' again, or leave dev mode with 'rukh dev --stop %s'", rep.Release, m.Name))
	default:
		rep.Revision, rep.Publish, rep.Tools = pub.Revision, pub, devTools(pub.Binding())
	}
	a.sweepDevCopies(rep.Replaced)
	if asJSON {
		return printJSON(a.stdout, rep)
	}
	a.printDev(a.stdout, &rep, oldRev)
	return nil
}

func (a *app) printDev(w io.Writer, rep *devReport, oldRev store.Revision) {
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
	if r, err := a.resolveRelease(name); err == nil {
		return fmt.Sprintf("rukh activate %s@%s && rukh publish", r.Name, r.Version)
	}
	return fmt.Sprintf("rukh install PATH, then rukh activate %s && rukh publish (or rukh dev --stop %s)", name, name)
}

// devTools lists the tools endpoint dev publishes from development releases.
func devTools(b *policy.Binding) []devTool {
	out := []devTool{}
	if b == nil {
		return out
	}
	dev := devReleases(b)
	for _, p := range b.Endpoints {
		if p.Endpoint != policy.DevEndpoint {
			continue
		}
		for _, t := range p.Tools {
			if dev[t.Release] {
				out = append(out, devTool{Name: t.Name, Command: t.Command})
			}
		}
	}
	return out
}

// devReleases is the set of name@version of b's development releases.
func devReleases(b *policy.Binding) map[string]bool {
	out := map[string]bool{}
	if b == nil {
		return out
	}
	for _, r := range b.Releases {
		if r.Development {
			out[r.Name+"@"+r.Version] = true
		}
	}
	return out
}

func (a *app) devStop(name string, asJSON bool) error {
	err := a.h.Store.UpdateDraft(func(d *store.Draft) error {
		v, ok := d.Active[name]
		switch {
		case !ok:
			return kernel.Errorf(kernel.CodeNotFound, "%s is not active in the draft", name).WithHint("'rukh status' shows the draft")
		case v != store.DevVersion:
			return kernel.Errorf(kernel.CodeNotFound, "%s is not in dev mode: the draft activates %s@%s", name, name, v).
				WithHint("'rukh list' marks development releases (dev)")
		}
		delete(d.Active, name)
		return nil
	})
	if err != nil {
		return err
	}
	pub, oldRev, err := a.h.Publish(home.PublishOptions{Note: "rukh dev --stop " + name})
	if err != nil && !errors.Is(err, home.ErrUnchanged) {
		return withHintLine(err, fmt.Sprintf("the draft no longer activates %s@%s; 'rukh status' shows why it does not publish", name, store.DevVersion))
	}
	a.sweepDevCopies("")
	if asJSON {
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

// sweepDevCopies removes development copies nothing needs: neither a
// development release record nor the active revision names their digest.
// A copy younger than a minute is left alone (another 'rukh dev' may be
// about to record it) unless it is the one this run replaced. Failures
// only leave a copy behind for a later sweep.
func (a *app) sweepDevCopies(replaced string) {
	root := a.h.Store.DevReleasesDir()
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	keep := map[string]bool{}
	rels, err := a.h.Store.Releases()
	if err != nil {
		return
	}
	for _, r := range rels {
		if r.Development {
			keep[r.Digest] = true
		}
	}
	b, _, err := a.h.ActiveBinding()
	if err != nil {
		return
	}
	if b != nil {
		for _, r := range b.Releases {
			if r.Development {
				keep[r.Digest] = true
			}
		}
	}
	for _, e := range ents {
		digest, ok := digestOfDirName(e.Name())
		if !ok || keep[digest] {
			continue
		}
		if fi, err := e.Info(); digest != replaced && (err != nil || time.Since(fi.ModTime()) < time.Minute) {
			continue
		}
		// a call still running the copy keeps it until a later sweep
		_ = a.h.Store.TryRemoveHeld(store.HoldRelease, store.ReleaseRef(digest, true), func() error { return extpkg.Remove(root, digest) })
	}
}

// digestOfDirName inverts extpkg.ReleaseDirName ("h1-<hex>" → "h1:<base64>").
func digestOfDirName(name string) (string, bool) {
	h, ok := strings.CutPrefix(name, "h1-")
	if !ok {
		return "", false
	}
	sum, err := hex.DecodeString(h)
	if err != nil || len(sum) != 32 {
		return "", false
	}
	return "h1:" + base64.StdEncoding.EncodeToString(sum), true
}

// withHintLine adds a hint line to a *kernel.Error, keeping its code.
func withHintLine(err error, line string) error {
	var ke *kernel.Error
	if !errors.As(err, &ke) {
		return err
	}
	if ke.Hint != "" {
		line = ke.Hint + "\n" + line
	}
	return ke.WithHint(line)
}
