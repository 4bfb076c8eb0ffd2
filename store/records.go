package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
	"golang.org/x/mod/semver"
)

// Release is one installed, immutable, content-addressed package copy.
type Release struct {
	Name, Version, Digest string
	Manifest              []byte // the raw manifest JSON, as installed
	Dir                   string // the installed copy, under ReleasesDir
	Signer                string // trusted key name; "" if unsigned
	KeyID                 string
	AllowUnsigned         bool
	// Development marks a package author's working copy (`rukh dev`):
	// never signed, recorded under DevVersion, at most one per name, and
	// replaced in place by the next one.
	Development bool
	InstalledAt time.Time
}

// DevVersion is the version a development release is recorded under. It
// is not a semantic version, so no installed release can ever have it.
const DevVersion = "dev"

// devRefPrefix marks a development release in the digest index and in a
// revision's release list, so a development copy and an installed release
// of the same content stay two entries.
const devRefPrefix = "dev:"

// Ref is how the digest index and revisions name r: its digest, prefixed
// "dev:" for a development release.
func (r Release) Ref() string { return ReleaseRef(r.Digest, r.Development) }

// ReleaseRef is Ref for a digest and a development flag.
func ReleaseRef(digest string, development bool) string {
	if development {
		return devRefPrefix + digest
	}
	return digest
}

// IsDevRef reports whether a revision's release entry is a development release.
func IsDevRef(ref string) bool { return strings.HasPrefix(ref, devRefPrefix) }

// Key is a trusted publisher key.
type Key struct {
	Name    string    `json:"name"`
	Public  string    `json:"public"` // "rukh-ed25519-pub:..." text
	KeyID   string    `json:"keyId"`
	AddedAt time.Time `json:"addedAt"`
}

// Draft is the owner's unpublished state: activations and the profile.
type Draft struct {
	Active  map[string]string // package name → version
	Profile []byte            // nil means the default profile
	Changed time.Time
}

// The on-disk records are separate from the API structs so the file layout
// changes only with SchemaVersion.
type releaseRec struct {
	Name          string    `json:"name"`
	Version       string    `json:"version"`
	Digest        string    `json:"digest"`
	Manifest      []byte    `json:"manifest,omitempty"`
	Dir           string    `json:"dir,omitempty"`
	Signer        string    `json:"signer,omitempty"`
	KeyID         string    `json:"keyId,omitempty"`
	AllowUnsigned bool      `json:"allowUnsigned,omitempty"`
	Development   bool      `json:"development,omitempty"` // absent in homes older than `rukh dev`
	InstalledAt   time.Time `json:"installedAt"`
}

type keyRec struct {
	Name    string    `json:"name"`
	Public  string    `json:"public"`
	KeyID   string    `json:"keyId,omitempty"`
	AddedAt time.Time `json:"addedAt"`
}

type draftRec struct {
	Active  map[string]string `json:"active,omitempty"`
	Profile []byte            `json:"profile,omitempty"`
	Changed time.Time         `json:"changed"`
}

func releaseKey(name, version string) []byte { return []byte(name + "@" + version) }

func now() time.Time { return time.Now().UTC().Round(0) }

func (s *Store) decode(what string, raw []byte, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return s.internal("cannot decode "+what, err)
	}
	return nil
}

// decodeRelease reads a release record, as lenient as decode but in one
// pass: a record carries its manifest in base64, and a publish reads every
// release (encoding/json was too slow for a large manifest:
// docs/performance.md).
func (s *Store) decodeRelease(what string, raw []byte, rec any) error {
	if err := jsonv2.Unmarshal(raw, rec, jsonv2.MatchCaseInsensitiveNames(true),
		jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)); err != nil {
		return s.internal("cannot decode "+what, err)
	}
	return nil
}

func encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Only plain structs of strings, bytes, maps and times reach here.
		panic("store: encode: " + err.Error())
	}
	return b
}

func fromReleaseRec(r releaseRec) Release {
	return Release{Name: r.Name, Version: r.Version, Digest: r.Digest, Manifest: r.Manifest, Dir: r.Dir,
		Signer: r.Signer, KeyID: r.KeyID, AllowUnsigned: r.AllowUnsigned, Development: r.Development, InstalledAt: r.InstalledAt}
}

