package store

import (
	"slices"
	"sync"
)

// Stamp identifies one committed state of the store file: the file (device
// and inode), its size and times, and the id of the last write transaction
// committed to it, read from bbolt's two meta pages. Every write
// transaction (publish, activate, install, prune…) commits a higher
// transaction id, so an equal stamp means nothing was committed in between,
// however coarse the file system's timestamps are. Reading one costs a stat
// and one read of both meta pages through a descriptor kept open: no lock,
// no mmap. A reader that keeps
// what it read of the active revision may serve it again while Stamp
// returns the stamp taken before that read.
type Stamp struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64
	txid         uint64
}

// Stamp returns the store file's current stamp; false when there is none
// to trust (no file yet, a meta page being written, a platform without
// it): then the caller reads the store.
func (s *Store) Stamp() (Stamp, bool) {
	if e, ok := s.be.(sharedBackend); ok {
		return e.stamp()
	}
	return s.stamps.read(s.path)
}

// Unchanged reports whether what a reader read at stamp old is still what
// the store holds at stamp now: the same stamp, or the same file with only
// this handle's audit records committed in between (known as its own from
// before each commit lands). A serving process
// appends audit records every fraction of a second; without this, each
// batch would make its caches read the store again. (On etcd the
// stamp leaves the audit log out already.)
func (s *Store) Unchanged(old, now Stamp) bool {
	if old == now {
		return true
	}
	if old.dev != now.dev || old.ino != now.ino || now.txid < old.txid {
		return false
	}
	if now.txid == old.txid {
		// The file changed but no commit landed since: pages of a commit
		// still being written (a reader sees what the meta page names, so
		// they change nothing read), or a stamp whose stat came before the
		// meta page of the commit it read. Trusted only around this
		// handle's own audit commits, the last landed or the next being
		// written; a commit that failed is not known as its own.
		return s.stamps.own(now.txid) || s.stamps.own(now.txid+1)
	}
	return s.stamps.onlyAudit(old.txid, now.txid)
}

// SameState reports whether stamps a and b, taken in either order, name
// the same contents but for this handle's audit records. Requests take
// stamps concurrently: one that took its stamp just before another's
// compares it with a cached stamp that is newer.
func (s *Store) SameState(a, b Stamp) bool {
	return s.Unchanged(a, b) || s.Unchanged(b, a)
}

// ownAuditTxs is how many of this handle's latest audit commits Unchanged
// remembers.
const ownAuditTxs = 64

// stampState is a Store's side of its stamps: the store file kept open for
// reading meta pages, and the ids of the audit-only transactions this
// handle committed.
type stampState struct {
	mu    sync.Mutex
	fd    int
	open  bool // fd is the kept descriptor
	dev   uint64
	ino   uint64
	audit [ownAuditTxs]uint64 // ring of committed audit txids
	next  int
}

// expectAudit records txid as an audit-only commit of this handle. The
// writer calls it inside the transaction, before the commit, while it
// holds the store's write lock: a reader that sees the new stamp the
// moment the commit lands already knows it as this handle's own.
func (st *stampState) expectAudit(txid uint64) {
	st.mu.Lock()
	st.audit[st.next%ownAuditTxs] = txid
	st.next++
	st.mu.Unlock()
}

// abandon forgets txid: its transaction did not commit, so the next
// commit, perhaps another process's, may take the same id. The writer
// calls it before it lets the store's write lock go.
func (st *stampState) abandon(txid uint64) {
	st.mu.Lock()
	for i, id := range st.audit {
		if id == txid {
			st.audit[i] = 0
		}
	}
	st.mu.Unlock()
}

// own reports whether txid is one of this handle's audit commits, landed
// or being written.
func (st *stampState) own(txid uint64) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return txid != 0 && slices.Contains(st.audit[:], txid)
}

// onlyAudit reports whether every transaction after old up to now is one
// of this handle's audit commits (bbolt numbers commits one by one).
func (st *stampState) onlyAudit(old, now uint64) bool {
	if now-old > ownAuditTxs {
		return false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for id := old + 1; id <= now; id++ {
		if !slices.Contains(st.audit[:], id) {
			return false
		}
	}
	return true
}
