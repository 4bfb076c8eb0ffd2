package home

import (
	"strings"
	"time"

	"github.com/rukh-dev/rukh/extpkg"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
)

// KeyUse is a release signed by a key that the active revision or the
// draft uses.
type KeyUse struct {
	Name, Release string // package name, name@version
	Where         string // "published in r3", "activated in the draft", or both
}

// AddKey trusts the public key text under name.
func (h *Home) AddKey(name, text string) (store.Key, error) {
	pub, err := extpkg.ParsePublicKey(text)
	if err != nil {
		return store.Key{}, err
	}
	k := store.Key{Name: name, Public: text, KeyID: extpkg.KeyID(pub), AddedAt: time.Now().UTC()}
	if err := h.Store.PutKey(k); err != nil {
		return store.Key{}, err
	}
	return k, nil
}

// RemoveKey stops trusting the key name. It refuses while the active
// revision or the draft uses a release the key signed, unless force; it
// returns those releases, whose calls are refused from then on.
func (h *Home) RemoveKey(name string, force bool) ([]KeyUse, error) {
	k, ok, err := h.Store.Key(name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, h.Store.DeleteKey(name) // its not-found error
	}
	uses, err := h.KeyUses(k)
	if err != nil {
		return nil, err
	}
	if len(uses) > 0 && !force {
		return nil, keyInUse(k, uses)
	}
	if err := h.Store.DeleteKey(name); err != nil {
		return nil, err
	}
	return uses, nil
}

// KeyUses lists the releases signed by k that the active revision binds or
// the draft activates, by name.
func (h *Home) KeyUses(k store.Key) ([]KeyUse, error) {
	rels, err := h.Store.Releases()
	if err != nil {
		return nil, err
	}
	published := map[string]bool{}
	revID := ""
	if rev, err := h.Store.ActiveRevision(); err == nil {
		revID = rev.ID
		for _, ref := range rev.Releases {
			published[ref] = true
		}
	} else if kernel.ErrorCode(err) != kernel.CodeNotFound {
		return nil, err
	}
	d, err := h.Store.Draft()
	if err != nil {
		return nil, err
	}
	var uses []KeyUse
	for _, r := range rels {
		if r.Signer == "" || r.KeyID != k.KeyID {
			continue
		}
		var where []string
		if published[r.Ref()] {
			where = append(where, "published in the active revision "+revID)
		}
		if v, ok := d.Active[r.Name]; ok && v == r.Version {
			where = append(where, "activated in the draft")
		}
		if len(where) > 0 {
			uses = append(uses, KeyUse{Name: r.Name, Release: r.Name + "@" + r.Version, Where: strings.Join(where, ", ")})
		}
	}
	return uses, nil
}

func keyInUse(k store.Key, uses []KeyUse) error {
	var names []string
	for _, u := range uses {
		names = append(names, u.Release+" ("+u.Where+")")
	}
	return kernel.Errorf(kernel.CodeConflict, "key %s (%s) signed releases in use: %s", k.Name, k.KeyID, strings.Join(names, "; ")).
		WithHint(RepublishHint(uses) + ", then remove the key\n" +
			"or 'rukh trust remove " + k.Name + " --force': those releases' tools then refuse every call until that publish")
}

// RepublishHint says how to publish without the releases in uses.
func RepublishHint(uses []KeyUse) string {
	var cmds []string
	seen := map[string]bool{}
	for _, u := range uses {
		if !seen[u.Name] {
			seen[u.Name] = true
			cmds = append(cmds, "rukh deactivate "+u.Name)
		}
	}
	return strings.Join(cmds, ", ") + ", then rukh publish"
}

// UntrustedActive lists the releases the active revision binds whose
// signing key is no longer trusted: their calls are refused.
func (h *Home) UntrustedActive() ([]store.Release, error) {
	rev, err := h.Store.ActiveRevision()
	if kernel.ErrorCode(err) == kernel.CodeNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rels, err := h.Store.Releases()
	if err != nil {
		return nil, err
	}
	trusted, err := h.TrustedKeys()
	if err != nil {
		return nil, err
	}
	bound := map[string]bool{}
	for _, ref := range rev.Releases {
		bound[ref] = true
	}
	var out []store.Release
	for _, r := range rels {
		if bound[r.Ref()] && CheckTrusted(r, trusted) != nil {
			out = append(out, r)
		}
	}
	return out, nil
}