func toReleaseRec(r Release) releaseRec {
	return releaseRec{Name: r.Name, Version: r.Version, Digest: r.Digest, Manifest: r.Manifest, Dir: r.Dir,
		Signer: r.Signer, KeyID: r.KeyID, AllowUnsigned: r.AllowUnsigned, Development: r.Development, InstalledAt: r.InstalledAt}
}

func notInstalled(name, version string) error {
	return kernel.Errorf(kernel.CodeNotFound, "release %s@%s is not installed", name, version).
		WithHint("rukh list shows the installed releases")
}

// PutRelease records r. The same name@version with the same digest is
// already there (existed, nothing changes); with another digest it is a
// conflict, because a release is immutable.
func (s *Store) PutRelease(r Release) (existed bool, err error) {
	if r.Name == "" || r.Version == "" || r.Digest == "" || strings.Contains(r.Name, "@") {
		return false, kernel.Errorf(kernel.CodeInvalid, "a release needs a name (without @), a version and a digest")
	}
	if r.Development || r.Version == DevVersion {
		return false, kernel.Errorf(kernel.CodeInvalid, "a development release is recorded with PutDevRelease")
	}
	err = s.writeRelease(r, "release", func(_ bucket, old Release) (bool, error) {
		if old.Digest != r.Digest {
			return true, kernel.Errorf(kernel.CodeConflict, "release %s is already installed with digest %s, not %s", releaseKey(r.Name, r.Version), old.Digest, r.Digest).
				WithHint("a release is immutable: publish the change under a new version")
		}
		existed = true
		return true, nil
	})
	return existed, err
}

// PutDevRelease records r as the development release of its name
// (name@DevVersion), replacing the previous one, if any, in the same
// transaction; it returns the one it replaced. Unlike a release, a
// development release is mutable: that is its point. The draft and the
// active revision may keep naming it; the caller keeps a replaced copy on
// disk while the active revision binds it.
func (s *Store) PutDevRelease(r Release) (prev *Release, err error) {
	if r.Name == "" || r.Digest == "" || strings.Contains(r.Name, "@") {
		return nil, kernel.Errorf(kernel.CodeInvalid, "a development release needs a name (without @) and a digest")
	}
	if r.Signer != "" || r.KeyID != "" {
		return nil, kernel.Errorf(kernel.CodeInvalid, "a development release is never signed")
	}
	r.Version, r.Development, r.AllowUnsigned = DevVersion, true, false
	err = s.writeRelease(r, "development release", func(digs bucket, old Release) (bool, error) {
		prev = &old
		if old.Digest == r.Digest {
			return true, nil
		}
		return false, digs.Delete([]byte(old.Ref()))
	})
	if err != nil {
		return nil, err
	}
	return prev, nil
}

// writeRelease records r under name@version and its digest key (r.Ref())
// in one transaction. When a record is already there, onOld decides:
// stop (nothing more is written), or go on and replace it, having removed
// what must go with it. what names the kind of release in a conflict.
func (s *Store) writeRelease(r Release, what string, onOld func(digs bucket, old Release) (stop bool, err error)) error {
	if r.InstalledAt.IsZero() {
		r.InstalledAt = now()
	}
	key := releaseKey(r.Name, r.Version)
	return s.update(func(tx txn) error {
		rels, digs := tx.Bucket(bucketReleases), tx.Bucket(bucketDigests)
		if raw := rels.Get(key); raw != nil {
			var old releaseRec
			if err := s.decode("release "+string(key), raw, &old); err != nil {
				return err
			}
			if stop, err := onOld(digs, fromReleaseRec(old)); stop || err != nil {
				return err
			}
		}
		if other := digs.Get([]byte(r.Ref())); other != nil {
			return kernel.Errorf(kernel.CodeConflict, "digest %s is already recorded for %s %s", r.Digest, what, other)
		}
		if err := rels.Put(key, encode(toReleaseRec(r))); err != nil {
			return err
		}
		return digs.Put([]byte(r.Ref()), key)
	})
}

