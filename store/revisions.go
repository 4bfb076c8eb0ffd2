package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/rukh-dev/rukh/kernel"
)

// Revision is one immutable published activeProfileRevision.
type Revision struct {
	Number     uint64
	ID         string // "r<Number>", the activeProfileRevision in tool fingerprints
	CreatedAt  time.Time
	Parent     uint64   // the revision active before this one (0 = none)
	RollbackOf uint64   // the revision whose binding this one restores (0 = none)
	Releases   []string // Release.Ref of each release bound
	Binding    []byte   // schema-1 layout only: one opaque blob (see Indexed)
	Note       string
	// Indexed: the revision is stored as an index (read it with
	// ViewRevision); Binding is then empty.
	Indexed bool
}

// revisionRec is the metadata; the binding lives in its own bucket so
// listings and the metadata never copy it.
type revisionRec struct {
	Number uint64 `json:"number"`
	ID     string `json:"id"`
	// Index comes before the releases list (one name per release, so it grows
	// with the home: docs/performance.md): every request reads id and index
	// (revisionIndex) and stops there.
	Index       string    `json:"index,omitempty"` // generation id (hex) of an indexed revision
	CreatedAt   time.Time `json:"createdAt"`
	Parent      uint64    `json:"parent,omitempty"`
	RollbackOf  uint64    `json:"rollbackOf,omitempty"`
	Releases    []string  `json:"releases,omitempty"`
	Note        string    `json:"note,omitempty"`
	BindingSize int       `json:"bindingSize"`
	BindingSum  string    `json:"bindingSha256"`
}

func bindingSum(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func revisionNotFound(n uint64) error {
	return kernel.Errorf(kernel.CodeNotFound, "revision %s does not exist", RevisionID(n)).
		WithHint("rukh revisions lists the published revisions")
}

func (s *Store) loadRevision(tx txn, n uint64, withBinding bool) (Revision, error) {
	raw := tx.Bucket(bucketRevisions).Get(itob(n))
	if raw == nil {
		return Revision{}, revisionNotFound(n)
	}
	var rec revisionRec
	if err := s.decode("revision "+RevisionID(n), raw, &rec); err != nil {
		return Revision{}, err
	}
	rev := Revision{Number: rec.Number, ID: rec.ID, CreatedAt: rec.CreatedAt, Parent: rec.Parent,
		RollbackOf: rec.RollbackOf, Releases: rec.Releases, Note: rec.Note, Indexed: rec.Index != ""}
	if withBinding && !rev.Indexed {
		b := tx.Bucket(bucketBindings).Get(itob(n))
		if b == nil && rec.BindingSize != 0 {
			return Revision{}, s.internal("revision "+rec.ID+" has lost its binding", nil)
		}
		// bbolt's memory is only valid inside the transaction.
		rev.Binding = append([]byte(nil), b...)
	}
	return rev, nil
}

func lastRevision(tx txn) uint64 {
	k, _ := tx.Bucket(bucketRevisions).Cursor().Last()
	n, _ := btoi(k)
	return n
}

func activeNumber(tx txn) uint64 {
	n, _ := btoi(tx.Bucket(bucketMeta).Get(keyActive))
	return n
}

// Publish stores a new revision and makes it active, in one transaction, if
// the active revision is still expectActive (0 = nothing published).
//
// build runs before the final write transaction, with the number and id the
// revision will get, so it may take its time and read the store. It either
// streams the revision's index into w (the layout every revision gets), or,
// without touching w, returns a schema-1 Binding blob. w writes in chunks
// as it goes; the revision exists only once the final transaction records
// it and moves the active pointer. The store sets Number, ID and Parent (=
// expectActive), and CreatedAt when zero. If another publish got in
// between, nothing becomes visible and the error is a conflict; every
// entry in Releases must be an installed release's Ref.
func (s *Store) Publish(expectActive uint64, build func(number uint64, id string, w *IndexWriter) (Revision, error)) (Revision, error) {
	var active, last uint64
	if _, err := s.view(func(tx txn) error {
		active, last = activeNumber(tx), lastRevision(tx)
		return nil
	}); err != nil {
		return Revision{}, err
	}
	if active != expectActive {
		return Revision{}, changedWhilePublishing()
	}
	next := last + 1
	w, err := s.newIndexWriter()
	if err != nil {
		return Revision{}, err
	}
	defer w.closeSpill()
	rev, err := build(next, RevisionID(next), w)
	if err == nil && w.started {
		if len(rev.Binding) > 0 {
			err = s.internal("a revision is either indexed or one binding, not both", nil)
		} else {
			err = w.finish()
		}
	}
	if err != nil {
		w.discard()
		return Revision{}, err
	}
	rev.Indexed = w.started
	rev.Number, rev.ID, rev.Parent = next, RevisionID(next), expectActive
	if rev.CreatedAt.IsZero() {
		rev.CreatedAt = now()
	}
	rev.Releases = append([]string(nil), rev.Releases...)
	if rev.RollbackOf >= next {
		return Revision{}, revisionNotFound(rev.RollbackOf)
	}
	rec := revisionRec{Number: rev.Number, ID: rev.ID, CreatedAt: rev.CreatedAt, Parent: rev.Parent,
		RollbackOf: rev.RollbackOf, Releases: rev.Releases, Note: rev.Note,
		BindingSize: len(rev.Binding), BindingSum: bindingSum(rev.Binding)}
	if rev.Indexed {
		rec.BindingSize, rec.BindingSum, rec.Index = 0, "", w.genHex()
	}
	err = s.update(func(tx txn) error {
		if activeNumber(tx) != expectActive || lastRevision(tx) != last {
			return changedWhilePublishing()
		}
		digs := tx.Bucket(bucketDigests)
		for _, d := range rev.Releases {
			if digs.Get([]byte(d)) == nil {
				return kernel.Errorf(kernel.CodeNotFound, "no installed release has digest %s (removed while publishing?)", d)
			}
		}
		key := itob(next)
		if rev.Indexed {
			if err := w.commitIndex(tx); err != nil {
				return err
			}
		} else if err := tx.Bucket(bucketBindings).Put(key, rev.Binding); err != nil {
			return err
		}
		if err := tx.Bucket(bucketRevisions).Put(key, encode(rec)); err != nil {
			return err
		}
		// A home whose keys were removed before releases were listed as
		// untrusted gets the list with its next publish.
		if err := s.listUntrusted(tx); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keyActive, key)
	})
	if err != nil {
		w.discard()
		return Revision{}, err
	}
	return rev, nil
}

