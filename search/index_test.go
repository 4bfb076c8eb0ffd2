package search

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
)

func doc(name string, fields ...any) Doc {
	d := Doc{Name: name}
	for i := 0; i < len(fields); i += 2 {
		d.Fields = append(d.Fields, Field{fields[i].(string), fields[i+1].(float64)})
	}
	return d
}

func names(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Name
	}
	return out
}

// The scores are BM25's, over the weighted bag: checked against the
// formula worked out by hand for a small corpus.
func TestBM25Scores(t *testing.T) {
	docs := []Doc{
		doc("a", "note note", 1.0),     // tf 2, length 2
		doc("b", "note list tag", 1.0), // tf 1, length 3
		doc("c", "tag", 3.0),           // tf 3 (weighted), length 3
	}
	ix := Build(docs)
	avg := (2.0 + 3 + 3) / 3
	bm25 := func(tf, dl, df float64) float64 {
		idf := math.Log(1 + (3-df+0.5)/(df+0.5))
		return idf * tf * (K1 + 1) / (tf + K1*(1-B+B*dl/avg))
	}
	for _, tc := range []struct {
		query string
		want  map[string]float64
	}{
		{"note", map[string]float64{"a": bm25(2, 2, 2), "b": bm25(1, 3, 2)}},
		{"tag", map[string]float64{"c": bm25(3, 3, 2), "b": bm25(1, 3, 2)}},
		{"note tag", map[string]float64{"a": bm25(2, 2, 2), "b": bm25(1, 3, 2) + bm25(1, 3, 2), "c": bm25(3, 3, 2)}},
		{"list", map[string]float64{"b": bm25(1, 3, 1)}},
		{"note note note", map[string]float64{"a": bm25(2, 2, 2), "b": bm25(1, 3, 2)}}, // a term counts once
	} {
		hits := ix.Search(tc.query, 10)
		if len(hits) != len(tc.want) {
			t.Errorf("%q: hits %v, want %v", tc.query, hits, tc.want)
			continue
		}
		for i, h := range hits {
			if w := tc.want[h.Name]; math.Abs(h.Score-w) > 1e-5 {
				t.Errorf("%q: %s scores %v, want %v", tc.query, h.Name, h.Score, w)
			}
			if i > 0 && hits[i-1].Score < h.Score {
				t.Errorf("%q: not best first: %v", tc.query, hits)
			}
		}
	}
}

// Ranking: field weights, rarity, length and exact compounds decide, ties
// go by tool order, limit cuts.
func TestRanking(t *testing.T) {
	docs := []Doc{
		doc("0-archive", "notes.archive", 3.0, "Archive a note", 2.0, "Moves a note out of the list; it can be restored.", 1.0),
		doc("1-add-tag", "notes.add-tag", 3.0, "Tag a note", 2.0, "Adds a tag to a note.", 1.0, "tag", 2.0),
		doc("2-add", "notes.add", 3.0, "Add a note", 2.0, "Adds a note with a title and tags.", 1.0, "title", 2.0),
		doc("3-list", "notes.list", 3.0, "List notes", 2.0, "Lists the notes, newest first.", 1.0),
		doc("4-send", "mail.send", 3.0, "Send an email", 2.0, "Sends an email to a recipient; a note can be attached.", 1.0, "to", 2.0, "the recipient's address", 1.0),
		doc("5-restore", "notes.restore", 3.0, "Restore a note", 2.0, "Brings an archived note back.", 1.0),
		doc("6-tie", "x.same", 3.0),
		doc("7-tie", "y.same", 3.0),
	}
	ix := Build(docs)
	for _, tc := range []struct {
		query string
		limit int
		want  []string
	}{
		{"add tag", 2, []string{"1-add-tag", "2-add"}},
		{"add-tag", 1, []string{"1-add-tag"}},
		{"tags", 3, []string{"1-add-tag", "2-add"}},
		{"email", 10, []string{"4-send"}},
		{"send mail to recipient", 1, []string{"4-send"}},
		{"archived", 2, []string{"0-archive", "5-restore"}}, // the path outweighs the description
		{"restore", 2, []string{"5-restore", "0-archive"}},
		{"newest notes", 1, []string{"3-list"}},
		{"same", 10, []string{"6-tie", "7-tie"}},
		{"SAME", 1, []string{"6-tie"}},
		{"", 10, []string{}},
		{"the of", 10, []string{}},
		{"zzz-qqq", 10, []string{}},
	} {
		if got := names(ix.Search(tc.query, tc.limit)); !slices.Equal(got, tc.want) {
			t.Errorf("%q (limit %d): %q, want %q", tc.query, tc.limit, got, tc.want)
		}
	}
	if hits := ix.Search("note", 0); len(hits) != 0 {
		t.Errorf("limit 0: %v", hits)
	}
}

