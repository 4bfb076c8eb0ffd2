package home

import (
	"bytes"
	"errors"
	"maps"
	"runtime/debug"
	"slices"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/search"
	"github.com/rukh-dev/rukh/store"
)

// PublishOptions say what a publish commits.
type PublishOptions struct {
	DryRun bool            // validate and report; commit nothing
	Force  bool            // publish even if nothing changed
	Note   string          // recorded on the revision
	From   *store.Revision // rollback: publish this revision's binding
}

// PublishReport is what a publish did (or, in a dry run, would do).
type PublishReport struct {
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

	binding *policy.Binding // what was built, for callers that report more
}

// ErrUnchanged stops a publish whose candidate binds exactly what the
// active revision binds: a new revision would only rename every tool.
var ErrUnchanged = errors.New("unchanged")

// publishMemory is the soft bound on what a publish keeps in the Go heap:
// garbage is collected less often than by default below it, and more often
// near it (what the largest candidates hold live: docs/performance.md).
const publishMemory = 200 << 20

// BatchGC tunes the collector for a publish, a batch verb whose process
// ends with it: fewer collections while the heap is small, a soft memory
// limit when it is large. GOGC or GOMEMLIMIT in the environment win.
func (h *Home) BatchGC() {
	if h.Env("GOGC") == "" && h.Env("GOMEMLIMIT") == "" {
		debug.SetGCPercent(400)
		debug.SetMemoryLimit(publishMemory)
	}
}

// Publish validates a candidate (the draft, or an older revision for
// rollback) and commits it as one new revision unless it is a dry run. It
// returns the report and the revision that was active before;
// ErrUnchanged when there was nothing to do.
func (h *Home) Publish(o PublishOptions) (*PublishReport, store.Revision, error) {
	// Summaries, not whole bindings: a publish holds the names, paths and
	// tool sums of both revisions, never every declaration. The active
	// revision's routes and tools are read once the candidate is built:
	// held through the build, they would only make the collector work.
	old, oldRev, err := h.activeHead()
	if err != nil {
		return nil, oldRev, err
	}
	c := &candidate{h: h, o: o, old: old, oldRev: oldRev}
	if old != nil {
		if c.oldUnsearched, err = h.unsearched(oldRev); err != nil {
			return nil, oldRev, err
		}
	}
	var rep *PublishReport
	if o.DryRun {
		var id string
		if id, err = h.nextRevisionID(); err == nil {
			if err = c.build(id, nil); err == nil {
				rep = c.report(id)
			}
		}
	} else {
		rep, err = h.writeRevision(oldRev, c)
	}
	if err != nil {
		return nil, oldRev, err
	}
	missing, err := h.MissingSettings(c.built.Releases, endpointNames(c.built))
	if err != nil {
		return nil, oldRev, err
	}
	for _, m := range missing {
		rep.Warnings = append(rep.Warnings, m.String())
	}
	if o.From != nil && !o.DryRun {
		// The draft follows a rollback: otherwise the next publish, for any
		// reason, would quietly bring back what was rolled back.
		if err := h.resetDraft(c.built); err != nil {
			return nil, oldRev, err
		}
		rep.DraftReset = true
	}
	return rep, oldRev, nil
}

// activeHead is the active revision and its head (revisionHead); both are
// zero when nothing is published yet.
func (h *Home) activeHead() (*policy.Binding, store.Revision, error) {
	rev, err := h.Store.ActiveRevision()
	if err != nil {
		if kernel.ErrorCode(err) == kernel.CodeNotFound {
			err = nil
		}
		return nil, store.Revision{}, err
	}
	old, err := h.revisionHead(rev)
	return old, rev, err
}

// nextRevisionID is the id a publish would give its revision now.
func (h *Home) nextRevisionID() (string, error) {
	revs, err := h.Store.Revisions()
	if err != nil {
		return "", err
	}
	next := uint64(1)
	if len(revs) > 0 {
		next = revs[len(revs)-1].Number + 1 // numbers go on after a prune
	}
	return store.RevisionID(next), nil
}

