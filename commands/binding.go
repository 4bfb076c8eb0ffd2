package commands

import (
	"sort"

	"github.com/go-json-experiment/json"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
)

// activeBinding decodes the active revision; a nil binding means nothing
// has been published yet.
func (a *app) activeBinding() (*policy.Binding, store.Revision, error) {
	rev, err := a.store.ActiveRevision()
	if err != nil {
		if kernel.ErrorCode(err) == kernel.CodeNotFound {
			return nil, store.Revision{}, nil
		}
		return nil, store.Revision{}, err
	}
	b, err := decodeBinding(rev)
	return b, rev, err
}

func decodeBinding(rev store.Revision) (*policy.Binding, error) {
	var b policy.Binding
	if err := json.Unmarshal(rev.Binding, &b); err != nil {
		return nil, kernel.Errorf(kernel.CodeInternal, "revision %s is unreadable", rev.ID).Wrap(err)
	}
	return &b, nil
}

// draftInput assembles the draft (profile + active releases) as a
// publication candidate for the revision id.
func (a *app) draftInput(revID string) (policy.Input, error) {
	d, err := a.store.Draft()
	if err != nil {
		return policy.Input{}, err
	}
	prof := policy.DefaultProfile()
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
	in := policy.Input{Revision: revID, Profile: prof}
	for _, n := range names {
		r, err := a.store.Release(n, d.Active[n])
		if err != nil {
			return policy.Input{}, err
		}
		ri, err := releaseInput(r)
		if err != nil {
			return policy.Input{}, err
		}
		in.Releases = append(in.Releases, ri)
	}
	return in, nil
}

func releaseInput(r store.Release) (policy.ReleaseInput, error) {
	m, err := kernel.ParseManifest(r.Manifest)
	if err != nil {
		return policy.ReleaseInput{}, kernel.Errorf(kernel.CodeInternal, "stored manifest of %s@%s no longer parses", r.Name, r.Version).Wrap(err)
	}
	return policy.ReleaseInput{
		BoundRelease: policy.BoundRelease{
			Name: r.Name, Version: r.Version, Digest: r.Digest, Dir: r.Dir, APIVersion: m.APIVersion,
			Signer: r.Signer, AllowUnsigned: r.AllowUnsigned,
		},
		Manifest: m,
	}, nil
}

// bindingInput rebuilds the candidate an older revision was made from, for rollback.
func (a *app) bindingInput(b *policy.Binding, revID string) (policy.Input, error) {
	prof, err := policy.ParseProfile(b.Profile)
	if err != nil {
		return policy.Input{}, err
	}
	in := policy.Input{Revision: revID, Profile: prof}
	for _, br := range b.Releases {
		r, err := a.store.Release(br.Name, br.Version)
		if err != nil || r.Digest != br.Digest {
			return policy.Input{}, kernel.Errorf(kernel.CodeNotFound, "%s@%s (%s) is no longer installed", br.Name, br.Version, br.Digest).
				WithHint("reinstall that exact package to roll back to this revision")
		}
		ri, err := releaseInput(r)
		if err != nil {
			return policy.Input{}, err
		}
		in.Releases = append(in.Releases, ri)
	}
	return in, nil
}
