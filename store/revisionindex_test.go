package store

import (
	"strings"
	"testing"
)

func TestRevisionIndexReadsIDAndIndex(t *testing.T) {
	many := `"releases":["h1:` + strings.Repeat(`a","h1:`, 2000) + `b"]`
	for _, tc := range []struct {
		name, raw, id, index string
		bad                  bool
	}{
		{name: "index first (written since)", raw: `{"number":7,"id":"r7","index":"0a1b","createdAt":"2026-01-01T00:00:00Z",` + many + `,"bindingSize":0,"bindingSha256":""}`, id: "r7", index: "0a1b"},
		{name: "index last (older records)", raw: `{"number":7,"id":"r7","createdAt":"2026-01-01T00:00:00Z",` + many + `,"note":"x \"index\":\"ff\"","bindingSize":0,"bindingSha256":"","index":"0a1b"}`, id: "r7", index: "0a1b"},
		{name: "schema-1 (no index)", raw: `{"number":3,"id":"r3",` + many + `,"bindingSize":10,"bindingSha256":"ab"}`, id: "r3"},
		{name: "not an object", raw: `["r3"]`, bad: true},
		{name: "index not a string", raw: `{"id":"r3","index":12}`, bad: true},
		{name: "truncated", raw: `{"id":"r3",` + many[:100], bad: true},
	} {
		id, index, err := revisionIndex([]byte(tc.raw))
		if tc.bad {
			if err == nil {
				t.Errorf("%s: no error (id %q, index %q)", tc.name, id, index)
			}
			continue
		}
		if err != nil || id != tc.id || index != tc.index {
			t.Errorf("%s: got %q, %q, %v; want %q, %q", tc.name, id, index, err, tc.id, tc.index)
		}
	}
}

// The record lists the index before the releases, so reading a revision
// never walks its releases list.
func TestRevisionRecordListsIndexBeforeReleases(t *testing.T) {
	b := string(encode(revisionRec{Number: 1, ID: "r1", Index: "0a", Releases: []string{"h1:x"}}))
	if i, j := strings.Index(b, `"index"`), strings.Index(b, `"releases"`); i < 0 || j < 0 || i > j {
		t.Fatalf("record %s: index at %d, releases at %d", b, i, j)
	}
}
