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
// this handle's audit records committed in between. A serving process
// appends audit records every fraction of a second; without this, each
// batch would make its caches read the store again. (On etcd the
// stamp leaves the audit log out already.)
func (s *Store) Unchanged(old, now Stamp) bool {
	if old == now {
		return true
	}
	if old.dev != now.dev || old.ino != now.ino || now.txid <= old.txid {
		return false
	}
	return s.stamps.onlyAudit(old.txid, now.txid)
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

// committedAudit records txid as an audit-only commit of this handle.
func (st *stampState) committedAudit(txid uint64) {
	st.mu.Lock()
	st.audit[st.next%ownAuditTxs] = txid
	st.next++
	st.mu.Unlock()
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