// Release returns name@version.
func (s *Store) Release(name, version string) (Release, error) {
	var out Release
	found := false
	_, err := s.view(func(tx txn) error {
		raw := tx.Bucket(bucketReleases).Get(releaseKey(name, version))
		if raw == nil {
			return nil
		}
		var rec releaseRec
		if err := s.decodeRelease("release", raw, &rec); err != nil {
			return err
		}
		out, found = fromReleaseRec(rec), true
		return nil
	})
	if err == nil && !found {
		err = notInstalled(name, version)
	}
	return out, err
}

// ReleaseByDigest returns the installed (not development) release with this digest.
func (s *Store) ReleaseByDigest(digest string) (Release, error) {
	var out Release
	found := false
	_, err := s.view(func(tx txn) error {
		key := tx.Bucket(bucketDigests).Get([]byte(digest))
		if key == nil {
			return nil
		}
		raw := tx.Bucket(bucketReleases).Get(key)
		if raw == nil {
			return s.internal(fmt.Sprintf("digest %s points to missing release %s", digest, key), nil)
		}
		var rec releaseRec
		if err := s.decodeRelease("release", raw, &rec); err != nil {
			return err
		}
		out, found = fromReleaseRec(rec), true
		return nil
	})
	if err == nil && !found {
		err = kernel.Errorf(kernel.CodeNotFound, "no installed release has digest %s", digest)
	}
	return out, err
}

// Releases lists every release, by name, then by semantic version.
func (s *Store) Releases() ([]Release, error) { return s.releases("") }

// ReleasesOf lists the installed versions of one package name, oldest
// first, reading only that name's records.
func (s *Store) ReleasesOf(name string) ([]Release, error) {
	if name == "" {
		return nil, nil
	}
	return s.releases(name)
}

// releases reads the records whose key starts with name+"@" (all when name
// is empty): keys are name@version and a name never contains "@".
func (s *Store) releases(name string) ([]Release, error) {
	var out []Release
	prefix := []byte(name)
	if name != "" {
		prefix = append(prefix, '@')
	}
	_, err := s.view(func(tx txn) error {
		c := tx.Bucket(bucketReleases).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			var rec releaseRec
			if err := s.decode("release "+string(k), v, &rec); err != nil {
				return err
			}
			out = append(out, fromReleaseRec(rec))
		}
		return nil
	})
	slices.SortFunc(out, func(a, b Release) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return compareVersions(a.Version, b.Version)
	})
	return out, err
}

// compareVersions orders semantic versions ("1.10.0" after "1.9.0"); text
// that is not one sorts after every valid version, by bytes.
func compareVersions(a, b string) int {
	va, vb := "v"+strings.TrimPrefix(a, "v"), "v"+strings.TrimPrefix(b, "v")
	oka, okb := semver.IsValid(va), semver.IsValid(vb)
	switch {
	case oka && okb:
		if c := semver.Compare(va, vb); c != 0 {
			return c
		}
	case oka:
		return -1
	case okb:
		return 1
	}
	return strings.Compare(a, b)
}

// DeleteRelease forgets name@version. It refuses while the active revision
// binds the release or the draft activates it, since either would then point
// at nothing. Older revisions may still name it: rolling back to one of them
// fails until the release is installed again.
func (s *Store) DeleteRelease(name, version string) error {
	key := releaseKey(name, version)
	return s.update(func(tx txn) error {
		raw := tx.Bucket(bucketReleases).Get(key)
		if raw == nil {
			return notInstalled(name, version)
		}
		var rec releaseRec
		if err := s.decode("release "+string(key), raw, &rec); err != nil {
			return err
		}
		var uses, hints []string
		if active, ok := btoi(tx.Bucket(bucketMeta).Get(keyActive)); ok && active != 0 {
			rev, err := s.loadRevision(tx, active, false)
			if err != nil {
				return err
			}
			if slices.Contains(rev.Releases, fromReleaseRec(rec).Ref()) {
				uses = append(uses, "bound by the active revision "+rev.ID)
				hints = append(hints, "publish a revision without it")
			}
		}
		d, err := s.loadDraft(tx)
		if err != nil {
			return err
		}
		if v, ok := d.Active[name]; ok && v == version {
			uses = append(uses, "activated in the draft")
			hints = slices.Insert(hints, 0, "rukh deactivate "+name)
		}
		if len(uses) > 0 {
			return kernel.Errorf(kernel.CodeConflict, "release %s is still in use: %s", key, strings.Join(uses, " and ")).
				WithHint(strings.Join(hints, ", then ") + ", before removing it")
		}
		if err := tx.Bucket(bucketReleases).Delete(key); err != nil {
			return err
		}
		ref := fromReleaseRec(rec).Ref()
		if err := s.forgetUntrusted(tx, ref); err != nil {
			return err
		}
		return tx.Bucket(bucketDigests).Delete([]byte(ref))
	})
}