// writeRevision builds the candidate into a new revision's index after
// oldRev and commits it; it returns the report of the new revision.
func (h *Home) writeRevision(oldRev store.Revision, c *candidate) (*PublishReport, error) {
	var reported chan *PublishReport
	_, err := h.Store.Publish(oldRev.Number, func(number uint64, id string, w *store.IndexWriter) (store.Revision, error) {
		w.IndexSearch(search.ObjectBag) // for discovery, and 'rukh tools --search'
		if err := c.build(id, w); err != nil {
			return store.Revision{}, err
		}
		// The report reads only the built candidate, so it is made on the
		// other CPU while the store writes the index's objects and commits,
		// which wait on the disk more than they use a CPU.
		reported = make(chan *PublishReport, 1)
		go func() { reported <- c.report(id) }()
		r := store.Revision{Number: number, ID: id, CreatedAt: time.Now().UTC(), Parent: oldRev.Number, Note: c.o.Note}
		if c.o.From != nil {
			r.RollbackOf = c.o.From.Number
		}
		for _, br := range c.built.Releases {
			r.Releases = append(r.Releases, store.ReleaseRef(br.Digest, br.Development))
		}
		return r, nil
	})
	var rep *PublishReport
	if reported != nil {
		rep = <-reported
	}
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// candidate is one publish's candidate as it is built.
type candidate struct {
	h      *Home
	o      PublishOptions
	old    *policy.Binding // the active revision's head, then (once built) its summary; nil when none
	oldRev store.Revision

	// oldUnsearched: the active revision has an endpoint without search
	// records (published before them), so binding the same is a change.
	oldUnsearched bool

	built     *policy.Binding
	warns     []string
	noProfile bool
}

// unsearched reports whether rev has an endpoint without search records.
func (h *Home) unsearched(rev store.Revision) (bool, error) {
	if !rev.Indexed {
		return true, nil
	}
	unsearched := false
	err := h.Store.ViewRevision(rev.Number, func(ix *store.Index) error {
		for _, e := range ix.Endpoints() {
			unsearched = unsearched || !e.Search
		}
		return nil
	})
	return unsearched, err
}

// unchanged reports whether a candidate that binds built is no change to
// the active revision.
func (c *candidate) unchanged(built *policy.Binding) bool {
	return !c.o.Force && !c.oldUnsearched && sameBinding(c.old, built)
}

// input is the candidate's input for revision id and its releases'
// name@version, by name.
func (c *candidate) input(id string) (policy.Input, []string, error) {
	if c.o.From != nil {
		fb, err := c.h.revisionHead(*c.o.From) // its profile and releases
		if err != nil {
			return policy.Input{}, nil, err
		}
		in, err := c.h.BindingSource(fb, id)
		return in, releaseKeys(fb.Releases), err
	}
	d, err := c.h.Store.Draft()
	if err != nil {
		return policy.Input{}, nil, err
	}
	var versions []string
	for _, n := range slices.Sorted(maps.Keys(d.Active)) {
		versions = append(versions, n+"@"+d.Active[n])
	}
	slices.Sort(versions) // as releaseKeys
	in, err := c.h.DraftSource(id)
	return in, versions, err
}

// build builds the candidate for revision id into w (nil: a dry run);
// ErrUnchanged when it binds what the active revision binds.
func (c *candidate) build(id string, w policy.IndexSink) error {
	in, versions, err := c.input(id)
	if err != nil {
		return err
	}
	c.noProfile = in.Profile == nil
	if w != nil && c.knownUnchanged(in, versions) {
		return ErrUnchanged
	}
	c.built, c.warns, err = policy.Stream(in, w)
	if err == nil && c.unchanged(c.built) {
		return ErrUnchanged
	}
	if err == nil && c.old != nil {
		// Still the active revision while a publish builds (it commits only
		// if so), so its routes and tools are there to be read.
		c.old, err = c.h.RevisionSummary(c.oldRev)
	}
	return err
}

// knownUnchanged finds out, before a whole index is written only to be
// dropped, whether the candidate binds what the active revision binds.
func (c *candidate) knownUnchanged(in policy.Input, versions []string) bool {
	if c.o.Force || c.oldUnsearched || !mayBeUnchanged(c.old, in, versions) {
		return false
	}
	built, _, err := policy.Stream(in, nil)
	return err == nil && c.unchanged(built)
}

// report is the built candidate's report as revision id.
func (c *candidate) report(id string) *PublishReport {
	built := c.built
	rep := &PublishReport{Revision: id, DryRun: c.o.DryRun, Changes: policy.Diff(c.old, built), Warnings: c.warns, Tools: map[string]int{},
		NotTools: policy.NotTools(built), Endpoints: policy.Endpoints(built, c.noProfile), NoProfile: c.noProfile, binding: built}
	if c.o.From != nil {
		rep.RollbackOf = c.o.From.ID
	}
	for i := range built.Endpoints {
		p := &built.Endpoints[i]
		rep.Tools[p.Endpoint] = len(policy.ServedToolNames(built, p))
	}
	return rep
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
	// What the host can enforce decides too: a template that became
	// available, or stopped being, changes what is published.
	unavailable := make(map[string]string, len(old.Endpoints))
	for _, p := range old.Endpoints {
		unavailable[p.Endpoint] = p.Unavailable
	}
	for _, p := range built.Endpoints {
		if unavailable[p.Endpoint] != p.Unavailable {
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

// resetDraft makes the draft activate exactly b's releases under b's profile.
func (h *Home) resetDraft(b *policy.Binding) error {
	return h.Store.UpdateDraft(func(d *store.Draft) error {
		d.Active = make(map[string]string, len(b.Releases))
		for _, r := range b.Releases {
			d.Active[r.Name] = r.Version
		}
		d.Profile = append([]byte(nil), b.Profile...)
		return nil
	})
}
