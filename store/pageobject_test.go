package store_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/rukh-dev/rukh/store"
)

// TestPageObjects: a list page is its record and one object of its bodies;
// a record of the older shape, without one, still lists the same tools;
// a missing or wrong page object is reported by the read and the check.
func TestPageObjects(t *testing.T) {
	type listed struct {
		names  []string
		bodies []string
	}
	page := func(s *store.Store, n uint64) (listed, int64, error) {
		var l listed
		before := s.RecordsRead()
		err := s.ViewRevision(n, func(ix *store.Index) error {
			return ix.Page("local", 1, func(name string, body []byte) error {
				l.names, l.bodies = append(l.names, name), append(l.bodies, string(body))
				return nil
			})
		})
		return l, s.RecordsRead() - before, err
	}
	cases := []struct {
		name string
		// poke changes the page's records: record is its page record, and
		// want its bodies in order. The revision header is read, then
		// the page.
		poke      func(t *testing.T, s *store.Store, key string, record []byte, object string, want []string)
		readErr   string // "": the page reads as published
		reads     int64  // records read by a page, once poked
		checkErrs string // "": the store checks
	}{
		{name: "as published", poke: func(*testing.T, *store.Store, string, []byte, string, []string) {}, reads: 1 + 2},
		{name: "a page and its tools in the shape before page objects", reads: -1, // 1 + 1 + a body each
			poke: func(t *testing.T, s *store.Store, key string, record []byte, object string, want []string) {
				if err := store.OldShapePageForTest(s, 1, "local", 1); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "page object missing", readErr: "tool page's bodies is unreadable", checkErrs: "tool page's bodies is unreadable",
			poke: func(t *testing.T, s *store.Store, key string, record []byte, object string, want []string) {
				poke(t, s, "objects", object, nil)
			}},
		{name: "page object with a body short", readErr: "tool page is unreadable", checkErrs: "is unreadable",
			poke: func(t *testing.T, s *store.Store, key string, record []byte, object string, want []string) {
				poke(t, s, "objects", object, store.PageObjectForTest(bytesOf(want[:len(want)-1])...))
			}},
		{name: "page object of other bodies", reads: 1 + 2, checkErrs: "is not the one its record names",
			poke: func(t *testing.T, s *store.Store, key string, record []byte, object string, want []string) {
				other := slices.Clone(want)
				slices.Reverse(other)
				poke(t, s, "objects", object, store.PageObjectForTest(bytesOf(other)...))
			}},
		{name: "page record naming another page's object", readErr: "tool page is unreadable", checkErrs: "is not the one of the bodies its record names",
			poke: func(t *testing.T, s *store.Store, key string, record []byte, object string, want []string) {
				_, _, other, err := store.PageForTest(s, 1, "local", 3)
				if err != nil {
					t.Fatal(err)
				}
				poke(t, s, "gens", key, store.PageRecordNamingForTest(record, other))
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := mustStore(t)
			r := publishIndexed(t, s, 100, 200)
			want, _, err := page(s, r.Number)
			if err != nil || len(want.names) < 12 || !strings.HasPrefix(want.bodies[0], strings.TrimSuffix(want.names[0], "__r1")) {
				t.Fatalf("page 1 as published: %v, %v", want.names, err)
			}
			key, record, object, err := store.PageForTest(s, r.Number, "local", 1)
			if err != nil || object == "" {
				t.Fatalf("page 1 names no object: %q, %v", object, err)
			}
			content, err := store.PeekForTest(s, "objects", object)
			if err != nil {
				t.Fatal(err)
			}
			// mustStore checks the store after the test: put back what
			// was broken.
			defer func() { poke(t, s, "gens", key, record); poke(t, s, "objects", object, content) }()
			c.poke(t, s, key, record, object, want.bodies)
			got, reads, err := page(s, r.Number)
			switch {
			case c.readErr != "":
				if err == nil || !strings.Contains(err.Error(), c.readErr) {
					t.Errorf("page read: %v, want an error saying %q", err, c.readErr)
				}
			case err != nil || !slices.Equal(got.names, want.names) || !slices.Equal(got.bodies, want.bodies) && c.checkErrs == "":
				t.Errorf("page read: %v, %v; want %v", got.names, err, want.names)
			case c.reads >= 0 && reads != c.reads || c.reads < 0 && reads != int64(2+len(want.names)):
				t.Errorf("page read %d records, want %d (-1: one per body and two)", reads, c.reads)
			}
			err = s.Check()
			if c.checkErrs == "" && err != nil || c.checkErrs != "" && (err == nil || !strings.Contains(err.Error(), c.checkErrs)) {
				t.Errorf("check: %v, want %q", err, c.checkErrs)
			}
		})
	}
}

func poke(t *testing.T, s *store.Store, bucket, key string, v []byte) {
	t.Helper()
	if err := store.PokeForTest(s, bucket, key, v); err != nil {
		t.Fatal(err)
	}
}

func bytesOf(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}
