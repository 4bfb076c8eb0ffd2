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
		{"example.notes.list", []string{"exampl", "note", "list"}},
		{"getHTTPStatus", []string{"get", "http", "status", "gethttpstatus"}},
		{"addTag", []string{"add", "tag", "addtag"}},
		{"HTTPServer", []string{"http", "server", "httpserver"}},
		{"ipv4 v2 base64", []string{"ipv4", "v2", "base64"}},
		{"page 2 of 10", []string{"page", "2", "10"}},
		{"x y 7", []string{"7"}},
		{"Zoë", []string{"zoe"}},
		{"ZOË's café", []string{"zoe", "cafe"}},
		{"naïve", []string{"naiv"}},
		{"Straße", []string{"strass"}},
		{"Zoe\u0308", []string{"zoe"}},                     // a combining mark on a Latin letter goes too
		{"Zoe\u0308Tag", []string{"zoe", "tag", "zoetag"}}, // and does not hide the case change after it
		{"कार्य सूची", []string{"कार्य", "सूची"}},          // Devanagari: vowel signs and virama stay in the word
		{"নাম ঠিকানা", []string{"নাম", "ঠিকানা"}},          // Bengali
		{"தமிழ் பெயர்", []string{"தமிழ்", "பெயர்"}},        // Tamil
		{"ที่อยู่ อีเมล", []string{"ที่อยู่", "อีเมล"}},    // Thai: tone marks and vowels above stay
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

func TestStem(t *testing.T) {
	for _, group := range [][]string{
		{"tag", "tags", "tagged", "tagging"},
		{"add", "adds", "added", "adding"},
		{"archive", "archives", "archived", "archiving"},
		{"create", "creates", "created", "creating"},
		{"update", "updates", "updated", "updating"},
		{"delete", "deletes", "deleted", "deleting"},
		{"name", "names", "named", "naming"},
		{"note", "notes", "noted"},
		{"file", "files", "filed"},
		{"list", "lists", "listed", "listing"},
		{"open", "opens", "opened", "opening"},
		{"run", "runs", "running"},
		{"entry", "entries"},
		{"box", "boxes"},
		{"match", "matches", "matched", "matching"},
		{"class", "classes"},
		{"message", "messages"},
		{"type", "types"},
	} {
		want := Stem(group[0])
		for _, w := range group[1:] {
			if got := Stem(w); got != want {
				t.Errorf("Stem(%q) = %q, Stem(%q) = %q: want them the same", w, got, group[0], want)
			}
		}
	}
	for w, want := range map[string]string{
		"status": "status", "analysis": "analysis", "string": "string", "spring": "spring", "need": "need",
		"speed": "speed", "bring": "bring", "red": "red", "v2": "v2", "café": "café", "ipv4": "ipv4",
	} {
		if got := Stem(w); got != want {
			t.Errorf("Stem(%q) = %q, want it unchanged", w, got)
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

// The ASCII path cuts words as the path for any script does.
func TestWordASCIIAsRunes(t *testing.T) {
	const alphabet = "aZ9_-bYx0eSsIiNgEDT"
	words := []string{"getHTTPStatus", "addTag", "to_address", "ABC", "a", "_", "--x--", "Zoe", "v2Beta", "HTTP2Server", "the", "entries", "named_ID", "x-Y_z"}
	seed := uint32(1)
	for range 2000 {
		n := 1 + int(seed%12)
		b := make([]byte, n)
		for i := range b {
			seed = seed*1664525 + 1013904223
			b[i] = alphabet[seed>>16%uint32(len(alphabet))]
		}
		words = append(words, string(b))
	}
	for _, w := range words {
		var got, want []string
		wordASCII(w, func(s string) { got = append(got, s) })
		wordRunes(w, func(s string) { want = append(want, s) })
		if !slices.Equal(got, want) {
			t.Errorf("%q: ASCII path %q, any script %q", w, got, want)
		}
	}
}
