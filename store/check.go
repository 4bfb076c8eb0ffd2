package store

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/search"
)

// Check verifies the store's invariants and bbolt's page consistency in one
// read-only transaction. It returns a CodeInternal error naming the first
// broken invariant; a store that does not exist yet is valid.
func (s *Store) Check() error {
	// The pages first, before anything else is read through them.
	_, err := s.be.view(func(tx txn) error {
		if c, ok := tx.(checker); ok {
			if err := c.check(); errors.Is(err, ErrDamaged) {
				return s.damaged(err)
			} else if err != nil {
				return s.broken("backend consistency: %v", err)
			}
		}
		if err := s.checkSchema(tx); err != nil {
			return err
		}
		return s.checkRecords(tx)
	})
	return err
}

func (s *Store) broken(format string, args ...any) error {
	return kernel.Errorf(kernel.CodeInternal, "%s", "store invariant broken: "+fmt.Sprintf(format, args...)).
		AtPath(s.be.where())
}

// checkRecords verifies the records' invariants, bucket by bucket; the
// later checks use what the earlier ones read.
func (s *Store) checkRecords(tx txn) error {
	if err := s.checkBuckets(tx); err != nil {
		return err
	}
	digestOf, err := s.checkReleases(tx)
	if err != nil {
		return err
	}
	if err := s.checkKeys(tx); err != nil {
		return err
	}
	newest, count, err := s.checkRevisions(tx)
	if err != nil {
		return err
	}
	if err := s.checkObjects(tx); err != nil {
		return err
	}
	if err := s.checkActive(tx, newest, count, digestOf); err != nil {
		return err
	}
	if err := s.checkDraft(tx, digestOf); err != nil {
		return err
	}
	if err := s.checkSettings(tx); err != nil {
		return err
	}
	if sec := tx.Bucket(bucketMeta).Get(keySecret); sec != nil && len(sec) != 32 {
		return s.broken("secret has %d bytes, not 32", len(sec))
	}
	return nil
}

func (s *Store) checkBuckets(tx txn) error {
	for _, b := range allBuckets {
		// schema-1 files lack the index buckets, and a home no write has
		// touched since settings came lacks theirs
		if tx.Bucket(b) == nil && !slices.ContainsFunc([][]byte{bucketGens, bucketObjects, bucketPending, bucketSettings}, func(x []byte) bool { return bytes.Equal(x, b) }) {
			return s.broken("bucket %q is missing", b)
		}
	}
	return nil
}

