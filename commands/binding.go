package commands

import (
	"fmt"
	"path/filepath"
	"sort"

	"github.com/go-json-experiment/json"
	"github.com/rukh-dev/rukh/extpkg"
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
	b, err := a.decodeBinding(rev)
	return b, rev, err
}

// decodeBinding reads a stored revision. Release directories are resolved
// under this home, so a copied or moved home runs its own copies.
func (a *app) decodeBinding(rev store.Revision) (*policy.Binding, error) {
	var b policy.Binding
	if err := json.Unmarshal(rev.Binding, &b); err != nil {
		return nil, kernel.Errorf(kernel.CodeInternal, "revision %s is unreadable", rev.ID).Wrap(err)
	}
	for i := range b.Releases {
		b.Releases[i].Dir = a.releaseDir(b.Releases[i].Digest)
	}
	return &b, nil
}

func (a *app) releaseDir(digest string) string {
	name, err := extpkg.ReleaseDirName(digest)
	if err != nil {
		return ""
	}
	return filepath.Join(a.store.ReleasesDir(), name)
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
	trusted, err := a.trustedKeys()
	if err != nil {
		return policy.Input{}, err
	}
	for _, n := range names {
		r, err := a.store.Release(n, d.Active[n])
		if err != nil {
			return policy.Input{}, err
		}
		ri, err := a.releaseInput(r, trusted)
		if err != nil {
			return policy.Input{}, err
		}
		in.Releases = append(in.Releases, ri)
	}
	return in, nil
}

// releaseInput prepares one release for publication. A release is only
// published while it is still trusted and its installed copy is intact.
func (a *app) releaseInput(r store.Release, trusted map[string]store.Key) (policy.ReleaseInput, error) {
	if err := checkTrusted(r, trusted); err != nil {
		return policy.ReleaseInput{}, err
	}
	dir := a.releaseDir(r.Digest)
	if err := extpkg.CheckInstalled(dir, r.Digest); err != nil {
		return policy.ReleaseInput{}, kernel.Errorf(kernel.CodeConflict, "the installed copy of %s@%s was changed or damaged", r.Name, r.Version).Wrap(err).
			WithHint("install the original package again ('rukh install PATH') to repair it")
	}
	m, err := kernel.ParseManifest(r.Manifest)
	if err != nil {
		return policy.ReleaseInput{}, kernel.Errorf(kernel.CodeInternal, "stored manifest of %s@%s no longer parses", r.Name, r.Version).Wrap(err)
	}
	return policy.ReleaseInput{
		BoundRelease: policy.BoundRelease{
			Name: r.Name, Version: r.Version, Digest: r.Digest, Dir: dir, APIVersion: m.APIVersion,
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
	trusted, err := a.trustedKeys()
	if err != nil {
		return policy.Input{}, err
	}
	for _, br := range b.Releases {
		r, err := a.store.Release(br.Name, br.Version)
		if err != nil || r.Digest != br.Digest {
			return policy.Input{}, kernel.Errorf(kernel.CodeNotFound, "%s@%s (%s) is no longer installed", br.Name, br.Version, br.Digest).
				WithHint("reinstall that exact package to roll back to this revision")
		}
		ri, err := a.releaseInput(r, trusted)
		if err != nil {
			return policy.Input{}, err
		}
		in.Releases = append(in.Releases, ri)
	}
	return in, nil
}

// trustedKeys maps key ids to the currently trusted keys.
func (a *app) trustedKeys() (map[string]store.Key, error) {
	keys, err := a.store.Keys()
	if err != nil {
		return nil, err
	}
	m := make(map[string]store.Key, len(keys))
	for _, k := range keys {
		m[k.KeyID] = k
	}
	return m, nil
}

// checkTrusted refuses a signed release whose key is no longer trusted:
// removing a key revokes what it signed at the next publish.
func checkTrusted(r store.Release, trusted map[string]store.Key) error {
	if r.Signer == "" {
		return nil // installed with --allow-unsigned, recorded on the release
	}
	if _, ok := trusted[r.KeyID]; ok {
		return nil
	}
	return kernel.Errorf(kernel.CodeDenied, "%s@%s is signed by key %s (%s), which is no longer trusted", r.Name, r.Version, r.Signer, r.KeyID).
		WithHint("trust the publisher's key again with 'rukh trust add', or 'rukh deactivate " + r.Name + "'")
}

// currentTrust describes a release's trust basis as of now.
func currentTrust(r store.Release, trusted map[string]store.Key) string {
	if r.Signer != "" {
		if _, ok := trusted[r.KeyID]; !ok {
			return fmt.Sprintf("signed by key %s (%s), no longer trusted", r.Signer, r.KeyID)
		}
	}
	return trustBasis(r.Signer, r.AllowUnsigned)
}