// A term in more than MaxPostings tools keeps its best MaxPostings: the
// short ones, where the term weighs most.
func TestPostingsCap(t *testing.T) {
	b := NewBuilder()
	n := MaxPostings + 500
	for i := range n {
		text := "common"
		if i%2 == 1 {
			text = "common filler words here"
		}
		b.Add(doc(fmt.Sprint(i), text, 1.0))
	}
	found := false
	if err := b.Postings(func(term string, block []byte) error {
		ps, err := DecodeBlock(block)
		if err != nil {
			return err
		}
		if term != "common" {
			return nil
		}
		found = true
		if len(ps) != MaxPostings {
			t.Errorf("common: %d postings, want %d", len(ps), MaxPostings)
		}
		short := 0
		for i, p := range ps {
			if p.Doc%2 == 0 {
				short++
			}
			if i > 0 && (ps[i-1].Impact < p.Impact || ps[i-1].Impact == p.Impact && ps[i-1].Doc > p.Doc) {
				t.Fatalf("postings out of order at %d", i)
			}
		}
		if want := (n + 1) / 2; short != want {
			t.Errorf("%d short tools kept, want all %d", short, want)
		}
		return nil
	}); err != nil || !found {
		t.Fatalf("postings: %v, found %v", err, found)
	}
	if QueryTerms("a1 a2 a3 a4 a5 a6 a7 a8 a9 b1 b2 b3 b4 b5 b6 b7 b8 b9 a1"); len(QueryTerms("a1 a2 a3 a4 a5 a6 a7 a8 a9 b1 b2 b3 b4 b5 b6 b7 b8 b9")) != MaxQueryTerms {
		t.Error("a query keeps more than MaxQueryTerms terms")
	}
}

// What docs/discovery.md says of the cap: a tool outside every term's
// best MaxPostings is not found even when it has all of the query's
// terms, and is found again through a rarer one.
func TestPostingsCapDocumented(t *testing.T) {
	var docs []Doc
	for i := range 2 * MaxPostings {
		docs = append(docs, Doc{Name: fmt.Sprintf("t%05d", i), Fields: []Field{{"export report", WeightDescription}}})
	}
	docs = append(docs, Doc{Name: "long", Fields: []Field{{"billing.sync", WeightPath}, {"export report " + strings.Repeat("words ", 40), WeightDescription}}})
	ix := Build(docs)
	for _, h := range ix.Search("export report", 2*MaxPostings) {
		if h.Name == "long" {
			t.Errorf("export report: found long, outside both terms' best %d", MaxPostings)
		}
	}
	if hits := ix.Search("export report sync", 1); len(hits) != 1 || hits[0].Name != "long" {
		t.Errorf("export report sync: %v, want long through its rarer term", hits)
	}
}

// Stored bags and blocks read back, and damaged ones are errors, never a
// panic or a wrong value.
func TestDecodeDamaged(t *testing.T) {
	bag := Analyze(doc("x", "send an email to Zoë", 2.0, "notes.add-tag", 3.0))
	enc := bag.Encode()
	back, err := DecodeBag(enc)
	if err != nil || !slices.Equal(back, bag) {
		t.Fatalf("bag: %v, %v; want %v", back, err, bag)
	}
	ps := []Posting{{3, 2.5}, {0, 1}, {70000, 0.25}}
	block := EncodeBlock(nil, ps)
	if got, err := DecodeBlock(block); err != nil || !slices.Equal(got, ps) {
		t.Fatalf("block: %v, %v", got, err)
	}
	for i := range len(enc) {
		if _, err := DecodeBag(enc[:i]); err == nil {
			t.Errorf("a bag cut at %d decodes", i)
		}
	}
	for i := range len(block) {
		if _, err := DecodeBlock(block[:i]); err == nil {
			t.Errorf("a block cut at %d decodes", i)
		}
	}
	for _, bad := range [][]byte{
		nil, {2, 0}, {1, 0xff, 0xff, 0xff, 0xff, 0x0f}, append(bytes.Clone(block), 0),
		EncodeBlock(nil, []Posting{{1, float32(math.NaN())}}), EncodeBlock(nil, make([]Posting, MaxPostings+1)),
	} {
		if _, err := DecodeBlock(bad); err == nil {
			t.Errorf("block %x decodes", bad)
		}
	}
	unsorted := Bag{{"b", 1}, {"a", 1}}.Encode()
	for _, bad := range [][]byte{unsorted, Bag{{"a", 0}}.Encode(), append(bytes.Clone(enc), 1), {0xff}} {
		if _, err := DecodeBag(bad); err == nil {
			t.Errorf("bag %x decodes", bad)
		}
	}
	// Search reports a damaged block instead of ranking with it.
	_, err = Search("email", 5, func(string) ([]byte, bool, error) { return []byte{1, 5}, true, nil }, func(uint32) (string, error) { return "", nil })
	if err == nil {
		t.Error("Search ranked with a damaged block")
	}
}