// PutKey trusts k. Names are unique, and one public key has one name.
// Adding exactly the same name and key again changes nothing.
func (s *Store) PutKey(k Key) error {
	if k.Name == "" || k.Public == "" {
		return kernel.Errorf(kernel.CodeInvalid, "a trusted key needs a name and a public key")
	}
	if k.AddedAt.IsZero() {
		k.AddedAt = now()
	}
	return s.update(func(tx txn) error {
		b := tx.Bucket(bucketKeys)
		identical := false
		err := b.ForEach(func(name, v []byte) error {
			var rec keyRec
			if err := s.decode("key "+string(name), v, &rec); err != nil {
				return err
			}
			samePublic := rec.Public == k.Public || (k.KeyID != "" && rec.KeyID == k.KeyID)
			switch {
			case rec.Name == k.Name && rec.Public == k.Public:
				identical = true
			case rec.Name == k.Name:
				return kernel.Errorf(kernel.CodeConflict, "key name %q already trusts another key (%s)", k.Name, rec.KeyID).
					WithHint("rukh trust remove " + k.Name + " first, or choose another name")
			case samePublic:
				return kernel.Errorf(kernel.CodeConflict, "this key is already trusted as %q", rec.Name)
			}
			return nil
		})
		if err != nil || identical {
			return err
		}
		if err := b.Put([]byte(k.Name), encode(keyRec(k))); err != nil {
			return err
		}
		return s.refreshUntrusted(tx)
	})
}

// Keys lists the trusted keys by name.
func (s *Store) Keys() ([]Key, error) {
	var out []Key
	_, err := s.view(func(tx txn) error {
		return tx.Bucket(bucketKeys).ForEach(func(k, v []byte) error {
			var rec keyRec
			if err := s.decode("key "+string(k), v, &rec); err != nil {
				return err
			}
			out = append(out, Key(rec))
			return nil
		})
	})
	return out, err
}

// DeleteKey stops trusting the named key. Releases it signed stay
// installed, listed as untrusted (UntrustedReleases): none of them runs.
func (s *Store) DeleteKey(name string) error {
	return s.update(func(tx txn) error {
		b := tx.Bucket(bucketKeys)
		if b.Get([]byte(name)) == nil {
			return kernel.Errorf(kernel.CodeNotFound, "no trusted key is named %q", name)
		}
		if err := b.Delete([]byte(name)); err != nil {
			return err
		}
		return s.refreshUntrusted(tx)
	})
}

// Key returns the trusted key named name.
func (s *Store) Key(name string) (Key, bool, error) {
	var k Key
	found := false
	_, err := s.view(func(tx txn) error {
		raw := tx.Bucket(bucketKeys).Get([]byte(name))
		if raw == nil {
			return nil
		}
		var rec keyRec
		if err := s.decode("key "+name, raw, &rec); err != nil {
			return err
		}
		k, found = Key(rec), true
		return nil
	})
	return k, found, err
}

// refreshUntrusted lists, in tx, the refs of the installed releases signed
// by a key that is no longer trusted. It runs with every trust change and
// every publish; installs need a trusted key, so they never add one.
func (s *Store) refreshUntrusted(tx txn) error {
	trusted := map[string]bool{}
	if err := tx.Bucket(bucketKeys).ForEach(func(name, v []byte) error {
		var rec keyRec
		if err := s.decode("key "+string(name), v, &rec); err != nil {
			return err
		}
		trusted[rec.KeyID] = true
		return nil
	}); err != nil {
		return err
	}
	refs := []string{} // kept as an empty list, not removed: the list is current
	if err := tx.Bucket(bucketReleases).ForEach(func(k, v []byte) error {
		var rec releaseSigner // not the manifest: it is most of every record
		if err := s.decodeRelease("release "+string(k), v, &rec); err != nil {
			return err
		}
		if rec.Signer != "" && !trusted[rec.KeyID] {
			refs = append(refs, ReleaseRef(rec.Digest, rec.Development))
		}
		return nil
	}); err != nil {
		return err
	}
	slices.Sort(refs)
	return tx.Bucket(bucketMeta).Put(keyUntrusted, encode(refs))
}

