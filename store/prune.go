package store

import (
	"bytes"
	"crypto/sha256"
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
		return out, kernel.Errorf(kernel.CodeUsage, "--keep must be at least 1, got %d", keep).
			WithHint("the active revision is always kept")
	}
	candidates, err := s.pruneCandidates(keep)
	if err != nil {
		return out, err
	}
	// Removal holds each candidate's hold exclusively until the end, so no
	// call starts holding one that is being removed; a held one is kept.
	removable, held, release, err := s.holdCandidates(candidates)
	defer release()
	if err != nil {
		return out, err
	}
	out = Pruned{Held: held}
	if out.Revisions, err = s.removeRevisions(keep, removable); err != nil {
		return out, err
	}
	// The first transaction of each phase below runs again from the start
	// on a conflict, so results are counted only after it commits.
	var running bool
	if out.Abandoned, running, err = s.dropAbandoned(); err != nil || running {
		return out, err
	}
	unused, newest, err := s.unusedObjects()
	if err != nil {
		return out, err
	}
	out.Objects, out.Swept, err = s.sweepObjects(unused, newest)
	return out, err
}

// pruneCandidates lists the revisions prune would remove, oldest first:
// all but the newest keep ones and the active one.
func (s *Store) pruneCandidates(keep int) ([]uint64, error) {
	var candidates []uint64
	_, err := s.view(func(tx txn) error {
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
	})
	return candidates, err
}

// holdCandidates takes each candidate's hold exclusively, without waiting.
// It returns the ones it took, and those a running call holds with who
// holds them. release ends the holds taken; the caller runs it, error or
// not, once the removal is over.
func (s *Store) holdCandidates(candidates []uint64) (removable map[uint64]bool, held [][2]string, release func(), err error) {
	var taken []func()
	release = func() {
		for _, r := range slices.Backward(taken) {
			r()
		}
	}
	removable = map[uint64]bool{}
	for _, n := range candidates {
		by, r, err := s.tryHoldRevision(n)
		if err != nil {
			return removable, held, release, err
		}
		if by != "" {
			held = append(held, [2]string{RevisionID(n), by})
			continue
		}
		taken = append(taken, r)
		removable[n] = true
	}
	return removable, held, release, nil
}

// tryHoldRevision takes revision n's hold exclusively without waiting. If
// another call holds it, by says who and nothing is taken. On etcd it only
// looks: holds there are keys, not locks, so there is nothing to take.
func (s *Store) tryHoldRevision(n uint64) (by string, release func(), err error) {
	id := RevisionID(n)
	if e, ok := s.be.(sharedBackend); ok {
		hs, err := e.holders(HoldRevision, id)
		if err != nil {
			return "", nil, err
		}
		if len(hs) > 0 {
			return (&InUseError{Holders: hs}).By(), nil, nil
		}
		return "", func() {}, nil
	}
	f, err := lockHold(s.HoldsDir(), s.holdPath(HoldRevision, id), true)
	if errors.Is(err, errHeld) {
		in := &InUseError{Kind: HoldRevision, ID: id, Holders: holders(f)}
		f.Close()
		return in.By(), nil, nil
	}
	if err != nil {
		return "", nil, kernel.Errorf(kernel.CodeInternal, "%s", "cannot check whether revision "+id+" is in use").Wrap(err)
	}
	return "", func() { f.Close() }, nil
}

// removeRevisions removes the removable revisions that are still neither
// among the newest keep nor active, and returns their ids, oldest first
// (on an error, those removed until then).
//
// The work is done in transactions of bounded size (etcd limits one to a
// few hundred operations). Each step leaves a consistent store: a removed
// revision's index is marked an abandoned generation in the transaction
// that removes its record, so a prune cut short finishes at the next one.
func (s *Store) removeRevisions(keep int, removable map[uint64]bool) ([]string, error) {
	ops, _ := s.be.batch()
	perTxn := max(1, ops/4)
	var removed []string
	for {
		// A transaction that runs again on a conflict starts its batch
		// afresh: ids are kept only once it commits.
		var batch []string
		more := false
		if err := s.update(func(tx txn) error {
			var err error
			batch, more, err = s.removeRevisionBatch(tx, keep, removable, perTxn)
			return err
		}); err != nil {
			return removed, err
		}
		removed = append(removed, batch...)
		if !more {
			return removed, nil
		}
	}
}

// removeRevisionBatch removes up to perTxn revisions in tx, oldest first;
// more says that some are left for another transaction.
func (s *Store) removeRevisionBatch(tx txn, keep int, removable map[uint64]bool, perTxn int) (removed []string, more bool, err error) {
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
		return nil, false, err
	}
	for i, n := range all {
		if i >= len(all)-keep || n == active || !removable[n] {
			continue
		}
		if len(removed) == perTxn {
			return removed, true, nil
		}
		var rec revisionRec
		if err := s.decode("revision "+RevisionID(n), revs.Get(itob(n)), &rec); err != nil {
			return nil, false, err
		}
		if rec.Index != "" {
			gen, err := genOf(&rec)
			if err != nil {
				return nil, false, s.internal("revision "+rec.ID, err)
			}
			if err := pending.Put(gen, []byte(time.Time{}.Format(time.RFC3339Nano))); err != nil {
				return nil, false, err
			}
		}
		if err := revs.Delete(itob(n)); err != nil {
			return nil, false, err
		}
		if err := tx.Bucket(bucketBindings).Delete(itob(n)); err != nil {
			return nil, false, err
		}
		removed = append(removed, rec.ID)
	}
	return removed, false, nil
}

