package store

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// failAfter fails every commit after its first n.
type failAfter struct {
	backend
	n int
}

func (f *failAfter) update(fn func(tx txn) error) error {
	if f.n <= 0 {
		return errors.New("injected commit failure")
	}
	f.n--
	return f.backend.update(fn)
}

// spilledWriter has 3,000 objects spilled to its scratch file.
func spilledWriter(t *testing.T, s *Store) *IndexWriter {
	t.Cleanup(func() { s.Close() })
	w, err := s.newIndexWriter()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		if _, err := w.object(objDecl, []byte(fmt.Sprintf("%d %s", i, strings.Repeat("x", 200)))); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func goroutinesSettle(base int) int {
	for range 50 {
		if runtime.NumGoroutine() <= base {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return runtime.NumGoroutine()
}

// TestPutObjectsErrors: the objects a publish ends with, read from the
// scratch file beside the commits, are all written whole; a read error or
// a failed commit ends the writing with an error, no goroutine left, and
// the store still checks.
func TestPutObjectsErrors(t *testing.T) {
	old := chunkBytes
	chunkBytes = 8 << 10
	defer func() { chunkBytes = old }()
	base := runtime.NumGoroutine()

	// a read error
	s := New(t.TempDir())
	w := spilledWriter(t, s)
	if err := w.spillBuf.Flush(); err != nil {
		t.Fatal(err)
	}
	w.spill.Close()
	if err := w.putObjects(); err == nil || !strings.Contains(err.Error(), "scratch") {
		t.Fatalf("read error: %v", err)
	}
	if g := goroutinesSettle(base); g > base {
		t.Errorf("goroutines %d > %d after read error", g, base)
	}

	// a commit error after a few chunks
	for _, n := range []int{0, 1, 3} {
		s := New(t.TempDir())
		w := spilledWriter(t, s)
		s.be = &failAfter{backend: s.be, n: n}
		if err := w.putObjects(); err == nil {
			t.Fatalf("commit error %d: nil", n)
		}
		w.closeSpill()
		if g := goroutinesSettle(base); g > base {
			t.Errorf("goroutines %d > %d after commit error %d", g, base, n)
		}
		s.be = s.be.(*failAfter).backend
		if n > 0 {
			if err := s.Check(); err != nil {
				t.Errorf("check after commit error %d: %v", n, err)
			}
		}
	}
	// no error: every object there, whole
	s = New(t.TempDir())
	w = spilledWriter(t, s)
	if err := w.putObjects(); err != nil {
		t.Fatal(err)
	}
	cnt := 0
	if _, err := s.view(func(tx txn) error {
		return tx.Bucket(bucketObjects).ForEach(func(k, v []byte) error {
			if !strings.HasSuffix(string(v), strings.Repeat("x", 200)) {
				t.Errorf("object %x damaged: %q", k, v)
			}
			cnt++
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if cnt != 3000 {
		t.Errorf("%d objects, want 3000", cnt)
	}
}
