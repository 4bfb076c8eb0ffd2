package store

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/rukh-dev/rukh/kernel"
)

// abandonedAfter is how old a pending generation must be before prune
// takes it for the leftover of a publish that crashed (a running publish
// writes its chunks within seconds).
const abandonedAfter = time.Hour

// Pruned is what PruneRevisions removed.
type Pruned struct {
	Revisions []string // ids, oldest first
	Objects   int      // declarations and tool bodies no kept revision uses
	Abandoned int      // generations left by publishes that never finished
	// Swept is false when a publish was still writing, so objects were
	// left alone (the next prune sweeps them).
	Swept bool
	// Held are revisions prune would remove but a running call holds
	// (its id, then who holds it); they are kept.
	Held [][2]string
}

// PruneRevisions removes every revision but the newest keep ones and the
// active one, with their indexes, and then every declaration and tool body
// that no remaining revision uses. keep must be at least 1.
//
// A revision a running call holds (HoldRevision, in any process) is kept
// too: prune takes each candidate's hold exclusively, without waiting, and
// keeps what it cannot take until the transaction is over. A tools/list
// cursor of a removed revision is refused like that of any other
// non-active revision.
func (s *Store) PruneRevisions(keep int) (Pruned, error) {
	var out Pruned
	if keep < 1 {
		return out, (&kernel.Error{Code: kernel.CodeUsage, Message: fmt.Sprintf("--keep must be at least 1, got %d", keep)}).
			WithHint("the active revision is always kept")
	}
	var candidates []uint64
	if _, err := s.view(func(tx txn) error {
		active := activeNumber(tx)
		var all []uint64
		if err := tx.Bucket(bucketRevisions).ForEach(func(k, _ []byte) error {
			if n, ok := btoi(k); ok {
				all = append(all, n)
			}
			return nil
		}); err != nil {
			return err
		}
		for i, n := range all {
			if i < len(all)-keep && n != active {
				candidates = append(candidates, n)
			}
		}
		return nil
	}); err != nil {
		return out, err
	}
	// Removal holds each candidate's hold exclusively until the end, so no
	// call starts holding one that is being removed; a held one is kept.
	removable := map[uint64]bool{}
	var held [][2]string
	for _, n := range candidates {
		if e, ok := s.be.(sharedBackend); ok {
			hs, err := e.holders(HoldRevision, RevisionID(n))
			if err != nil {
				return out, err
			}
			if len(hs) > 0 {
				held = append(held, [2]string{RevisionID(n), (&InUseError{Holders: hs}).By()})
				continue
			}
			removable[n] = true
			continue
		}
		f, err := lockHold(s.HoldsDir(), s.holdPath(HoldRevision, RevisionID(n)), true)
		if errors.Is(err, errHeld) {
			in := &InUseError{Kind: HoldRevision, ID: RevisionID(n), Holders: holders(f)}
			f.Close()
			held = append(held, [2]string{RevisionID(n), in.By()})
			continue
		}
		if err != nil {
			return out, &kernel.Error{Code: kernel.CodeInternal, Message: "cannot check whether revision " + RevisionID(n) + " is in use", Err: err}
		}
		defer f.Close()
		removable[n] = true
	}
	// The work is done in transactions of bounded size (etcd limits one to
	// a few hundred operations). Each step leaves a consistent store: a
	// removed revision's index is marked an abandoned generation in the
	// transaction that removes its record, so a prune cut short finishes
	// at the next one.
	out = Pruned{Held: held}
	ops, _ := s.be.batch()
	perTxn := max(1, ops/4)
	for {
		more := false
		err := s.update(func(tx txn) error {
			more = false
			revs, pending := tx.Bucket(bucketRevisions), tx.Bucket(bucketPending)
			active := activeNumber(tx)
			var all []uint64
			if err := revs.ForEach(func(k, _ []byte) error {
				n, ok := btoi(k)
				if !ok {
					return s.internal(fmt.Sprintf("bad revision key %x", k), nil)
				}
				all = append(all, n)
				return nil
			}); err != nil {
				return err
			}
			var removed []string
			for i, n := range all {
				if i >= len(all)-keep || n == active || !removable[n] {
					continue
				}
				if len(removed) == perTxn {
					more = true
					break
				}
				var rec revisionRec
				if err := s.decode("revision "+RevisionID(n), revs.Get(itob(n)), &rec); err != nil {
					return err
				}
				if rec.Index != "" {
					gen, err := genOf(&rec)
					if err != nil {
						return s.internal("revision "+rec.ID, err)
					}
					if err := pending.Put(gen, []byte(time.Time{}.Format(time.RFC3339Nano))); err != nil {
						return err
					}
				}
				if err := revs.Delete(itob(n)); err != nil {
					return err
				}
				if err := tx.Bucket(bucketBindings).Delete(itob(n)); err != nil {
					return err
				}
				removed = append(removed, rec.ID)
			}
			out.Revisions = append(out.Revisions[:len(out.Revisions):len(out.Revisions)], removed...)
			return nil
		})
		if err != nil {
			return out, err
		}
		if !more {
			break
		}
		out.Revisions = slices.Clone(out.Revisions)
	}
	// The first transaction of each loop below runs again from the start on
	// a conflict, so results are counted only after it commits.

	// Indexes of removed revisions and of publishes that never finished.
	var abandoned [][]byte
	running := false
	if _, err := s.view(func(tx txn) error {
		abandoned, running, out.Abandoned = nil, false, 0
		return tx.Bucket(bucketPending).ForEach(func(k, v []byte) error {
			t, err := time.Parse(time.RFC3339Nano, string(v))
			if err == nil && time.Since(t) < abandonedAfter {
				running = true
				return nil
			}
			if err != nil || !t.IsZero() { // zero: a removed revision's index
				out.Abandoned++
			}
			abandoned = append(abandoned, clone(k))
			return nil
		})
	}); err != nil {
		return out, err
	}
	for _, g := range abandoned {
		if err := s.deletePrefix(bucketGens, g, func(tx txn) error { return tx.Bucket(bucketPending).Delete(g) }); err != nil {
			return out, err
		}
	}
	if running {
		return out, nil
	}

	// Mark every object a kept revision refers to, then sweep, in batches
	// that each first check that no publish began or ended since the mark.
	var unused [][]byte
	var newest []byte
	if _, err := s.view(func(tx txn) error {
		unused, newest = nil, nil
		gens := tx.Bucket(bucketGens)
		used := map[string]struct{}{}
		var kept [][]byte
		if err := tx.Bucket(bucketRevisions).ForEach(func(k, v []byte) error {
			newest = clone(k)
			var rec revisionRec
			if err := s.decode("revision", v, &rec); err != nil {
				return err
			}
			if rec.Index != "" {
				g, err := genOf(&rec)
				if err != nil {
					return s.internal("revision "+rec.ID, err)
				}
				kept = append(kept, g)
			}
			return nil
		}); err != nil {
			return err
		}
		for _, g := range kept {
			ix := &Index{s: s, tx: tx, gen: g, gens: gens, object: tx.Bucket(bucketObjects)}
			if h, ok := decodeHeader(gens.Get(genKey(g, tagHeader))); ok {
				used[string(objReleases)+h.Releases] = struct{}{}
			}
			if err := ix.Routes(func(r Route) error {
				if r.Decl != "" {
					used[string(objDecl)+r.Decl] = struct{}{}
				}
				return nil
			}); err != nil {
				return err
			}
			if err := ix.walk(genKey(g, tagTool), func(k, v []byte) error {
				t, ok := decodeTool("", v)
				if !ok {
					return s.internal("an index tool record is unreadable", nil)
				}
				used[string(objDecl)+t.Decl] = struct{}{}
				used[string(objBody)+t.Body] = struct{}{}
				return nil
			}); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketObjects).ForEach(func(k, _ []byte) error {
			if _, ok := used[string(k)]; !ok {
				unused = append(unused, clone(k))
			}
			return nil
		})
	}); err != nil {
		return out, err
	}
	for len(unused) > 0 {
		n := min(len(unused), ops-8)
		stale := false
		if err := s.update(func(tx txn) error {
			stale = false
			k, _ := tx.Bucket(bucketRevisions).Cursor().Last()
			if !bytes.Equal(k, newest) || tx.Bucket(bucketPending).Stats().KeyN > 0 {
				stale = true // a publish started or finished: its objects may be among these
				return nil
			}
			objs := tx.Bucket(bucketObjects)
			for _, k := range unused[:n] {
				if err := objs.Delete(k); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return out, err
		}
		if stale {
			return out, nil
		}
		out.Objects += n
		unused = unused[n:]
	}
	out.Swept = true
	return out, nil
}

// deletePrefix removes every key of bucket under prefix, in transactions
// of bounded size; the last one also runs then.
func (s *Store) deletePrefix(name, prefix []byte, then func(tx txn) error) error {
	ops, _ := s.be.batch()
	for {
		done := false
		if err := s.update(func(tx txn) error {
			done = true
			c := tx.Bucket(name).Cursor()
			n := 0
			// Seek again after each delete: a bbolt cursor may skip a key
			// when it moves on from one it deleted.
			for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Seek(prefix) {
				if n == ops-8 {
					done = false
					return nil
				}
				if err := c.Delete(); err != nil {
					return err
				}
				n++
			}
			return then(tx)
		}); err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}

// checkIndex verifies one indexed revision: header, releases, and that
// every route and tool names objects that exist.
func (s *Store) checkIndex(tx txn, rec *revisionRec) error {
	ix, err := s.openIndex(tx, rec.Number)
	if err != nil {
		return s.broken("revision %s: %v", rec.ID, err)
	}
	if ix.hdr.Revision != rec.ID {
		return s.broken("revision %s: index is of %q", rec.ID, ix.hdr.Revision)
	}
	if _, err := ix.Releases(); err != nil {
		return s.broken("revision %s: %v", rec.ID, err)
	}
	if tx.Bucket(bucketPending).Get(ix.gen) != nil {
		return s.broken("revision %s: its index is still marked pending", rec.ID)
	}
	objs := tx.Bucket(bucketObjects)
	if err := ix.Routes(func(r Route) error {
		if r.Kind != RouteGroup && objs.Get(append([]byte{objDecl}, r.Decl...)) == nil {
			return s.broken("revision %s: route %q names a missing declaration", rec.ID, r.Words)
		}
		return nil
	}); err != nil {
		return err
	}
	for _, ep := range ix.hdr.Endpoints {
		tools := 0
		if err := ix.Tools(ep.Name, func(t Tool) error {
			tools++
			if objs.Get(append([]byte{objDecl}, t.Decl...)) == nil || objs.Get(append([]byte{objBody}, t.Body...)) == nil {
				return s.broken("revision %s: tool %s names a missing object", rec.ID, t.Name)
			}
			return nil
		}); err != nil {
			return err
		}
		paged := 0
		for i := range ep.Pages {
			if err := ix.Page(ep.Name, i, func(string, []byte) error { paged++; return nil }); err != nil {
				return s.broken("revision %s: endpoint %s page %d: %v", rec.ID, ep.Name, i, err)
			}
		}
		if tools != ep.Tools || paged != ep.Tools {
			return s.broken("revision %s: endpoint %s has %d tools and %d paged, header says %d", rec.ID, ep.Name, tools, paged, ep.Tools)
		}
	}
	return nil
}
