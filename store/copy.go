package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/rukh-dev/rukh/kernel"
)

// CopyTo and VerifyCopy move a whole store into another one (a bbolt home
// into etcd, or back) record by record, through the kv interface: what
// is copied is the stored bytes, so both ends hold the same store.
// Package archives (the blobs bucket) are copied only between shared
// stores; a bbolt destination gets package copies in its home instead,
// made by the caller, and a shared one the archives of a bbolt source.

// BucketCopy is what was copied of one bucket.
type BucketCopy struct {
	Name     string `json:"name"`
	Keys     int    `json:"keys"`
	Bytes    int    `json:"bytes"` // keys and values
	Sequence uint64 `json:"sequence"`
}

// CopyReport is what CopyTo copied.
type CopyReport struct {
	From, To string
	Buckets  []BucketCopy // the store's buckets
	Tasks    []BucketCopy // the task records' store
	Skipped  []string     // buckets left out (package archives into a bbolt home)
}

// Keys and Bytes total the report.
func (r CopyReport) Keys() (n int) {
	for _, b := range slices.Concat(r.Buckets, r.Tasks) {
		n += b.Keys
	}
	return n
}

func (r CopyReport) Bytes() (n int) {
	for _, b := range slices.Concat(r.Buckets, r.Tasks) {
		n += b.Bytes
	}
	return n
}

// CopyTo copies every bucket of s, and its task records, into dst, which
// must be empty. The source is read from one snapshot per store (a bbolt
// source's writers wait meanwhile); the destination is written in
// transactions bounded by its backend's batch, the meta bucket last, so
// that on etcd a copy cut short is not yet a store anyone would open.
func (s *Store) CopyTo(dst *Store) (CopyReport, error) {
	rep := CopyReport{From: s.be.where(), To: dst.be.where()}
	if err := s.sameStore(dst); err != nil {
		return rep, err
	}
	if ok, err := s.Exists(); err != nil {
		return rep, err
	} else if !ok {
		return rep, kernel.Errorf(kernel.CodeNotFound, "there is no store to copy here yet").AtPath(s.be.where()).
			WithHint("name the store to copy with --store URL or RUKH_HOME")
	}
	if err := dst.mustBeEmpty(); err != nil {
		return rep, err
	}
	skip := func(name []byte) bool { return bytes.Equal(name, bucketBlobs) && !dst.Shared() }
	var err error
	if ok, _ := s.taskDB().Exists(); ok {
		if rep.Tasks, _, err = s.taskDB().copyBuckets(dst.taskDB(), skip); err != nil {
			return rep, err
		}
	}
	var skipped [][]byte
	if rep.Buckets, skipped, err = s.copyBuckets(dst, skip); err != nil {
		return rep, err
	}
	for _, b := range skipped {
		rep.Skipped = append(rep.Skipped, string(b))
	}
	return rep, nil
}

// copyBackend is what a shared backend adds for copies.
type copyBackend interface {
	// contents says what the backend holds ("" when nothing) and how to
	// clear it.
	contents() (found, clear string, err error)
	// overlaps reports whether o keeps its keys among this backend's.
	overlaps(o backend) bool
}

// sameStore refuses a copy of a store onto itself or into its own keys.
func (s *Store) sameStore(dst *Store) error {
	overlap := s.path == dst.path
	if c, ok := s.be.(copyBackend); ok && c.overlaps(dst.be) {
		overlap = true
	}
	if overlap {
		return kernel.Errorf(kernel.CodeUsage, "%s", "cannot copy a store into itself ("+dst.be.where()+")").
			AtPath(s.be.where()).
			WithHint("give --to another etcd prefix, or the directory of a new home")
	}
	return nil
}

// mustBeEmpty refuses a destination that holds anything: a copy never
// merges into, nor overwrites, another store.
func (s *Store) mustBeEmpty() error {
	var found, hint string
	if c, ok := s.be.(copyBackend); ok {
		var err error
		if found, hint, err = c.contents(); err != nil {
			return err
		}
	} else if s.Shared() {
		return s.internal("this store cannot be copied into", nil)
	} else {
		for _, f := range []string{DBName, TasksDBName} {
			p := filepath.Join(s.home, f)
			if _, err := os.Lstat(p); err == nil {
				found = "it has " + f
				break
			} else if !errors.Is(err, fs.ErrNotExist) {
				return s.internal("cannot stat "+p, err)
			}
		}
		hint = "copy into a new directory, or, if what is there is a copy to redo, remove " + DBName + " and " + TasksDBName + " from " + s.home
	}
	if found == "" {
		return nil
	}
	return kernel.Errorf(kernel.CodeConflict, "%s", "the destination is not empty: "+found).AtPath(s.be.where()).
		WithHint(hint)
}

