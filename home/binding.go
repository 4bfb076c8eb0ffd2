package home

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/rukh-dev/rukh/extpkg"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/search"
	"github.com/rukh-dev/rukh/store"
)

// ActiveBinding reads the whole active revision (owner verbs; running a
// command reads only its route and record); a nil binding means nothing
// has been published yet.
func (h *Home) ActiveBinding() (*policy.Binding, store.Revision, error) {
	rev, err := h.Store.ActiveRevision()
	if err != nil {
		if kernel.ErrorCode(err) == kernel.CodeNotFound {
			return nil, store.Revision{}, nil
		}
		return nil, store.Revision{}, err
	}
	b, err := h.RevisionBinding(rev)
	return b, rev, err
}

// RevisionBinding reads a whole revision, indexed or in the schema-1 layout.
func (h *Home) RevisionBinding(rev store.Revision) (*policy.Binding, error) {
	return h.readRevision(rev, wholeBinding)
}

// RevisionSummary reads what a publish compares a candidate with: the
// profile, releases, routes and tools of a revision, tools with the Sum of
// their bodies instead of their objects and no declarations, so reading
// it does not grow with the size of the declarations.
func (h *Home) RevisionSummary(rev store.Revision) (*policy.Binding, error) {
	if !rev.Indexed {
		return h.readRevision(rev, wholeBinding) // one blob: read whole either way
	}
	b, err := h.readRevision(rev, headOnly)
	if err != nil {
		return nil, err
	}
	unreadable := func(err error) error {
		return kernel.Errorf(kernel.CodeInternal, "revision %s is unreadable", rev.ID).Wrap(err)
	}
	// Routes and tools in pieces, each in its own read: one read of them
	// all would keep most of the revision's records mapped at once.
	var c store.Cursor
	for !c.Done() {
		if err := h.Store.ViewRevision(rev.Number, func(ix *store.Index) (err error) {
			c, err = ix.RoutesFrom(c, summaryPiece, func(r store.Route) error {
				b.Routes = append(b.Routes, policy.Route{Words: r.Words, Kind: r.Kind, Command: r.Command})
				return nil
			})
			return err
		}); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(b.Routes, func(x, y policy.Route) int { return slices.Compare(x.Words, y.Words) })
	for i := range b.Endpoints {
		p := &b.Endpoints[i]
		for c = (store.Cursor{}); !c.Done(); {
			if err := h.Store.ViewRevision(rev.Number, func(ix *store.Index) (err error) {
				c, err = ix.ToolsFrom(p.Endpoint, c, summaryPiece, func(t store.Tool) error {
					sum, ok := ix.BodySum(t.Body)
					if !ok {
						return unreadable(fmt.Errorf("tool %s names body %q, which is no hash", t.Name, t.Body))
					}
					p.Tools = append(p.Tools, policy.Tool{Name: t.Name, Command: t.Command, Release: t.Release, Security: t.Security, Sum: sum})
					return nil
				})
				return err
			}); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

// summaryPiece is how many routes, or tools, RevisionSummary reads in one
// read of the store.
const summaryPiece = 8192

// depth is how much of a revision walkIndex reads.
type depth int

const (
	wholeBinding depth = iota // every record: what policy.WriteIndex wrote
	headOnly                  // profile, releases and endpoints, without routes or tools
)

// revisionHead reads what decides whether a candidate binds the same as
// rev (its profile, releases and endpoints) without its routes and tools,
// which only the report of a change needs.
func (h *Home) revisionHead(rev store.Revision) (*policy.Binding, error) {
	if !rev.Indexed {
		return h.RevisionSummary(rev)
	}
	return h.readRevision(rev, headOnly)
}

// readRevision reads rev to depth d. It is the one place release
// directories are resolved under this home, so a copied or moved home
// runs its own copies.
func (h *Home) readRevision(rev store.Revision, d depth) (*policy.Binding, error) {
	var b *policy.Binding
	var err error
	if rev.Indexed {
		err = h.Store.ViewRevision(rev.Number, func(ix *store.Index) (err error) {
			b, err = walkIndex(ix, d)
			return err
		})
	} else {
		b, err = decodeBinding(rev.ID, rev.Binding)
	}
	if err != nil {
		return nil, err
	}
	for i := range b.Releases {
		b.Releases[i].Dir = h.boundDir(b.Releases[i])
	}
	return b, nil
}

// walkIndex reads the records of an indexed revision back into a Binding,
// whole or its head (RevisionSummary reads the rest of a summary in
// pieces). Release directories are left as stored.
func walkIndex(ix *store.Index, d depth) (*policy.Binding, error) {
	unreadable := func(err error) error {
		return kernel.Errorf(kernel.CodeInternal, "revision %s is unreadable", ix.Revision()).Wrap(err)
	}
	b := &policy.Binding{Revision: ix.Revision(), Profile: ix.Profile(), Commands: []policy.BoundCommand{}, Endpoints: []policy.Projection{}}
	raw, err := ix.Releases()
	if err != nil {
		return nil, err
	}
	if b.Releases, err = policy.DecodeReleases(raw); err != nil {
		return nil, unreadable(err)
	}
	if d == headOnly {
		for _, ep := range ix.Endpoints() {
			m, err := policy.DecodeEndpointMeta(ep.Meta)
			if err != nil {
				return nil, unreadable(err)
			}
			b.Endpoints = append(b.Endpoints, policy.Projection{Endpoint: ep.Name, Namespace: m.Namespace, ToolNames: m.ToolNames, Subject: m.Subject,
				Template: m.Template, Tools: []policy.Tool{}, Unavailable: m.Unavailable, Withheld: m.Withheld})
		}
		return b, nil
	}
	err = ix.Routes(func(r store.Route) error {
		b.Routes = append(b.Routes, policy.Route{Words: r.Words, Kind: r.Kind, Command: r.Command})
		if r.Kind != store.RouteCommand {
			return nil
		}
		raw, err := ix.Decl(r.Decl)
		if err != nil {
			return err
		}
		bc, err := policy.DecodeCommand(raw)
		if err != nil {
			return unreadable(err)
		}
		bc.Development = false // an index detail, not part of the binding
		b.Commands = append(b.Commands, *bc)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(b.Routes, func(x, y policy.Route) int { return slices.Compare(x.Words, y.Words) })
	slices.SortFunc(b.Commands, func(x, y policy.BoundCommand) int { return strings.Compare(x.Declaration.ID, y.Declaration.ID) })
	for _, ep := range ix.Endpoints() {
		m, err := policy.DecodeEndpointMeta(ep.Meta)
		if err != nil {
			return nil, unreadable(err)
		}
		p := policy.Projection{Endpoint: ep.Name, Namespace: m.Namespace, ToolNames: m.ToolNames, Subject: m.Subject, Template: m.Template, Tools: []policy.Tool{},
			Unavailable: m.Unavailable, Withheld: m.Withheld}
		err = ix.Tools(ep.Name, func(t store.Tool) error {
			body, err := ix.Body(t)
			if err != nil {
				return err
			}
			p.Tools = append(p.Tools, policy.Tool{Name: t.Name, Command: t.Command, Release: t.Release, Security: t.Security,
				Wire: policy.AppendToolWire(nil, t.Name, body)})
			return nil
		})
		if err != nil {
			return nil, err
		}
		b.Endpoints = append(b.Endpoints, p)
	}
	return b, nil
}

// ViewActive calls fn with the active revision's index (false: nothing is
// published). A revision in the schema-1 layout gets its index first, once.
func (h *Home) ViewActive(fn func(ix *store.Index) error) (bool, error) {
	published, err := h.Store.ViewActive(fn)
	if !errors.Is(err, store.ErrNotIndexed) {
		return published, err
	}
	rev, err := h.Store.ActiveRevision()
	if err != nil {
		return false, err
	}
	if err := h.upgradeRevision(rev); err != nil {
		return false, err
	}
	return h.Store.ViewActive(fn)
}

// upgradeRevision gives a revision in the schema-1 layout its index: the
// same binding, written as records.
func (h *Home) upgradeRevision(rev store.Revision) error {
	b, err := h.readRevision(rev, wholeBinding)
	if err != nil {
		return err
	}
	return h.Store.AttachIndex(rev.Number, func(w *store.IndexWriter) error {
		w.IndexSearch(search.ObjectBag)
		return policy.WriteIndex(b, w)
	})
}

// decodeBinding reads a revision stored in the schema-1 layout (one blob).
func decodeBinding(id string, data []byte) (*policy.Binding, error) {
	var b policy.Binding
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, kernel.Errorf(kernel.CodeInternal, "revision %s is unreadable", id).Wrap(err)
	}
	return &b, nil
}

// DraftInput assembles the draft (profile + active releases) as a
// publication candidate for the revision id. Its Profile is nil when the
// owner never set one.
func (h *Home) DraftInput(revID string) (policy.Input, error) {
	in, err := h.DraftSource(revID)
	if err != nil {
		return in, err
	}
	return collect(in)
}

// DraftSource is DraftInput with the releases streamed (Input.Source), a
// batch at a time: what publish uses, so that it never holds every
// manifest at once.
func (h *Home) DraftSource(revID string) (policy.Input, error) {
	d, err := h.Store.Draft()
	if err != nil {
		return policy.Input{}, err
	}
	var prof *policy.Profile // nil: no profile set, Build uses the default
	if d.Profile != nil {
		if prof, err = policy.ParseProfile(d.Profile); err != nil {
			return policy.Input{}, err
		}
	}
	names := make([]string, 0, len(d.Active))
	for n := range d.Active {
		names = append(names, n)
	}
	sort.Strings(names)
	in := policy.Input{Revision: revID, Profile: prof, Count: len(names)}
	trusted, err := h.TrustedKeys()
	if err != nil {
		return policy.Input{}, err
	}
	in.Source = func(yield func(policy.ReleaseInput) error) error {
		return h.readAhead(len(names), func(lo, hi int) ([]store.Release, error) {
			return h.Store.ReleasesAt(names[lo:hi], d.Active)
		}, trusted, yield)
	}
	return in, nil
}

// releaseBatch is how many releases a publish reads, checks and decodes
// at once.
const releaseBatch = 16

// readAhead yields releases 0 to n-1 in order, releaseBatch at a time:
// fetch reads releases lo ≤ i < hi, which are checked and decoded
// (candidateReleases) on another goroutine while the caller builds the
// batch before them. The build runs on one core, so the reading and
// decoding take another instead of adding to it. At most two batches are
// decoded at once.
func (h *Home) readAhead(n int, fetch func(lo, hi int) ([]store.Release, error), trusted map[string]store.Key, yield func(policy.ReleaseInput) error) error {
	type batch struct {
		ris []policy.ReleaseInput
		err error // after ris: the first release that could not be decoded
	}
	ready := make(chan batch)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer close(ready)
		for lo := 0; lo < n; lo += releaseBatch {
			var b batch
			rels, err := fetch(lo, min(lo+releaseBatch, n))
			if err == nil {
				b.ris, b.err = h.candidateReleases(rels, trusted)
			} else {
				b.err = err
			}
			select {
			case ready <- b:
			case <-stop:
				return
			}
			if b.err != nil {
				return
			}
		}
	}()
	defer func() { close(stop); <-done }()
	for b := range ready {
		for i := range b.ris {
			ri := b.ris[i]
			b.ris[i] = policy.ReleaseInput{} // built: let its manifest go
			if err := yield(ri); err != nil {
				return err
			}
		}
		if b.err != nil {
			return b.err
		}
	}
	return nil
}

// collect turns a streamed candidate into one with every release in it.
func collect(in policy.Input) (policy.Input, error) {
	if in.Source == nil {
		return in, nil
	}
	src := in.Source
	in.Source = nil
	err := src(func(r policy.ReleaseInput) error {
		in.Releases = append(in.Releases, r)
		return nil
	})
	return in, err
}

// candidateReleases checks trust and the installed copies of rels and
// decodes their manifests, in order: on an error, the releases before the
// one it is about, and the error. Copies are checked and manifests
// decoded in parallel: a publish re-reads them all.
func (h *Home) candidateReleases(rels []store.Release, trusted map[string]store.Key) ([]policy.ReleaseInput, error) {
	for _, r := range rels {
		if err := CheckTrusted(r, trusted); err != nil {
			return nil, err
		}
	}
	errs := make([]error, len(rels))    // the copy's
	decErrs := make([]error, len(rels)) // the manifest's
	ris := make([]policy.ReleaseInput, len(rels))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(rels)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r := rels[i]
				if err := h.materialise(r.Digest, r.Development); err != nil {
					errs[i] = err
					continue
				}
				if err := extpkg.CheckInstalled(h.CopyDir(r.Digest, r.Development), r.Digest); err != nil {
					errs[i] = kernel.Errorf(kernel.CodeConflict, "the installed copy of %s@%s was changed or damaged", r.Name, r.Version).Wrap(err).
						WithHint(RepairHint(r.Development))
					continue
				}
				ris[i], decErrs[i] = h.releaseInput(r)
				rels[i] = store.Release{} // decoded: let the stored manifest go
			}
		}()
	}
	for i := range rels {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err // the first, in name order
		}
	}
	for i, err := range decErrs {
		if err != nil {
			return ris[:i], err // the releases before it are built first
		}
	}
	return ris, nil
}

