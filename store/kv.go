package store

import (
	"context"
	"slices"
)

// The store's records are written once, against these three interfaces; a
// backend (bbolt in a home, etcd for replicas) supplies transactions. They
// are bbolt's own shapes, so the bbolt backend is a thin wrapper: ordered
// buckets of byte keys, cursors, per-bucket sequences. A backend must run
// every update as one serializable transaction that commits all or
// nothing, and every view on one consistent snapshot.

// txn is one transaction.
type txn interface {
	// Bucket returns the named bucket, or nil when it does not exist.
	Bucket(name []byte) bucket
	CreateBucketIfNotExists(name []byte) (bucket, error)
	// ForEach visits every bucket in name order.
	ForEach(fn func(name []byte, b bucket) error) error
}

// bucket is an ordered map of byte keys. Slices it returns are valid only
// until the transaction ends.
type bucket interface {
	Get(k []byte) []byte
	Put(k, v []byte) error
	Delete(k []byte) error
	Cursor() cursor
	// ForEach visits every key in order; fn must not modify the bucket.
	ForEach(fn func(k, v []byte) error) error
	NextSequence() (uint64, error)
	Sequence() uint64
	// Stats counts the keys and the bytes they take.
	Stats() bucketStats
	// Appending is a hint that keys are put in ascending order.
	Appending()
}

// cursor walks a bucket in key order; a nil key means past either end.
type cursor interface {
	First() (k, v []byte)
	Last() (k, v []byte)
	Next() (k, v []byte)
	Prev() (k, v []byte)
	Seek(seek []byte) (k, v []byte)
	// Delete removes the key the cursor is on.
	Delete() error
}

type bucketStats struct{ KeyN, Bytes int }

// checker is a txn that can verify its backend's own structures.
type checker interface{ check() error }

// backend is where a store's transactions run.
type backend interface {
	// view runs fn on a snapshot; false (and no call) when the store does
	// not exist yet.
	view(fn func(tx txn) error) (bool, error)
	// update runs fn in one write transaction, creating the store first if
	// needed. A backend may run fn again after a conflict, so fn sets its
	// results afresh on every run.
	update(fn func(tx txn) error) error
	// batch bounds one write transaction of bulk records (IndexWriter).
	batch() (ops, bytes int)
	// where names the store in messages: a file, or an etcd URL.
	where() string
}

// sharedBackend is a backend several machines use at once (etcd, in a
// binary built with -tags etcd). What one machine alone would keep in
// files (holds, the change stamp, the watch) it keeps in the store.
type sharedBackend interface {
	backend
	exists() (bool, error)
	close() error
	stamp() (Stamp, bool)
	watch(ctx context.Context, ch chan<- struct{})
	hold(kind, id string) (func(), error)
	holders(kind, id string) ([]Holder, error)
	tryRemoveHeld(kind, id string, remove func() error) error
	// taskStore is the task records' store beside s.
	taskStore(s *Store) *Store
}

// deleteWhere deletes the records of b that dead picks and returns how
// many; keys are collected first, as a bucket must not change under
// ForEach.
func deleteWhere(b bucket, dead func(k, v []byte) bool) (int, error) {
	var keys [][]byte
	if err := b.ForEach(func(k, v []byte) error {
		if dead(k, v) {
			keys = append(keys, slices.Clone(k))
		}
		return nil
	}); err != nil {
		return 0, err
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}
