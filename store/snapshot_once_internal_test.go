package store

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"
	"unsafe"
)

// TestSnapshotOnceCachesNoReusedBuffer: pages a snapshot keeps for other
// views are never the buffer of values read once, even branch pages over
// one page, which keys over a few KiB make.
func TestSnapshotOnceCachesNoReusedBuffer(t *testing.T) {
	s := New(filepath.Join(t.TempDir(), "home"))
	defer s.Close()
	key := func(i int) []byte { return append([]byte(fmt.Sprintf("%06d", i)), bytes.Repeat([]byte("k"), 5000)...) }
	const n = 400
	if err := s.update(func(tx txn) error {
		b := tx.Bucket(bucketObjects)
		for i := range n {
			if err := b.Put(key(i), bytes.Repeat([]byte("v"), 6000)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s.SnapshotReads()
	snapshot := false
	if _, err := s.view(func(tx txn) error {
		st, ok := tx.(*snapTx)
		if !ok {
			return nil
		}
		snapshot = true
		st.transient(true)
		b := tx.Bucket(bucketObjects)
		for i := range n {
			if v := b.Get(key(i)); len(v) != 6000 {
				t.Fatalf("key %d: %d bytes", i, len(v))
			}
		}
		if st.onceBuf == nil {
			t.Fatal("no value was read into the buffer of values read once")
		}
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(st.onceBuf)))
		hi := lo + uintptr(cap(st.onceBuf))
		st.cache.mu.Lock()
		defer st.cache.mu.Unlock()
		branches := 0
		for id, p := range st.cache.pages {
			if node(p).isBranch() && len(p) > st.m.pageSize {
				branches++
			}
			if at := uintptr(unsafe.Pointer(unsafe.SliceData(p))); at >= lo && at < hi {
				t.Errorf("kept page %d lies in the buffer of values read once", id)
			}
		}
		if branches == 0 {
			t.Error("no branch page over one page was read: the test shows nothing")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !snapshot {
		t.Fatal("the view was not a snapshot read")
	}
}
