package home

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/rukh-dev/rukh/extpkg"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
)

// Dev mode (`rukh dev PATH`): an author's working copy becomes the
// development release NAME@dev, replaced in place by every run, active in
// the draft and published at once. Only endpoint dev publishes it (policy
// enforces that); the package's commands leave every other endpoint until
// a real release is active again, since a name has one active release.

// DevTool is one tool endpoint dev publishes from a development release.
type DevTool struct {
	Name    string `json:"name"`
	Command string `json:"command"`
}

// DevReport is what Dev did.
type DevReport struct {
	Name            string         `json:"name"`
	Release         string         `json:"release"`         // NAME@dev
	ManifestVersion string         `json:"manifestVersion"` // the version the manifest declares
	Digest          string         `json:"digest"`
	Development     bool           `json:"development"`
	Replaced        string         `json:"replacedDigest,omitempty"` // the previous development copy
	DraftReplaced   string         `json:"draftReplaced,omitempty"`  // the release the draft activated before
	Unchanged       bool           `json:"unchanged"`
	EndpointAdded   bool           `json:"endpointAdded,omitzero"`
	PublishAdded    bool           `json:"publishAdded,omitzero"` // the package was added to endpoint dev's publish list
	Revision        string         `json:"revision"`
	Publish         *PublishReport `json:"publish,omitempty"`
	Tools           []DevTool      `json:"tools"` // on endpoint dev
	NotPublishedOn  []string       `json:"notPublishedOn"`
	Serve           string         `json:"serve"`
}

// Dev installs the package at src as its development release, activates
// it in the draft (adding endpoint dev and its publish list entry when
// needed) and publishes. It returns the report and the revision that was
// active before.
func (h *Home) Dev(src string) (*DevReport, store.Revision, error) {
	scratch, err := h.scratchDir()
	if err != nil {
		return nil, store.Revision{}, err
	}
	// The same checks as install: manifest, programs, defaults, hostile
	// content, digest. Only trust is skipped: the owner is the author.
	p, err := extpkg.Load(src, scratch)
	if err != nil {
		return nil, store.Revision{}, err
	}
	defer p.Close()
	m := p.Manifest
	dir, _, err := extpkg.Install(p, h.Store.DevReleasesDir())
	if err != nil {
		return nil, store.Revision{}, err
	}
	if err := h.shareCopy(dir, p.Digest); err != nil {
		return nil, store.Revision{}, err
	}
	prev, err := h.Store.PutDevRelease(store.Release{Name: m.Name, Digest: p.Digest, Manifest: p.ManifestJSON, Dir: dir, InstalledAt: time.Now().UTC()})
	if err != nil {
		return nil, store.Revision{}, err
	}
	rep := &DevReport{Name: m.Name, Release: m.Name + "@" + store.DevVersion, ManifestVersion: m.Version, Digest: p.Digest,
		Development: true, Tools: []DevTool{}, NotPublishedOn: []string{}, Serve: "rukh serve-mcp --endpoint " + policy.DevEndpoint}
	if prev != nil && prev.Digest != p.Digest {
		rep.Replaced = prev.Digest
	}
	if err := h.activateDev(m, rep); err != nil {
		return nil, store.Revision{}, err
	}

	pub, oldRev, err := h.Publish(PublishOptions{Note: "rukh dev " + m.Name})
	switch {
	case errors.Is(err, ErrUnchanged):
		rep.Unchanged, rep.Revision = true, oldRev.ID
		if b, _, err := h.ActiveBinding(); err == nil && b != nil {
			rep.Tools = devTools(b)
		}
	case err != nil:
		return nil, oldRev, withHintLine(err, fmt.Sprintf("the draft now activates %s; fix the package and run 'rukh dev' again, or leave dev mode with 'rukh dev --stop %s'", rep.Release, m.Name))
	default:
		rep.Revision, rep.Publish, rep.Tools = pub.Revision, pub, devTools(pub.binding)
	}
	h.SweepDevCopies(rep.Replaced)
	return rep, oldRev, nil
}

// activateDev makes the draft activate m's development release, with
// endpoint dev publishing it, and notes in rep what it changed and which
// other endpoints no longer publish the package's commands.
func (h *Home) activateDev(m *kernel.Manifest, rep *DevReport) error {
	ids := make([]string, len(m.Commands))
	for i, c := range m.Commands {
		ids[i] = c.ID
	}
	var prof *policy.Profile
	err := h.Store.UpdateDraft(func(d *store.Draft) error {
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
	return nil
}

// DevStopReport is what DevStop did.
type DevStopReport struct {
	Name    string
	Publish *PublishReport // nil: the active revision already had no NAME@dev
	Active  store.Revision // the revision active before
}

// DevStop leaves dev mode for name: the draft no longer activates
// NAME@dev, and the draft is published.
func (h *Home) DevStop(name string) (*DevStopReport, error) {
	err := h.Store.UpdateDraft(func(d *store.Draft) error {
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
		return nil, err
	}
	pub, oldRev, err := h.Publish(PublishOptions{Note: "rukh dev --stop " + name})
	if err != nil && !errors.Is(err, ErrUnchanged) {
		return nil, withHintLine(err, fmt.Sprintf("the draft no longer activates %s@%s; 'rukh status' shows why it does not publish", name, store.DevVersion))
	}
	h.SweepDevCopies("")
	return &DevStopReport{Name: name, Publish: pub, Active: oldRev}, nil
}

// devTools lists the tools endpoint dev publishes from development releases.
func devTools(b *policy.Binding) []DevTool {
	out := []DevTool{}
	if b == nil {
		return out
	}
	dev := DevReleases(b)
	for _, p := range b.Endpoints {
		if p.Endpoint != policy.DevEndpoint {
			continue
		}
		for _, t := range p.Tools {
			if dev[t.Release] {
				out = append(out, DevTool{Name: t.Name, Command: t.Command})
			}
		}
	}
	return out
}

// DevReleases is the set of name@version of b's development releases.
func DevReleases(b *policy.Binding) map[string]bool {
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

// SweepDevCopies removes development copies nothing needs: neither a
// development release record nor the active revision names their digest.
// A copy younger than a minute is left alone (another 'rukh dev' may be
// about to record it) unless it is the one this run replaced. Failures
// only leave a copy behind for a later sweep.
func (h *Home) SweepDevCopies(replaced string) {
	root := h.Store.DevReleasesDir()
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	keep := map[string]bool{}
	rels, err := h.Store.Releases()
	if err != nil {
		return
	}
	for _, r := range rels {
		if r.Development {
			keep[r.Digest] = true
		}
	}
	b, _, err := h.ActiveBinding()
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
		_ = h.Store.TryRemoveHeld(store.HoldRelease, store.ReleaseRef(digest, true), func() error { return extpkg.Remove(root, digest) })
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
