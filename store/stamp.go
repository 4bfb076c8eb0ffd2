package store

// Stamp identifies one committed state of the store file: the file (device
// and inode), its size and times, and the id of the last write transaction
// committed to it, read from bbolt's two meta pages. Every write
// transaction (publish, activate, install, prune…) commits a higher
// transaction id, so an equal stamp means nothing was committed in between,
// however coarse the file system's timestamps are. Reading one costs an
// open, an fstat and two small reads: no lock, no mmap. A reader that keeps
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
	return fileStamp(s.path)
}
