package store

import (
	"bytes"
	"strings"
	"testing"
)

// TestOpenSharesTheHeader: opens of a revision share one decoded header,
// its profile not copied again; a header record changed in place is
// decoded afresh, and one that does not decode is reported at every open.
func TestOpenSharesTheHeader(t *testing.T) {
	s := testStore(t)
	profile := []byte(`{"profile":"` + strings.Repeat("p", 512) + `"}`)
	rev, err := s.Publish(0, func(_ uint64, id string, w *IndexWriter) (Revision, error) {
		if err := w.PutRevision(id, profile, []byte(`["rel"]`)); err != nil {
			return Revision{}, err
		}
		if err := w.PutEndpoint("local", []byte(`{"ns":"x"}`)); err != nil {
			return Revision{}, err
		}
		return Revision{Note: "indexed"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	open := func() ([]byte, error) {
		t.Helper()
		var p []byte
		_, err := s.ViewActive(func(ix *Index) error { p = ix.Profile(); return nil })
		return p, err
	}
	first, err := open()
	if err != nil || !bytes.Equal(first, profile) {
		t.Fatalf("profile %q, %v", first, err)
	}
	if again, err := open(); err != nil || &again[0] != &first[0] {
		t.Fatalf("a second open copied the profile again (%v)", err)
	}

	v, _ := s.revGens.Load(rev.Number)
	key := genKey(v.([]byte), tagHeader)
	raw, err := PeekForTest(s, string(bucketGens), string(key))
	if err != nil || raw == nil {
		t.Fatalf("header record: %v", err)
	}
	h, _ := decodeHeader(raw)
	h.Profile = []byte(`{"profile":"other"}`)
	for _, tc := range []struct {
		name    string
		record  []byte
		profile []byte // nil: reported unreadable
	}{
		{"a header that does not decode", []byte{9}, nil},
		{"the same once more", []byte{9}, nil},
		{"another header", h.encode(), h.Profile},
		{"the first again", raw, profile},
	} {
		if err := PokeForTest(s, string(bucketGens), string(key), tc.record); err != nil {
			t.Fatal(err)
		}
		got, err := open()
		switch {
		case tc.profile == nil && (err == nil || !strings.Contains(err.Error(), "index header is unreadable")):
			t.Errorf("%s: profile %q, error %v", tc.name, got, err)
		case tc.profile != nil && (err != nil || !bytes.Equal(got, tc.profile)):
			t.Errorf("%s: profile %q, error %v", tc.name, got, err)
		}
	}

	// A header larger than a handle keeps is decoded at every open.
	h.Profile = []byte(`{"profile":"` + strings.Repeat("q", sharedHeaderBytes) + `"}`)
	if err := PokeForTest(s, string(bucketGens), string(key), h.encode()); err != nil {
		t.Fatal(err)
	}
	a, errA := open()
	b, errB := open()
	switch {
	case errA != nil || errB != nil || !bytes.Equal(a, h.Profile) || !bytes.Equal(b, h.Profile):
		t.Errorf("a large header: %v, %v", errA, errB)
	case &a[0] == &b[0]:
		t.Error("a header larger than sharedHeaderBytes is kept for the life of the handle")
	}
}
