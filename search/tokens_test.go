package search

import (
	"slices"
	"testing"
)

func TestTokens(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"add_tag", []string{"add", "tag", "addtag"}},
		{"add-tag", []string{"add", "tag", "addtag"}},
		{"notes.add-tag", []string{"note", "add", "tag", "addtag"}},
		{"example.notes.list", []string{"example", "note", "list"}},
		{"getHTTPStatus", []string{"get", "http", "status", "gethttpstatus"}},
		{"addTag", []string{"add", "tag", "addtag"}},
		{"HTTPServer", []string{"http", "server", "httpserver"}},
		{"ipv4 v2 base64", []string{"ipv4", "v2", "base64"}},
		{"page 2 of 10", []string{"page", "2", "10"}},
		{"x y 7", []string{"7"}},
		{"Zoë", []string{"zoe"}},
		{"ZOË's café", []string{"zoe", "cafe"}},
		{"naïve", []string{"naive"}},
		{"Straße", []string{"strasse"}},
		{"日本語", []string{"日本語"}},
		{"日本語のテキスト", []string{"日本語のテキスト"}},
		{"Ελληνικά ΚΕΊΜΕΝΑ", []string{"ελληνικά", "κείμενα"}}, // only Latin letters lose diacritics,
		{"the tags of a note", []string{"tag", "note"}},
		{"Entries, boxes; matches & classes", []string{"entry", "box", "match", "class"}},
		{"status analysis", []string{"status", "analysis"}},
		{"tagging tagged tags", []string{"tag", "tag", "tag"}},
		{"added adding adds", []string{"add", "add", "add"}},
		{"running string spring", []string{"run", "string", "spring"}},
		{"filled filling", []string{"fill", "fill"}},
		{"--__..", nil},
		{"a_b", []string{"ab"}},
		{"\xff\xfeabc", []string{"abc"}},
	} {
		if got := Tokens(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("Tokens(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A query and a document written differently meet on the same terms.
func TestTokensMeet(t *testing.T) {
	for _, pair := range [][2]string{
		{"add_tag", "addTag"}, {"add-tag", "ADD_TAG"}, {"Zoë", "zoe"}, {"naive", "NAÏVE"},
		{"list notes", "notes.list"}, {"tagging", "tags"},
	} {
		a, b := Tokens(pair[0]), Tokens(pair[1])
		slices.Sort(a)
		slices.Sort(b)
		if !slices.Equal(a, b) {
			t.Errorf("%q → %q, %q → %q: want the same terms", pair[0], a, pair[1], b)
		}
	}
}