// releaseSigner is what refreshUntrusted reads of a release record.
type releaseSigner struct {
	Digest      string `json:"digest"`
	Signer      string `json:"signer,omitempty"`
	KeyID       string `json:"keyId,omitempty"`
	Development bool   `json:"development,omitempty"`
}

// listUntrusted makes the list of untrusted releases in tx when the store
// has none: a home written before the list existed (or by a rukh that
// removed an empty one). Once there, trust changes and removals keep it,
// so a publish does not read every release record again for it.
func (s *Store) listUntrusted(tx txn) error {
	if tx.Bucket(bucketMeta).Get(keyUntrusted) != nil {
		return nil
	}
	return s.refreshUntrusted(tx)
}

// forgetUntrusted drops ref from the list of untrusted releases, in tx:
// its release is being removed.
func (s *Store) forgetUntrusted(tx txn, ref string) error {
	m, err := s.untrusted(tx)
	if err != nil || !m[ref] {
		return err
	}
	delete(m, ref)
	refs := slices.Sorted(maps.Keys(m))
	if refs == nil {
		refs = []string{}
	}
	return tx.Bucket(bucketMeta).Put(keyUntrusted, encode(refs))
}

// UntrustedReleases returns the refs (Release.Ref) of the installed
// releases signed by a key no longer trusted: one read of one record.
func (s *Store) UntrustedReleases() (map[string]bool, error) {
	var out map[string]bool
	_, err := s.view(func(tx txn) error {
		var err error
		out, err = s.untrusted(tx)
		return err
	})
	return out, err
}

// UntrustedReleases is Store.UntrustedReleases in the index's read.
func (ix *Index) UntrustedReleases() (map[string]bool, error) {
	ix.s.reads.n.Add(1)
	return ix.s.untrusted(ix.tx)
}

func (s *Store) untrusted(tx txn) (map[string]bool, error) {
	raw := tx.Bucket(bucketMeta).Get(keyUntrusted)
	if raw == nil {
		return nil, nil
	}
	var refs []string
	if err := s.decode("the untrusted releases", raw, &refs); err != nil {
		return nil, err
	}
	m := make(map[string]bool, len(refs))
	for _, r := range refs {
		m[r] = true
	}
	return m, nil
}

func (s *Store) loadDraft(tx txn) (Draft, error) {
	d := Draft{Active: map[string]string{}}
	raw := tx.Bucket(bucketMeta).Get(keyDraft)
	if raw == nil {
		return d, nil
	}
	var rec draftRec
	if err := s.decode("draft", raw, &rec); err != nil {
		return d, err
	}
	maps.Copy(d.Active, rec.Active)
	d.Profile, d.Changed = rec.Profile, rec.Changed
	return d, nil
}

// Draft returns the draft; an untouched store has no activations and the
// default (nil) profile.
func (s *Store) Draft() (Draft, error) {
	d := Draft{Active: map[string]string{}}
	_, err := s.view(func(tx txn) (err error) {
		d, err = s.loadDraft(tx)
		return err
	})
	return d, err
}

// UpdateDraft runs fn on the draft inside one read-write transaction and
// saves the result; an error from fn changes nothing. Every activation must
// name an installed release. fn must not call the store (it would wait for
// itself until the timeout).
func (s *Store) UpdateDraft(fn func(*Draft) error) error {
	return s.update(func(tx txn) error {
		d, err := s.loadDraft(tx)
		if err != nil {
			return err
		}
		if err := fn(&d); err != nil {
			return err
		}
		rels := tx.Bucket(bucketReleases)
		for _, name := range slices.Sorted(maps.Keys(d.Active)) {
			if rels.Get(releaseKey(name, d.Active[name])) == nil {
				return notInstalled(name, d.Active[name])
			}
		}
		rec := draftRec{Active: d.Active, Profile: d.Profile, Changed: now()}
		return tx.Bucket(bucketMeta).Put(keyDraft, encode(rec))
	})
}