// checkReleases checks that releases and the digest index mirror each
// other. digestOf maps each release key to its Ref (its digest,
// "dev:"-prefixed for development).
func (s *Store) checkReleases(tx txn) (digestOf map[string]string, err error) {
	digestOf = map[string]string{}
	err = tx.Bucket(bucketReleases).ForEach(func(k, v []byte) error {
		var rec releaseRec
		if err := s.decode("release "+string(k), v, &rec); err != nil {
			return s.broken("release %s does not decode: %v", k, err)
		}
		if rec.Name == "" || rec.Version == "" || rec.Digest == "" {
			return s.broken("release %s lacks a name, version or digest", k)
		}
		if string(k) != rec.Name+"@"+rec.Version {
			return s.broken("release key %s holds %s@%s", k, rec.Name, rec.Version)
		}
		if rec.Development != (rec.Version == DevVersion) {
			return s.broken("release %s: development %v with version %q", k, rec.Development, rec.Version)
		}
		ref := fromReleaseRec(rec).Ref()
		if idx := tx.Bucket(bucketDigests).Get([]byte(ref)); !bytes.Equal(idx, k) {
			return s.broken("digest index for %s points to %q, not %s", ref, idx, k)
		}
		digestOf[string(k)] = ref
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := tx.Bucket(bucketDigests).ForEach(func(d, k []byte) error {
		if digestOf[string(k)] != string(d) {
			return s.broken("digest index entry %s points to %s, which does not have that digest", d, k)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return digestOf, nil
}

// checkKeys checks that each key's entry matches its name and that public
// keys are unique.
func (s *Store) checkKeys(tx txn) error {
	publics := map[string]string{}
	return tx.Bucket(bucketKeys).ForEach(func(k, v []byte) error {
		var rec keyRec
		if err := s.decode("key "+string(k), v, &rec); err != nil {
			return s.broken("key %s does not decode: %v", k, err)
		}
		if string(k) != rec.Name || rec.Public == "" {
			return s.broken("key entry %s holds name %q and public %q", k, rec.Name, rec.Public)
		}
		if other, dup := publics[rec.Public]; dup {
			return s.broken("keys %s and %s hold the same public key", other, k)
		}
		publics[rec.Public] = rec.Name
		return nil
	})
}

// checkRevisions checks that revisions ascend (consecutive unless older
// ones were pruned), each with its index or binding intact, and that no
// binding is left without its revision. It returns the newest revision's
// number and how many there are.
func (s *Store) checkRevisions(tx txn) (newest, count uint64, err error) {
	var blobs uint64
	if err := tx.Bucket(bucketRevisions).ForEach(func(k, v []byte) error {
		got, ok := btoi(k)
		if !ok || got <= newest {
			return s.broken("revision key %x after %s", k, RevisionID(newest))
		}
		newest = got
		count++
		var rec revisionRec
		if err := s.decode("revision", v, &rec); err != nil {
			return s.broken("revision %s does not decode: %v", RevisionID(newest), err)
		}
		if err := s.checkRevisionRec(&rec, newest); err != nil {
			return err
		}
		if rec.Index != "" {
			return s.checkIndex(tx, &rec)
		}
		blobs++
		return s.checkBinding(tx, k, &rec)
	}); err != nil {
		return 0, 0, err
	}
	if bn := tx.Bucket(bucketBindings).Stats().KeyN; uint64(bn) != blobs {
		return 0, 0, s.broken("%d bindings for %d revisions in the schema-1 layout", bn, blobs)
	}
	return newest, count, nil
}

// checkRevisionRec checks that revision n's record names itself and only
// older revisions.
func (s *Store) checkRevisionRec(rec *revisionRec, n uint64) error {
	switch {
	case rec.Number != n:
		return s.broken("revision %s records number %d", RevisionID(n), rec.Number)
	case rec.ID != RevisionID(n):
		return s.broken("revision %s records id %q", RevisionID(n), rec.ID)
	case rec.Parent >= n:
		return s.broken("revision %s has parent %d, not older than itself", rec.ID, rec.Parent)
	case rec.RollbackOf >= n:
		return s.broken("revision %s rolls back to %d, not older than itself", rec.ID, rec.RollbackOf)
	}
	return nil
}

// checkBinding checks the binding of a revision of the schema-1 layout,
// stored under the revision's key k.
func (s *Store) checkBinding(tx txn, k []byte, rec *revisionRec) error {
	c := tx.Bucket(bucketBindings).Cursor()
	bk, bv := c.Seek(k)
	if !bytes.Equal(bk, k) {
		return s.broken("revision %s has no binding", rec.ID)
	}
	if len(bv) != rec.BindingSize || bindingSum(bv) != rec.BindingSum {
		return s.broken("revision %s binding does not match its recorded size and sha256", rec.ID)
	}
	return nil
}

// checkObjects checks that shared objects hold what their content address
// says; a body's search terms, keyed by the body's address, are read.
func (s *Store) checkObjects(tx txn) error {
	objs := tx.Bucket(bucketObjects)
	if objs == nil {
		return nil
	}
	return objs.ForEach(func(k, v []byte) error {
		if len(k) == 1+refLen && k[0] == objTerms {
			if _, err := search.DecodeBag(v); err != nil {
				return s.broken("object %x: %v", k, err)
			}
			return nil
		}
		if len(k) == 1+refLen && k[0] == objPage {
			if sum, ok := pageObjectRef(v); !ok || string(sum[:]) != string(k[1:]) {
				return s.broken("object %x does not match the refs of the bodies it holds", k)
			}
			return nil
		}
		if len(k) != 1+refLen || !bytes.Equal(objectKey(k[0], v), k) {
			return s.broken("object %x does not match its content address", k)
		}
		return nil
	})
}

// checkActive checks the active pointer: absent before the first publish,
// then always the newest revision (every publish and rollback appends and
// activates), binding installed releases only.
func (s *Store) checkActive(tx txn, newest, count uint64, digestOf map[string]string) error {
	raw := tx.Bucket(bucketMeta).Get(keyActive)
	active, ok := btoi(raw)
	switch {
	case raw == nil && newest != 0:
		return s.broken("%d revisions but no active pointer", newest)
	case raw != nil && !ok:
		return s.broken("active pointer has %d bytes, not 8", len(raw))
	case raw == nil && count != 0:
		return s.broken("%d revisions but no active pointer", count)
	case raw != nil && (active == 0 || active > newest):
		return s.broken("active pointer %s names no revision", RevisionID(active))
	case raw != nil && active != newest:
		return s.broken("active pointer %s is not the newest revision %s", RevisionID(active), RevisionID(newest))
	}
	if active == 0 {
		return nil
	}
	installed := map[string]bool{}
	for _, d := range digestOf {
		installed[d] = true
	}
	rev, err := s.loadRevision(tx, active, false)
	if err != nil {
		return s.broken("active revision: %v", err)
	}
	for _, d := range rev.Releases {
		if !installed[d] {
			return s.broken("active revision %s binds digest %s, which has no release", rev.ID, d)
		}
	}
	return nil
}

// checkDraft checks that the draft activates installed releases only.
func (s *Store) checkDraft(tx txn, digestOf map[string]string) error {
	d, err := s.loadDraft(tx)
	if err != nil {
		return s.broken("draft does not decode: %v", err)
	}
	for _, name := range slices.Sorted(maps.Keys(d.Active)) {
		if _, ok := digestOf[name+"@"+d.Active[name]]; !ok {
			return s.broken("draft activates %s@%s, which is not installed", name, d.Active[name])
		}
	}
	return nil
}