// A store keeps bags per body and adds the command's words per tool: the
// same bag as ToolDoc's.
func TestToolDocAndBags(t *testing.T) {
	obj := []byte(`{"name":"x__1","title":"Send an email","description":"Sends one.","annotations":{"title":"ignored"},"inputSchema":{"type":"object","properties":{"to_address":{"type":"string","description":"whom"}}}}`)
	d, err := ToolDoc("x__1", "mail.send", obj)
	if err != nil {
		t.Fatal(err)
	}
	ob, err := ObjectBag(obj)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Merge(ob, CommandBag("mail.send")), Analyze(d); !slices.Equal(got, want) {
		t.Errorf("merged %v, ToolDoc %v", got, want)
	}
	w := map[string]float32{}
	for _, tw := range Analyze(d) {
		w[tw.Term] = tw.Weight
	}
	for term, want := range map[string]float32{"mail": 3, "send": 3 + 2 + 1, "email": 2, "address": 2, "toaddress": 2, "whom": 1} {
		if w[term] != want {
			t.Errorf("%s weighs %v, want %v (bag %v)", term, w[term], want, Analyze(d))
		}
	}
	if _, ok := w["x"]; ok || w["ignored"] != 0 {
		t.Errorf("the name or the annotations' title was indexed: %v", w)
	}
	if _, err := ToolDoc("x", "c", []byte(`not json`)); err == nil {
		t.Error("a tool object that is not JSON was indexed")
	}
}

// BenchmarkSearch ranks for a query of three terms each in more than
// MaxPostings of 100,000 tools, and one rare term.
func BenchmarkSearch(b *testing.B) {
	docs := make([]Doc, 100_000)
	for i := range docs {
		docs[i] = doc(fmt.Sprint(i), fmt.Sprintf("p%d.c%d", i/10, i%10), 3.0, fmt.Sprintf("command %d of %d", i%10, i%7), 2.0)
	}
	ix := Build(docs)
	b.ResetTimer()
	for range b.N {
		if hits := ix.Search("command 3 of 6 in p9", 10); len(hits) != 10 {
			b.Fatal(hits)
		}
	}
}

// Analyze gives each term once, in order, with the sum of its weights, as
// a map of running sums does (in the same order): bags are stored by content, so a bag must
// not change with how it is computed.
func TestAnalyzeSumsInOrder(t *testing.T) {
	for _, d := range []Doc{
		{},
		doc("x", "", 2.0, "ignored words", 0.0, "ignored too", -1.0),
		doc("x", "send an email to Zoë", 2.0, "notes.add-tag", 3.0),
		doc("x", "a b a c b a", 0.1, "c a b", 0.7, "b b b", 0.3, "a", 1e-9),
		doc("x", "Résumé résumé RESUME naïve-café 東京 東京", 0.1, "résumé 東京", 0.2),
	} {
		want := map[string]float64{}
		for _, f := range d.Fields {
			if f.Weight > 0 {
				appendTokens(f.Text, func(t string) { want[t] += f.Weight })
			}
		}
		got := Analyze(d)
		if len(got) != len(want) {
			t.Errorf("%v: %d terms, want %d", d.Fields, len(got), len(want))
		}
		for i, tw := range got {
			if i > 0 && got[i-1].Term >= tw.Term {
				t.Errorf("%v: terms out of order: %q then %q", d.Fields, got[i-1].Term, tw.Term)
			}
			if w, ok := want[tw.Term]; !ok || tw.Weight != float32(w) {
				t.Errorf("%v: %q weighs %v, want %v", d.Fields, tw.Term, tw.Weight, float32(w))
			}
		}
	}
}

// AddEncoded adds what AddBag adds of the decoded and merged bags, term
// for term and weight for weight, and nothing of a damaged bag.
func TestAddEncoded(t *testing.T) {
	tools := []struct {
		text, command string
	}{
		{"send an email to Zoë", "mail.send"},
		{"mail merge of mail", "mail.merge"},
		{"", "notes.add-tag"},
		{"zebra zoo", "a.b"},
		{"tag notes quickly", "notes.tag"},
	}
	byBag, byEnc := NewBuilder(), NewBuilder()
	for _, tool := range tools {
		enc := Analyze(doc("x", tool.text, 2.0)).Encode()
		bag, err := DecodeBag(enc)
		if err != nil {
			t.Fatal(err)
		}
		byBag.AddBag(Merge(bag, CommandBag(tool.command)))
		if err := byEnc.AddEncoded(enc, CommandBag(tool.command)); err != nil {
			t.Fatal(err)
		}
	}
	if err := byEnc.AddEncoded([]byte{2, 1, 'a'}, CommandBag("damaged.bag")); err == nil {
		t.Error("a damaged bag was added")
	}
	postings := func(b *Builder) map[string]string {
		out := map[string]string{}
		if err := b.Postings(func(term string, block []byte) error {
			out[term] = string(block)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if byEnc.Len() != byBag.Len() {
		t.Errorf("%d tools, want %d", byEnc.Len(), byBag.Len())
	}
	if got, want := postings(byEnc), postings(byBag); !maps.Equal(got, want) {
		t.Errorf("postings %q, want %q", got, want)
	}
}
