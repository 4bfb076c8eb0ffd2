package store

import (
	"fmt"
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

// PageMinToolsForTest and PageCutForTest are the writer's rule for where a
// list page ends, besides its bounds.
const PageMinToolsForTest = pageMinTools

var PageCutForTest = pageCut

// ToolBeforeForTest is the endpoint's tool order the writer takes.
var ToolBeforeForTest = toolBefore

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

// PageObjectForTest is the content of a page object of bodies.
func PageObjectForTest(bodies ...[]byte) []byte { return encodePageObject(bodies) }

// PageRecordNamingForTest is record naming the page object of key
// instead of its own.
func PageRecordNamingForTest(record []byte, key string) []byte {
	entries, _, _ := decodePage(record)
	return encodePage(entries, key[1:])
}

// OldShapePageForTest turns list page i of endpoint in revision n into the
// shape written before page objects: its record names none, its tools'
// records no place in one, and each body is an object of its own.
func OldShapePageForTest(s *Store, n uint64, endpoint string, i int) error {
	var entries []pageEntry
	var obj []byte
	var key []byte
	var tools [][2][]byte
	err := s.ViewRevision(n, func(ix *Index) error {
		key = genKey(ix.gen, tagPage, []byte(endpoint), []byte{0}, itob(uint64(i)))
		var bodies string
		var ok bool
		entries, bodies, ok = decodePage(ix.gens.Get(key))
		if !ok || bodies == "" {
			return fmt.Errorf("page %d: no page object", i)
		}
		obj = clone(ix.object.Get(append([]byte{objPage}, bodies...)))
		for _, e := range entries {
			t, _, err := ix.Tool(endpoint, e.name)
			if err != nil {
				return err
			}
			t.page, t.slot = "", 0
			tools = append(tools, [2][]byte{genKey(ix.gen, tagTool, []byte(endpoint), []byte{0}, []byte(e.name)), t.encode()})
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.update(func(tx txn) error {
		if _, err := pageBodies(obj, len(entries), func(j int, body []byte) error {
			return tx.Bucket(bucketObjects).Put(append([]byte{objBody}, entries[j].body...), clone(body))
		}); err != nil {
			return err
		}
		for _, t := range tools {
			if err := tx.Bucket(bucketGens).Put(t[0], t[1]); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketGens).Put(key, encodePage(entries, ""))
	})
}

// ObjectsForTest counts the objects of one kind and their bytes (keys and
// values).
func ObjectsForTest(s *Store, kind byte) (n int, size int64, err error) {
	_, err = s.view(func(tx txn) error {
		return tx.Bucket(bucketObjects).ForEach(func(k, v []byte) error {
			if len(k) > 0 && k[0] == kind {
				n, size = n+1, size+int64(len(k)+len(v))
			}
			return nil
		})
	})
	return n, size, err
}