func changedWhilePublishing() error {
	return kernel.Errorf(kernel.CodeConflict, "the active revision changed while publishing").
		WithHint("another rukh published meanwhile: review the change and publish again")
}

// Active returns the active revision number, 0 if nothing is published. It
// is the per-request read of serve-mcp: one read-only open, one key, close.
func (s *Store) Active() (uint64, error) {
	var n uint64
	_, err := s.view(func(tx txn) error {
		n = activeNumber(tx)
		return nil
	})
	return n, err
}

// ActiveRevision returns the active revision with its binding.
func (s *Store) ActiveRevision() (Revision, error) {
	var rev Revision
	published := false
	_, err := s.view(func(tx txn) (err error) {
		n := activeNumber(tx)
		if n == 0 {
			return nil
		}
		published = true
		rev, err = s.loadRevision(tx, n, true)
		return err
	})
	if err == nil && !published {
		err = kernel.Errorf(kernel.CodeNotFound, "nothing is published yet").WithHint("rukh publish")
	}
	return rev, err
}

// Revision returns revision n with its binding.
func (s *Store) Revision(n uint64) (Revision, error) {
	var rev Revision
	found := false
	_, err := s.view(func(tx txn) (err error) {
		rev, err = s.loadRevision(tx, n, true)
		found = err == nil
		return err
	})
	if err == nil && !found {
		err = revisionNotFound(n)
	}
	return rev, err
}

// ReadBinding calls fn with revision n's binding as bbolt holds it, inside
// the read transaction: nothing is copied, so decoding a large revision
// does not need a second copy of it in memory. The bytes are valid only
// during fn, which must not call the store.
func (s *Store) ReadBinding(n uint64, fn func(binding []byte) error) error {
	found := false
	_, err := s.view(func(tx txn) error {
		if tx.Bucket(bucketRevisions).Get(itob(n)) == nil {
			return nil
		}
		found = true
		return fn(tx.Bucket(bucketBindings).Get(itob(n)))
	})
	if err == nil && !found {
		err = revisionNotFound(n)
	}
	return err
}

// Revisions lists every revision's metadata, oldest first, without bindings.
func (s *Store) Revisions() ([]Revision, error) {
	var out []Revision
	_, err := s.view(func(tx txn) error {
		return tx.Bucket(bucketRevisions).ForEach(func(k, _ []byte) error {
			n, ok := btoi(k)
			if !ok {
				return s.internal(fmt.Sprintf("bad revision key %x", k), nil)
			}
			rev, err := s.loadRevision(tx, n, false)
			if err != nil {
				return err
			}
			out = append(out, rev)
			return nil
		})
	})
	return out, err
}
