package store

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// dump is everything a view can see of a store: every bucket, key and
// value in order, walked forwards and backwards, plus seeks and gets.
func dump(t *testing.T, tx txn, probes [][]byte) string {
	t.Helper()
	var out bytes.Buffer
	err := tx.ForEach(func(name []byte, b bucket) error {
		fmt.Fprintf(&out, "bucket %q seq %d\n", name, b.Sequence())
		n := 0
		if err := b.ForEach(func(k, v []byte) error {
			n++
			fmt.Fprintf(&out, " %x=%x\n", k, v)
			return nil
		}); err != nil {
			return err
		}
		c := b.Cursor()
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			fmt.Fprintf(&out, " <%x=%x\n", k, v)
		}
		k, _ := c.First()
		fmt.Fprintf(&out, " first %x\n", k)
		for _, p := range probes {
			k, v := c.Seek(p)
			fmt.Fprintf(&out, " seek %x: %x=%x", p, k, v)
			k, v = c.Next()
			fmt.Fprintf(&out, " then %x=%x", k, v)
			k, v = c.Prev()
			fmt.Fprintf(&out, " back %x=%x", k, v)
			k, v = c.Prev()
			fmt.Fprintf(&out, " back %x=%x get %x\n", k, v, b.Get(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestSnapshotReadsSeeWhatBboltSees(t *testing.T) {
	s := New(t.TempDir())
	r := rand.New(rand.NewPCG(1, 2))
	var probes [][]byte
	// Buckets big (several levels, overflow values), small (inline) and
	// empty, and keys that are nested buckets.
	if err := s.update(func(tx txn) error {
		big, err := tx.CreateBucketIfNotExists([]byte("zbig"))
		if err != nil {
			return err
		}
		for i := range 20000 {
			k := fmt.Appendf(nil, "k%07d", r.IntN(1_000_000))
			v := make([]byte, r.IntN(200))
			if i%1000 == 0 {
				v = make([]byte, 9000+r.IntN(20000))
			}
			for j := range v {
				v[j] = byte(r.Uint32())
			}
			if err := big.Put(k, v); err != nil {
				return err
			}
			if i%997 == 0 {
				probes = append(probes, k, append(k[:len(k):len(k)], 0), k[:len(k)-1])
			}
		}
		small, err := tx.CreateBucketIfNotExists([]byte("small"))
		if err != nil {
			return err
		}
		small.Put([]byte("a"), []byte("1"))
		small.Put([]byte("b"), nil)
		small.NextSequence()
		_, err = tx.CreateBucketIfNotExists([]byte("empty"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// nested buckets, straight through bbolt
	db, err := bolt.Open(s.path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("small"))
		nb, err := b.CreateBucket([]byte("nested"))
		if err != nil {
			return err
		}
		if st := tx.Bucket([]byte("zbig")).Stats(); st.Depth < 3 || st.LeafOverflowN == 0 {
			t.Errorf("the big bucket is %d levels deep, %d overflow pages: too small to test", st.Depth, st.LeafOverflowN)
		}
		if st := b.Stats(); st.InlineBucketN == 0 {
			t.Error("no inline bucket")
		}
		return nb.Put([]byte("x"), []byte("y"))
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	probes = append(probes, []byte(""), []byte("a"), []byte("nested"), []byte("zzzz"), []byte("k"))

	var want, got string
	if _, err := s.view(func(tx txn) error { want = dump(t, tx, probes); return nil }); err != nil {
		t.Fatal(err)
	}
	snap := false
	ok, err := boltFile{s}.snapshotView(func(tx txn) error {
		_, snap = tx.(*snapTx)
		got = dump(t, tx, probes)
		return nil
	})
	if !ok || err != nil || !snap {
		t.Fatalf("snapshot view: ok %v, err %v, snapshot %v", ok, err, snap)
	}
	if got != want {
		t.Fatalf("the snapshot read differs from bbolt's (%d vs %d bytes)", len(got), len(want))
	}
}

// A commit during a snapshot view makes it unusable: the view runs again
// through bbolt, and what it returns is from that run.
func TestSnapshotReadsFallBackAfterACommit(t *testing.T) {
	s := New(t.TempDir())
	put := func(v string) {
		t.Helper()
		if err := PokeForTest(s, "meta", "probe", []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	put("one")
	s.SnapshotReads()
	var runs []string
	var seen string
	if _, err := s.view(func(tx txn) error {
		_, snap := tx.(*snapTx)
		seen = string(tx.Bucket(bucketMeta).Get([]byte("probe")))
		runs = append(runs, fmt.Sprintf("%v:%s", snap, seen))
		if snap {
			put("two")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(runs) != "[true:one false:two]" || seen != "two" {
		t.Fatalf("runs %v, seen %q", runs, seen)
	}
	// Unchanged: one run, on the snapshot.
	runs = nil
	s.view(func(tx txn) error {
		_, snap := tx.(*snapTx)
		runs = append(runs, fmt.Sprintf("%v:%s", snap, tx.Bucket(bucketMeta).Get([]byte("probe"))))
		return nil
	})
	if fmt.Sprint(runs) != "[true:two]" {
		t.Fatalf("runs %v", runs)
	}
}

// A damaged page never reaches the caller as data: the view falls back to
// bbolt, which reports the file.
func TestSnapshotReadsRefuseABadPage(t *testing.T) {
	s := New(t.TempDir())
	if err := PokeForTest(s, "meta", "probe", bytes.Repeat([]byte("x"), 100)); err != nil {
		t.Fatal(err)
	}
	ok, _ := boltFile{s}.snapshotView(func(tx txn) error {
		tx.(*snapTx).m.hwm = 2 // every page is past the end now
		if tx.Bucket(bucketMeta) != nil {
			t.Error("a bucket was read past the state's last page")
		}
		return nil
	})
	if ok {
		t.Fatal("a view that read a bad page was trusted")
	}
	if _, err := os.Stat(filepath.Join(s.home, DBName)); err != nil {
		t.Fatal(err)
	}
}

// TestSnapshotKeepsLargeValues: a value over a page (a revision's header)
// is read from the file once per committed state, as branch pages are;
// what is kept stays within its bound and goes with the state.
func TestSnapshotKeepsLargeValues(t *testing.T) {
	s := New(t.TempDir())
	values := map[string][]byte{}
	if err := s.update(func(tx txn) error {
		b, err := tx.CreateBucketIfNotExists([]byte("zlarge"))
		if err != nil {
			return err
		}
		for i := range 40 {
			k, v := fmt.Sprintf("k%02d", i), bytes.Repeat([]byte{byte('a' + i%26)}, 40<<10)
			values[k] = v
			if err := b.Put([]byte(k), v); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	read := func(keys ...string) {
		t.Helper()
		ok, err := boltFile{s}.snapshotView(func(tx txn) error {
			for _, k := range keys {
				if got := tx.Bucket([]byte("zlarge")).Get([]byte(k)); !bytes.Equal(got, values[k]) {
					return fmt.Errorf("%s: %d bytes, want %d", k, len(got), len(values[k]))
				}
			}
			return nil
		})
		if !ok || err != nil {
			t.Fatalf("snapshot view: %v %v", ok, err)
		}
	}
	kept := func() (large, bytes int) {
		c := &s.snapPages
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, p := range c.pages {
			if len(p) > 4096 {
				large++
			}
		}
		return large, c.bytes
	}
	read("k00")
	if n, _ := kept(); n != 1 {
		t.Fatalf("%d large values kept after reading one", n)
	}
	read("k00") // from what is kept: the same bytes
	var all []string
	for k := range values {
		all = append(all, k)
	}
	read(all...)
	read(all...)
	if n, b := kept(); b > snapPagesBytes || n == 0 || n == len(values) {
		t.Errorf("%d of %d large values kept, %d bytes, bound %d", n, len(values), b, snapPagesBytes)
	}
	if err := PokeForTest(s, "meta", "probe", []byte("x")); err != nil {
		t.Fatal(err)
	}
	read("k01")
	if n, _ := kept(); n != 1 {
		t.Errorf("%d large values kept after a commit and one read, want 1", n)
	}
	// A value read once (a list page's bodies) is not kept.
	if ok, err := (boltFile{s}).snapshotView(func(tx txn) error {
		tx.(transientReader).transient(true)
		defer tx.(transientReader).transient(false)
		if got := tx.Bucket([]byte("zlarge")).Get([]byte("k02")); !bytes.Equal(got, values["k02"]) {
			return fmt.Errorf("k02: %d bytes", len(got))
		}
		return nil
	}); !ok || err != nil {
		t.Fatalf("snapshot view: %v %v", ok, err)
	}
	if n, _ := kept(); n != 1 {
		t.Errorf("%d large values kept after one read once, want 1 (the one before)", n)
	}
}