// releaseInput prepares one checked release for publication.
func (h *Home) releaseInput(r store.Release) (policy.ReleaseInput, error) {
	dir := h.CopyDir(r.Digest, r.Development)
	m, err := kernel.DecodeInstalled(r.Manifest)
	if err != nil {
		return policy.ReleaseInput{}, kernel.Errorf(kernel.CodeInternal, "stored manifest of %s@%s is unreadable", r.Name, r.Version).Wrap(err)
	}
	return policy.ReleaseInput{
		BoundRelease: policy.BoundRelease{
			Name: r.Name, Version: r.Version, Digest: r.Digest, Dir: dir, APIVersion: m.APIVersion,
			Signer: r.Signer, AllowUnsigned: r.AllowUnsigned, Development: r.Development,
			Settings: m.Settings,
		},
		Manifest: m,
	}, nil
}

// BindingSource rebuilds the candidate an older revision was made from,
// for rollback, with the releases streamed.
func (h *Home) BindingSource(b *policy.Binding, revID string) (policy.Input, error) {
	prof, err := policy.ParseProfile(b.Profile)
	if err != nil {
		return policy.Input{}, err
	}
	in := policy.Input{Revision: revID, Profile: prof}
	trusted, err := h.TrustedKeys()
	if err != nil {
		return policy.Input{}, err
	}
	bound := slices.Clone(b.Releases)
	slices.SortFunc(bound, func(x, y policy.BoundRelease) int { return strings.Compare(x.Name, y.Name) })
	in.Count = len(bound)
	in.Source = func(yield func(policy.ReleaseInput) error) error {
		return h.readAhead(len(bound), func(lo, hi int) ([]store.Release, error) {
			var rels []store.Release
			for _, br := range bound[lo:hi] {
				r, err := h.Store.Release(br.Name, br.Version)
				if err != nil || r.Digest != br.Digest || r.Development != br.Development {
					hint := "reinstall that exact package to roll back to this revision"
					if br.Development {
						hint = "a later 'rukh dev' replaced that development copy; run 'rukh dev PATH' on that exact content to bring it back"
					}
					return nil, kernel.Errorf(kernel.CodeNotFound, "%s@%s (%s) is no longer installed", br.Name, br.Version, br.Digest).
						WithHint(hint)
				}
				rels = append(rels, r)
			}
			return rels, nil
		}, trusted, yield)
	}
	return in, nil
}
