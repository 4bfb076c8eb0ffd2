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
	return s.stamps.onlyAudit(now.dev, now.ino, old.txid, now.txid)
}

// ownAuditTxs is how many of this handle's latest audit commits Unchanged
// remembers.
const ownAuditTxs = 64

// stampState is a Store's side of its stamps: the store file kept open for
// reading meta pages, and the audit-only transactions this handle
// committed, each with the file it committed to.
type stampState struct {
	mu    sync.Mutex
	fd    int
	open  bool // fd is the kept descriptor
	dev   uint64
	ino   uint64
	audit [ownAuditTxs]ownTx // ring of committed audit transactions
	next  int
	// newest is the highest transaction id seen of one file, by a stamp
	// or an own commit.
	newest ownTx
}

// saw notes txid of the file dev, ino, read by a stamp or committed by
// this handle. The ids of a file only grow: a lower one than seen before
// means the file was rewritten in place (restored from a copy), and the
// ids this handle recorded for it may now name another process's commits.
// (A stamp read while an own commit lands may be one behind it: that only
// forgets the ring, and costs a read of the store.)
func (st *stampState) saw(dev, ino, txid uint64) {
	st.mu.Lock()
	st.sawLocked(dev, ino, txid)
	st.mu.Unlock()
}

// The ring only ever holds commits to the newest file: another file in
// the store's place (a restore by rename, its inode perhaps a reused one)
// forgets it too.
func (st *stampState) sawLocked(dev, ino, txid uint64) {
	if st.newest.dev != dev || st.newest.ino != ino || txid < st.newest.txid {
		clear(st.audit[:])
	}
	st.newest = ownTx{dev, ino, txid}
}

// ownTx is one audit-only commit of this handle: its transaction id in the
// file dev, ino.
type ownTx struct{ dev, ino, txid uint64 }

// committedAudit records txid of the file dev, ino as an audit-only commit
// of this handle (after saw has forgotten what no longer names commits of
// that file).
func (st *stampState) committedAudit(dev, ino, txid uint64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.sawLocked(dev, ino, txid)
	st.audit[st.next%ownAuditTxs] = ownTx{dev, ino, txid}
	st.next++
}

// onlyAudit reports whether every transaction of the file dev, ino after
// old up to now is one of this handle's audit commits to that file (bbolt
// numbers commits one by one).
func (st *stampState) onlyAudit(dev, ino, old, now uint64) bool {
	if now-old > ownAuditTxs {
		return false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for id := old + 1; id <= now; id++ {
		if !slices.Contains(st.audit[:], ownTx{dev, ino, id}) {
			return false
		}
	}
	return true
}