// copyEntry is one write of a batch; a nil key creates the bucket and
// sets its sequence.
type copyEntry struct {
	bucket []byte
	k, v   []byte
	seq    uint64
}

// seqSetter is a bucket whose sequence can be set (both backends' are).
type seqSetter interface{ SetSequence(uint64) error }

// copyBuckets copies every bucket of s but those skip names into dst.
func (s *Store) copyBuckets(dst *Store, skip func([]byte) bool) (out []BucketCopy, skipped [][]byte, err error) {
	w := newCopyWriter(dst)
	_, err = s.view(func(tx txn) error {
		out, skipped = nil, nil
		var names [][]byte
		if err := tx.ForEach(func(name []byte, _ bucket) error {
			names = append(names, append([]byte(nil), name...))
			return nil
		}); err != nil {
			return err
		}
		// meta last: on etcd a store exists once its meta bucket does
		slices.SortStableFunc(names, func(a, b []byte) int {
			return boolInt(bytes.Equal(a, bucketMeta)) - boolInt(bytes.Equal(b, bucketMeta))
		})
		for _, name := range names {
			if skip(name) {
				skipped = append(skipped, name)
				continue
			}
			bc, err := w.copyBucket(name, tx.Bucket(name))
			if err != nil {
				return err
			}
			out = append(out, bc)
		}
		return w.flush()
	})
	return out, skipped, err
}

// copyWriter queues a copy's writes and makes them in transactions no
// larger than the destination takes.
type copyWriter struct {
	dst              *Store
	maxOps, maxBytes int
	batch            []copyEntry
	ops, size        int
	inBatch          map[string]bool // the buckets the batch writes to
}

func newCopyWriter(dst *Store) *copyWriter {
	maxOps, maxBytes := dst.be.batch()
	return &copyWriter{dst: dst, maxOps: maxOps, maxBytes: maxBytes, inBatch: map[string]bool{}}
}

// copyBucket queues bucket b, named name: its sequence, then every key.
func (w *copyWriter) copyBucket(name []byte, b bucket) (BucketCopy, error) {
	bc := BucketCopy{Name: string(name), Sequence: b.Sequence()}
	if err := w.add(copyEntry{bucket: name, seq: bc.Sequence}); err != nil {
		return bc, err
	}
	err := b.ForEach(func(k, v []byte) error {
		bc.Keys++
		bc.Bytes += len(k) + len(v)
		return w.add(copyEntry{bucket: name, k: append([]byte(nil), k...), v: append([]byte{}, v...)})
	})
	return bc, err
}

// cost is the operations e adds to the batch: the first write of a bucket
// in a batch costs one more (its marker, on etcd).
func (w *copyWriter) cost(e copyEntry) int {
	c := boolInt(e.k != nil)
	if !w.inBatch[string(e.bucket)] {
		c++
	}
	return c
}

// add queues one write, first writing the batch if e would not fit in it.
func (w *copyWriter) add(e copyEntry) error {
	n := len(e.k) + len(e.v) + len(e.bucket) + 16
	if len(w.batch) > 0 && (w.ops+w.cost(e) > w.maxOps || w.size+n > w.maxBytes) {
		if err := w.flush(); err != nil {
			return err
		}
		clear(w.inBatch)
	}
	w.ops += w.cost(e)
	w.size += n
	w.inBatch[string(e.bucket)] = true
	w.batch = append(w.batch, e)
	return nil
}

// flush writes the batch in one transaction of the destination.
func (w *copyWriter) flush() error {
	if len(w.batch) == 0 {
		return nil
	}
	if err := w.dst.be.update(func(tx txn) error { return writeCopyEntries(tx, w.batch) }); err != nil {
		var ke *kernel.Error
		if !errors.As(err, &ke) {
			err = w.dst.internal("cannot write the copy", err)
		}
		return err
	}
	w.batch, w.ops, w.size = w.batch[:0], 0, 0
	return nil
}

