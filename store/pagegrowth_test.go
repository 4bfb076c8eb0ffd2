package store_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rukh-dev/rukh/store"
)

// publishNamed publishes one endpoint "local" listing a tool per command
// name, each with a body of bodySize bytes made from its name and version;
// the tool's name carries the revision, as compact names do.
func publishNamed(t *testing.T, s *store.Store, names []string, bodySize int, version func(name string) int) {
	t.Helper()
	publishTools(t, s, names, bodySize, version, func(id, n string) string { return n + "__" + id })
}

// compactName is a tool name made as a compact one is: the command's
// first 16 characters, '.' as '_', then "__" and 24 hex digits of a hash
// of the revision and the command.
func compactName(id, cmd string) string {
	sum := sha256.Sum256([]byte(id + "\x00" + cmd))
	return strings.ReplaceAll(cmd[:min(len(cmd), 16)], ".", "_") + "__" + hex.EncodeToString(sum[:])[:24]
}

// publishTools is publishNamed with the tool names nameOf(revision id,
// command) makes, put in the endpoint's tool order.
func publishTools(t *testing.T, s *store.Store, names []string, bodySize int, version func(name string) int, nameOf func(id, cmd string) string) {
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
		type tool struct{ name, cmd, body string }
		tools := make([]tool, len(names))
		for i, n := range names {
			tools[i] = tool{nameOf(id, n), n, bodies[i]}
		}
		slices.SortFunc(tools, func(a, b tool) int {
			if store.ToolBeforeForTest(a.name, a.cmd, b.name, b.cmd) {
				return -1
			}
			return 1
		})
		for _, tl := range tools {
			if err := w.PutTool(tl.name, tl.cmd, "p@1.0.0", decl, tl.body, "", bodySize+len(tl.name)+10, true); err != nil {
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
	// Commands of one package share their compact names' slug, so only
	// the fingerprint, new in every revision, tells their names apart.
	shared := make([]string, n)
	for i := range shared {
		shared[i] = fmt.Sprintf("kubernetes.grp%02d.command-%03d", i/100, i%100)
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
	t.Run("unchanged, slugs shared under compact names", func(t *testing.T) {
		s := mustStore(t)
		publishTools(t, s, shared, bodySize, unchanged, compactName)
		pages, size, err := store.ObjectsForTest(s, 'g')
		if err != nil {
			t.Fatal(err)
		}
		publishTools(t, s, shared, bodySize, unchanged, compactName)
		pages2, size2, err := store.ObjectsForTest(s, 'g')
		if err != nil {
			t.Fatal(err)
		}
		if pages2 != pages || size2 != size {
			t.Errorf("an unchanged republish added %d page objects of %d bytes to %d of %d bytes; want none", pages2-pages, size2-size, pages, size)
		}
	})
}