// dropAbandoned removes the indexes of removed revisions and of publishes
// that never finished, and counts the latter. running says a publish is
// still writing.
func (s *Store) dropAbandoned() (abandoned int, running bool, err error) {
	var gens [][]byte
	if _, err := s.view(func(tx txn) error {
		gens, running, abandoned = nil, false, 0
		return tx.Bucket(bucketPending).ForEach(func(k, v []byte) error {
			t, err := time.Parse(time.RFC3339Nano, string(v))
			if err == nil && time.Since(t) < abandonedAfter {
				running = true
				return nil
			}
			if err != nil || !t.IsZero() { // zero: a removed revision's index
				abandoned++
			}
			gens = append(gens, clone(k))
			return nil
		})
	}); err != nil {
		return 0, false, err
	}
	for _, g := range gens {
		if err := s.deletePrefix(bucketGens, g, func(tx txn) error { return tx.Bucket(bucketPending).Delete(g) }); err != nil {
			return abandoned, false, err
		}
	}
	return abandoned, running, nil
}

// unusedObjects marks every object a kept revision refers to and returns
// the others, with the newest revision's key as it was at the mark.
func (s *Store) unusedObjects() (unused [][]byte, newest []byte, err error) {
	_, err = s.view(func(tx txn) error {
		unused, newest = nil, nil
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
		used := map[string]struct{}{}
		for _, g := range kept {
			if err := s.markUsed(tx, g, used); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketObjects).ForEach(func(k, _ []byte) error {
			if _, ok := used[string(k)]; !ok {
				unused = append(unused, clone(k))
			}
			return nil
		})
	})
	return unused, newest, err
}

// markUsed adds to used the object keys generation g refers to: its
// releases, and its routes' and tools' declarations and bodies (and the
// bodies' search terms).
func (s *Store) markUsed(tx txn, g []byte, used map[string]struct{}) error {
	gens := tx.Bucket(bucketGens)
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
	if err := ix.walk(genKey(g, tagPage), func(k, v []byte) error {
		_, bodies, ok := decodePage(v)
		if !ok {
			return s.internal("an index page record is unreadable", nil)
		}
		if bodies != "" {
			used[string(objPage)+bodies] = struct{}{}
		}
		return nil
	}); err != nil {
		return err
	}
	return ix.walk(genKey(g, tagTool), func(k, v []byte) error {
		t, ok := decodeTool("", v)
		if !ok {
			return s.internal("an index tool record is unreadable", nil)
		}
		used[string(objDecl)+t.Decl] = struct{}{}
		if t.page != "" {
			used[string(objPage)+t.page] = struct{}{}
		} else {
			used[string(objBody)+t.Body] = struct{}{}
		}
		used[string(termsKey(t.Body))] = struct{}{}
		return nil
	})
}

// sweepObjects deletes unused and counts them, in batches that each first
// check that no publish began or ended since the mark (newest is the
// newest revision's key then). swept is false when one did: its objects
// may be among these, so the rest are left for the next prune.
func (s *Store) sweepObjects(unused [][]byte, newest []byte) (objects int, swept bool, err error) {
	ops, _ := s.be.batch()
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
			return objects, false, err
		}
		if stale {
			return objects, false, nil
		}
		objects += n
		unused = unused[n:]
	}
	return objects, true, nil
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
// every route and tool names objects that exist, and every page bodies
// that exist.
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
			if objs.Get(append([]byte{objDecl}, t.Decl...)) == nil {
				return s.broken("revision %s: tool %s names a missing object", rec.ID, t.Name)
			}
			if t.page == "" {
				if objs.Get(append([]byte{objBody}, t.Body...)) == nil {
					return s.broken("revision %s: tool %s names a missing object", rec.ID, t.Name)
				}
				return nil
			}
			// A listed tool's body is in its page's object, at its slot.
			body, err := ix.Body(t)
			if err != nil {
				return s.broken("revision %s: tool %s: %v", rec.ID, t.Name, err)
			}
			if sum := sha256.Sum256(body); string(sum[:]) != t.Body {
				return s.broken("revision %s: tool %s: the body at its place in its page is not the one its record names", rec.ID, t.Name)
			}
			return nil
		}); err != nil {
			return err
		}
		paged := 0
		for i := range ep.Pages {
			if err := ix.checkPage(ep.Name, i, func() { paged++ }); err != nil {
				return s.broken("revision %s: endpoint %s page %d: %v", rec.ID, ep.Name, i, err)
			}
		}
		// A progressive endpoint pages only the tools it lists.
		if tools != ep.Tools || paged > ep.Tools {
			return s.broken("revision %s: endpoint %s has %d tools and %d paged, header says %d", rec.ID, ep.Name, tools, paged, ep.Tools)
		}
		if ep.Search {
			numbered := 0
			if err := ix.walk(endpointPrefix(ix.gen, tagName, ep.Name), func(_, _ []byte) error { numbered++; return nil }); err != nil {
				return err
			}
			if numbered != tools {
				return s.broken("revision %s: endpoint %s has %d tools and %d numbered for search", rec.ID, ep.Name, tools, numbered)
			}
		}
	}
	return nil
}

// checkPage reads list page i of an endpoint and checks that its object
// is the one of the bodies its record names: the object's key is the hash
// of its bodies' refs, which the check of the objects verifies.
func (ix *Index) checkPage(endpoint string, i int, each func()) error {
	entries, bodies, err := ix.pageRecord(endpoint, i)
	if err != nil {
		return err
	}
	if sum := pageRef(entries); bodies != "" && bodies != string(sum[:]) {
		return fmt.Errorf("its bodies' object is not the one of the bodies its record names")
	}
	return ix.Page(endpoint, i, func(string, []byte) error { each(); return nil })
}
