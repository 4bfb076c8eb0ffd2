package store_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/rukh-dev/rukh/store"
)

// publishNamed publishes one endpoint "local" listing a tool per command
// name, each with a body of bodySize bytes made from its name and version;
// the tool's name carries the revision, as compact names do.
func publishNamed(t *testing.T, s *store.Store, names []string, bodySize int, version func(name string) int) {
	t.Helper()
	active, err := s.Active()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Publish(active, func(_ uint64, id string, w *store.IndexWriter) (store.Revision, error) {
		if err := w.PutRevision(id, []byte(`{}`), []byte(`[]`)); err != nil {
			return store.Revision{}, err
		}
		decl, err := w.PutCommand([]byte("cmd"))
		if err != nil {
			return store.Revision{}, err
		}
		bodies := make([]string, len(names))
		for i, n := range names {
			b := fmt.Sprintf("%s v%d ", n, version(n))
			for len(b) < bodySize {
				b += fmt.Sprintf("%x", len(b)*7919+len(n))
			}
			if bodies[i], err = w.PutBody([]byte(b[:bodySize])); err != nil {
				return store.Revision{}, err
			}
		}
		if err := w.PutEndpoint("local", nil); err != nil {
			return store.Revision{}, err
		}
		for i, n := range names {
			if err := w.PutTool(n+"__"+id, n, "p@1.0.0", decl, bodies[i], "", bodySize+len(n)+10, true); err != nil {
				return store.Revision{}, err
			}
		}
		return store.Revision{Note: "growth"}, nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestPageGrowth: a republish stores, besides its records, only the page
// objects of the pages that changed: one tool added or removed anywhere,
// or one body changed, makes a page or so of new objects, not one for
// every page after it.
func TestPageGrowth(t *testing.T) {
	const n, bodySize = 2000, 1100
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("t%06d", 2*i+1)
	}
	unchanged := func(string) int { return 1 }
	cases := []struct {
		name    string
		names   []string
		version func(string) int
		pages   int // at most this many new page objects
	}{
		{"unchanged", names, unchanged, 0},
		{"one added first", append([]string{"t000000"}, names...), unchanged, 3},
		{"one added in the middle", slices.Insert(slices.Clone(names), n/2, fmt.Sprintf("t%06d", n)), unchanged, 3},
		{"one added last", append(slices.Clone(names), "u"), unchanged, 3},
		{"the first removed", names[1:], unchanged, 3},
		{"one in the middle removed", slices.Delete(slices.Clone(names), n/2, n/2+1), unchanged, 3},
		{"one body changed", names, func(name string) int {
			if name == names[n/3] {
				return 2
			}
			return 1
		}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := mustStore(t)
			publishNamed(t, s, names, bodySize, unchanged)
			pages, size, err := store.ObjectsForTest(s, 'g')
			if err != nil {
				t.Fatal(err)
			}
			publishNamed(t, s, c.names, bodySize, c.version)
			pages2, size2, err := store.ObjectsForTest(s, 'g')
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d page objects (%d bytes) before, %d (%d bytes) added", pages, size, pages2-pages, size2-size)
			// A page holds at most PageTools bodies.
			if added, grew := pages2-pages, size2-size; added > c.pages || grew > int64(c.pages*store.PageTools*(bodySize+40)) {
				t.Errorf("the republish added %d page objects of %d bytes to %d of %d bytes; want at most %d (a page each)", added, grew, pages, size, c.pages)
			}
		})
	}
}
