package home

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rukh-dev/rukh/extpkg"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
)

// ResolveRelease finds NAME@VERSION, or the highest installed version of
// NAME.
func (h *Home) ResolveRelease(ref string) (store.Release, error) {
	name, ver, hasVer := strings.Cut(ref, "@")
	if hasVer {
		return h.Store.Release(name, ver)
	}
	all, err := h.Store.ReleasesOf(name)
	if err != nil {
		return store.Release{}, err
	}
	// The development release is chosen only by name: NAME@dev.
	rels := slices.DeleteFunc(all, func(r store.Release) bool { return r.Development })
	if len(rels) == 0 {
		return store.Release{}, kernel.Errorf(kernel.CodeNotFound, "no release of %s is installed", name).
			WithHint("install it first with 'rukh install PATH'")
	}
	// Sorted by version: the highest release wins, but a pre-release only
	// when nothing else is installed (as with Go modules' "latest").
	for i := len(rels) - 1; i >= 0; i-- {
		if !strings.Contains(strings.SplitN(rels[i].Version, "+", 2)[0], "-") {
			return rels[i], nil
		}
	}
	return rels[len(rels)-1], nil
}

// Activate makes the release ref names the draft's active release of its
// name; it returns the release and the version it replaced ("" for none).
func (h *Home) Activate(ref string) (r store.Release, prev string, err error) {
	r, err = h.ResolveRelease(ref)
	if err != nil {
		return store.Release{}, "", err
	}
	err = h.Store.UpdateDraft(func(d *store.Draft) error {
		if d.Active == nil {
			d.Active = map[string]string{}
		}
		prev = d.Active[r.Name]
		d.Active[r.Name] = r.Version
		return nil
	})
	if err != nil {
		return store.Release{}, "", err
	}
	return r, prev, nil
}

// Deactivate removes name from the draft.
func (h *Home) Deactivate(name string) error {
	return h.Store.UpdateDraft(func(d *store.Draft) error {
		if _, ok := d.Active[name]; !ok {
			return kernel.Errorf(kernel.CodeNotFound, "%s is not active in the draft", name).
				WithHint("'rukh status' shows the draft")
		}
		delete(d.Active, name)
		return nil
	})
}

// Uninstall removes the release name@version and its copy, once no
// running call uses it; neither the active revision nor the draft may use
// it.
func (h *Home) Uninstall(name, version string) (store.Release, error) {
	r, err := h.Store.Release(name, version)
	if err != nil {
		return store.Release{}, err
	}
	err = h.RemoveRelease(r, func() error {
		if err := h.Store.DeleteRelease(name, version); err != nil {
			var ke *kernel.Error
			if r.Development && errors.As(err, &ke) && ke.Code == kernel.CodeConflict {
				return ke.WithHint(fmt.Sprintf("take it out of the draft and publish ('rukh dev --stop %s', or 'rukh publish' when the draft already activates another release), before removing it", name))
			}
			return err
		}
		return extpkg.Remove(h.CopiesDir(r.Development), r.Digest)
	})
	if err != nil {
		return store.Release{}, err
	}
	return r, nil
}

// RevisionsBinding lists the revisions that bind r: rolling back to one
// needs r installed again. It is best effort: nil when they cannot be
// read.
func (h *Home) RevisionsBinding(r store.Release) []string {
	var ids []string
	if revs, err := h.Store.Revisions(); err == nil {
		for _, rev := range revs {
			if slices.Contains(rev.Releases, r.Ref()) {
				ids = append(ids, rev.ID)
			}
		}
	}
	return ids
}

// SetDraftProfile replaces the draft profile with p, stored in its
// canonical form, which it returns.
func (h *Home) SetDraftProfile(p *policy.Profile) ([]byte, error) {
	canon := p.Canonical()
	if err := h.Store.UpdateDraft(func(d *store.Draft) error {
		d.Profile = canon
		return nil
	}); err != nil {
		return nil, err
	}
	return canon, nil
}
