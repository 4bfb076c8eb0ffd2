package store_test

import (
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
)

// damagedHome is a home whose rukh.db has branch pages (releases with
// manifests of a few KiB each).
func damagedHome(t *testing.T) *store.Store {
	t.Helper()
	s := store.New(t.TempDir())
	for i := range 60 {
		r := rel("pkg"+strings.Repeat("x", i%7), "1.0."+string(rune('0'+i%10))+string(rune('0'+i/10)))
		r.Manifest = []byte(`{"pad":"` + strings.Repeat("m", 3000) + `"}`)
		mustPut(t, s, r)
	}
	return s
}

func overwrite(t *testing.T, path string, off, n int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(1, uint64(off)))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// TestDamagedStoreFile: a file cut short is refused before bbolt maps it,
// by the bbolt reads and by the pread ones; pages of garbage are the same
// damaged-store error, never a panic or a fault.
func TestDamagedStoreFile(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, path string, ps int64, pages, root uint64)
		msg    string
	}{
		{"cut by half its pages", func(t *testing.T, path string, ps int64, pages, _ uint64) {
			os.Truncate(path, int64(pages)*ps/2)
		}, "it was cut short"},
		{"cut by one page", func(t *testing.T, path string, ps int64, pages, _ uint64) {
			os.Truncate(path, int64(pages-1)*ps)
		}, "it was cut short"},
		{"cut to one page", func(t *testing.T, path string, ps int64, _, _ uint64) { os.Truncate(path, ps) }, "damaged"},
		{"cut to a page and a half", func(t *testing.T, path string, ps int64, _, _ uint64) { os.Truncate(path, ps+ps/2) }, "damaged"},
		{"cut to a few bytes", func(t *testing.T, path string, _ int64, _, _ uint64) { os.Truncate(path, 40) }, "neither of its meta pages is valid"},
		{"garbage over the root page", func(t *testing.T, path string, ps int64, _, root uint64) {
			overwrite(t, path, int64(root)*ps, ps)
		}, "reading it failed"},
		{"garbage over both meta pages", func(t *testing.T, path string, ps int64, _, _ uint64) {
			overwrite(t, path, 0, 2*ps)
		}, "neither of its meta pages is valid"},
	}
	for _, tt := range tests {
		for _, snapshot := range []bool{false, true} {
			name := tt.name
			if snapshot {
				name += "/snapshot reads"
			}
			t.Run(name, func(t *testing.T) {
				s := damagedHome(t)
				ps, pages, root, err := store.MetaForTest(s.Path())
				if err != nil {
					t.Fatal(err)
				}
				tt.damage(t, s.Path(), ps, pages, root)
				s = store.New(s.Home())
				if snapshot {
					s.SnapshotReads()
				}
				s.Stamp() // reads the meta pages; must not fault either
				_, err = s.Releases()
				if !errors.Is(err, store.ErrDamaged) {
					t.Fatalf("Releases: %v, want the damaged-store error", err)
				}
				wantCode(t, err, kernel.CodeInternal, tt.msg)
				if !strings.Contains(kernel.ErrorHint(err), "rukh doctor") {
					t.Errorf("hint %q does not point to rukh doctor", kernel.ErrorHint(err))
				}
				if _, err := s.PutRelease(rel("new", "1.0.0")); !errors.Is(err, store.ErrDamaged) {
					t.Errorf("PutRelease: %v, want the damaged-store error", err)
				}
				if err := s.Check(); !errors.Is(err, store.ErrDamaged) {
					t.Errorf("Check: %v, want the damaged-store error", err)
				}
			})
		}
	}
}

// TestStoreFileLengthCheck: the length check takes what the meta page
// counts, not what the file happens to have: the room bbolt grows the file
// by, past its last page, may go; one byte of its pages may not.
func TestStoreFileLengthCheck(t *testing.T) {
	s := damagedHome(t)
	ps, pages, _, err := store.MetaForTest(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(s.Path())
	if fi.Size() <= int64(pages)*ps {
		t.Fatalf("the file (%d bytes) has no room past its %d pages", fi.Size(), pages)
	}
	if err := os.Truncate(s.Path(), int64(pages)*ps); err != nil {
		t.Fatal(err)
	}
	if _, err := store.New(s.Home()).Releases(); err != nil {
		t.Fatalf("a file of exactly its pages: %v", err)
	}
	if err := store.New(s.Home()).Check(); err != nil {
		t.Fatalf("Check of a file of exactly its pages: %v", err)
	}
	if err := os.Truncate(s.Path(), int64(pages)*ps-1); err != nil {
		t.Fatal(err)
	}
	_, err = store.New(s.Home()).Releases()
	wantCode(t, err, kernel.CodeInternal, "it was cut short")
}

// TestCheckFindsDamagedPages: garbage behind an intact page header, which
// bbolt would follow anywhere, is found by Check before bbolt's own checker
// (in a goroutine where a fault cannot be recovered) runs; one bad meta
// page is named too.
func TestCheckFindsDamagedPages(t *testing.T) {
	for _, tt := range []struct {
		name string
		off  func(ps int64, pages, root uint64) (int64, int64)
		msg  string
	}{
		{"every page past the metas", func(ps int64, pages, _ uint64) (int64, int64) {
			return 2 * ps, int64(pages-2) * ps
		}, "damaged"},
		{"the root page's elements", func(ps int64, _, root uint64) (int64, int64) {
			return int64(root)*ps + 16, ps - 16
		}, "is not a page of this file's state, or is malformed"},
		{"meta page 0", func(ps int64, _, _ uint64) (int64, int64) { return 0, ps }, "meta page 0 is not valid"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := damagedHome(t)
			ps, pages, root, err := store.MetaForTest(s.Path())
			if err != nil {
				t.Fatal(err)
			}
			off, n := tt.off(ps, pages, root)
			overwrite(t, s.Path(), off, n)
			err = store.New(s.Home()).Check()
			if !errors.Is(err, store.ErrDamaged) {
				t.Fatalf("Check: %v, want the damaged-store error", err)
			}
			wantCode(t, err, kernel.CodeInternal, tt.msg)
		})
	}
}
