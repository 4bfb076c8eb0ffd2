package store

import (
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
)

// HoldForTest opens the store file read-write straight through bbolt, past
// the in-process gate, the way another rukh process would hold it. The
// store file is created first if needed. release closes it.
func HoldForTest(s *Store) (release func(), err error) {
	if err := s.update(func(txn) error { return nil }); err != nil {
		return nil, err
	}
	db, err := bolt.Open(s.path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return nil, err
	}
	return func() { db.Close() }, nil
}

// PokeForTest writes (or, with a nil value, deletes) one raw key, past every
// rule, so tests can break an invariant and watch Check notice.
func PokeForTest(s *Store, bucket, key string, value []byte) error {
	return s.update(func(tx txn) error {
		b := tx.Bucket([]byte(bucket))
		if value == nil {
			return b.Delete([]byte(key))
		}
		return b.Put([]byte(key), value)
	})
}

// RevisionKeyForTest is the raw key of revision n.
func RevisionKeyForTest(n uint64) string { return string(itob(n)) }

// PeekForTest reads one raw key.
func PeekForTest(s *Store, bucket, key string) (out []byte, err error) {
	_, err = s.view(func(tx txn) error {
		out = append([]byte(nil), tx.Bucket([]byte(bucket)).Get([]byte(key))...)
		return nil
	})
	return out, err
}

// SetChunkBytesForTest makes index writers write smaller chunks, so a test
// crosses many chunk transactions.
func SetChunkBytesForTest(n int) { chunkBytes = n }

// CountForTest counts the keys of one bucket.
func CountForTest(s *Store, bucket string) (n int, err error) {
	_, err = s.view(func(tx txn) error {
		n = tx.Bucket([]byte(bucket)).Stats().KeyN
		return nil
	})
	return n, err
}

// WatchReadsForTest is how often WatchActive has read the active pointer.
func WatchReadsForTest() int64 { return watchReads.Load() }

// StampTxid is the committed transaction id a stamp carries.
func StampTxid(s Stamp) uint64 { return s.txid }

// MetaForTest is what the meta page bbolt reads the file at path by says:
// its page size, its number of pages and its root bucket's page.
func MetaForTest(path string) (pageSize int64, pages, root uint64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, 0, err
	}
	m, err := pickMeta(f, fi.Size())
	return int64(m.pageSize), m.hwm, m.root, err
}

// SetClockForTest makes now the store's clock until restore is called.
func SetClockForTest(now func() time.Time) (restore func()) {
	old := clock
	clock = now
	return func() { clock = old }
}

// WatchKindForTest names how WatchActive watches the bbolt store file
// in this build: inotify, kqueue or poll.
const WatchKindForTest = watchKind

// ForgetUntrustedForTest removes the list of untrusted releases, as a home
// written before the list existed has none.
func ForgetUntrustedForTest(s *Store) error {
	return s.update(func(tx txn) error { return tx.Bucket(bucketMeta).Delete(keyUntrusted) })
}

// SetTermsVersionForTest makes publishes write and reuse search terms as
// analyser version v would, until the test ends.
func SetTermsVersionForTest(t interface{ Cleanup(func()) }, v uint64) {
	old := termsVersion
	termsVersion = v
	t.Cleanup(func() { termsVersion = old })
}

// SearchKeyForTest is the key in bucket "gens" of an endpoint's postings
// block for term in revision n.
func SearchKeyForTest(s *Store, n uint64, endpoint, term string) (key string, err error) {
	err = s.ViewRevision(n, func(ix *Index) error {
		key = string(genKey(ix.gen, tagSearch, []byte(endpoint), []byte{0}, []byte(term)))
		return nil
	})
	return key, err
}

// PageForTest reads the raw record of list page i of endpoint in revision
// n, and the key of its bodies' object ("" in the older shape).
func PageForTest(s *Store, n uint64, endpoint string, i int) (key string, record []byte, object string, err error) {
	err = s.ViewRevision(n, func(ix *Index) error {
		k := genKey(ix.gen, tagPage, []byte(endpoint), []byte{0}, itob(uint64(i)))
		record = clone(ix.gens.Get(k))
		key = string(k)
		if _, bodies, _ := decodePage(record); bodies != "" {
			object = string(objPage) + bodies
		}
		return nil
	})
	return key, record, object, err
}

// PageRecordForTest is a page record of the same tools as record, naming
// the page object of bodies (none: the shape written before page objects),
// and that object's key and content.
func PageRecordForTest(record []byte, bodies ...[]byte) (out []byte, key string, object []byte) {
	entries, _, _ := decodePage(record)
	if bodies == nil {
		return encodePage(entries, ""), "", nil
	}
	for _, b := range bodies {
		object = appendPageBodies(object, b)
	}
	k := objectKey(objPage, object)
	return encodePage(entries, string(k[1:])), string(k), object
}