// writeCopyEntries makes batch's writes in tx, creating buckets as they
// come.
func writeCopyEntries(tx txn, batch []copyEntry) error {
	var b bucket
	var cur []byte
	for _, e := range batch {
		if b == nil || !bytes.Equal(cur, e.bucket) {
			nb, err := tx.CreateBucketIfNotExists(e.bucket)
			if err != nil {
				return err
			}
			b, cur = nb, e.bucket
		}
		if e.k == nil {
			ss, ok := b.(seqSetter)
			if !ok {
				return errors.New("the destination cannot set a bucket's sequence")
			}
			if err := ss.SetSequence(e.seq); err != nil {
				return err
			}
			continue
		}
		if err := b.Put(e.k, e.v); err != nil {
			return err
		}
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// VerifyReport is what VerifyCopy compared.
type VerifyReport struct {
	Buckets int `json:"buckets"`
	Keys    int `json:"keys"`
	// SHA256 is of every compared bucket's name, sequence, keys and values,
	// the same on both sides.
	SHA256 string `json:"sha256"`
}

// VerifyCopy compares s and dst, and their task records, bucket by bucket
// and key by key: counts, sequences and every key and value. A bucket
// missing on one side equals an empty one. Package archives are compared
// only when both stores keep them (both shared). It returns a CodeConflict
// error naming the first difference.
func (s *Store) VerifyCopy(dst *Store) (VerifyReport, error) {
	var rep VerifyReport
	h := sha256.New()
	skip := func(name []byte) bool { return bytes.Equal(name, bucketBlobs) && !(s.Shared() && dst.Shared()) }
	if err := s.compare(dst, "", skip, h, &rep); err != nil {
		return rep, err
	}
	if err := s.taskDB().compare(dst.taskDB(), "task records: ", skip, h, &rep); err != nil {
		return rep, err
	}
	rep.SHA256 = hex.EncodeToString(h.Sum(nil))
	return rep, nil
}

func (s *Store) compare(dst *Store, what string, skip func([]byte) bool, h hash.Hash, rep *VerifyReport) error {
	differ := func(format string, args ...any) error {
		return kernel.Errorf(kernel.CodeConflict, "%s", what+fmt.Sprintf(format, args...)).AtPath(dst.be.where()).
			WithHint("something wrote to one of the stores during the copy, or after it: stop every rukh using them, empty the destination and copy again")
	}
	all := func(stx, dtx txn) error {
		names := map[string]bool{}
		for _, tx := range []txn{stx, dtx} {
			if tx == nil {
				continue
			}
			if err := tx.ForEach(func(name []byte, _ bucket) error {
				if !skip(name) {
					names[string(name)] = true
				}
				return nil
			}); err != nil {
				return err
			}
		}
		for _, name := range slices.Sorted(maps.Keys(names)) {
			var a, b bucket
			if stx != nil {
				a = stx.Bucket([]byte(name))
			}
			if dtx != nil {
				b = dtx.Bucket([]byte(name))
			}
			n, err := compareBucket(a, b, name, h, differ)
			if err != nil {
				return err
			}
			rep.Buckets++
			rep.Keys += n
		}
		return nil
	}
	// A store that does not exist compares as one without buckets.
	found, err := s.be.view(func(stx txn) error {
		found, err := dst.be.view(func(dtx txn) error { return all(stx, dtx) })
		if err == nil && !found {
			err = all(stx, nil)
		}
		return err
	})
	if err == nil && !found {
		_, err = dst.be.view(func(dtx txn) error { return all(nil, dtx) })
	}
	return err
}

// compareBucket walks a and b (either may be nil) together, hashing what
// they hold; it returns the number of keys.
func compareBucket(a, b bucket, name string, h hash.Hash, differ func(string, ...any) error) (int, error) {
	var sa, sb uint64
	if a != nil {
		sa = a.Sequence()
	}
	if b != nil {
		sb = b.Sequence()
	}
	if sa != sb {
		return 0, differ("bucket %s has sequence %d in the source and %d in the copy", name, sa, sb)
	}
	writeField(h, []byte(name))
	writeField(h, []byte(strconv.FormatUint(sa, 10)))
	next := func(c cursor, first bool) ([]byte, []byte) {
		if c == nil {
			return nil, nil
		}
		if first {
			return c.First()
		}
		return c.Next()
	}
	var ca, cb cursor
	if a != nil {
		ca = a.Cursor()
	}
	if b != nil {
		cb = b.Cursor()
	}
	ka, va := next(ca, true)
	kb, vb := next(cb, true)
	n := 0
	for ka != nil || kb != nil {
		switch {
		case kb == nil || (ka != nil && bytes.Compare(ka, kb) < 0):
			return n, differ("bucket %s: key %s is in the source, not in the copy", name, showKey(ka))
		case ka == nil || bytes.Compare(ka, kb) > 0:
			return n, differ("bucket %s: key %s is in the copy, not in the source", name, showKey(kb))
		case !bytes.Equal(va, vb):
			return n, differ("bucket %s: key %s has another value in the copy", name, showKey(ka))
		}
		writeField(h, ka)
		writeField(h, va)
		n++
		ka, va = next(ca, false)
		kb, vb = next(cb, false)
	}
	return n, nil
}

func writeField(h hash.Hash, b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}

// showKey prints a key that may be binary.
func showKey(k []byte) string {
	if len(k) > 64 {
		k = k[:64]
	}
	for _, c := range k {
		if c < 0x20 || c > 0x7e {
			return "0x" + hex.EncodeToString(k)
		}
	}
	return strconv.Quote(string(k))
}
