package store_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/rukh-dev/rukh/search"
	"github.com/rukh-dev/rukh/store"
)

// TestSearchSize: an endpoint's search records are counted record by
// record: one tool number per tool, one postings record per distinct term,
// one term bag per distinct body; a revision without search records is
// refused.
func TestSearchSize(t *testing.T) {
	s := store.New(t.TempDir())
	const n = 40
	var docs []search.Doc
	bodies := map[string]bool{}
	if _, err := s.Publish(0, func(_ uint64, id string, w *store.IndexWriter) (store.Revision, error) {
		w.IndexSearch(search.ObjectBag)
		if err := w.PutRevision(id, []byte(`{}`), []byte(`[]`)); err != nil {
			return store.Revision{}, err
		}
		if err := w.PutEndpoint("local", nil); err != nil {
			return store.Revision{}, err
		}
		for i := range n {
			// Two tools share each body: bags are per body.
			body := fmt.Sprintf(`{"title":"thing %d","description":"does item%d"}`, i/2, i/2)
			ref, err := w.PutBody([]byte(body))
			if err != nil {
				return store.Revision{}, err
			}
			bodies[ref] = true
			cmd := fmt.Sprintf("c%03d", i)
			d, err := search.ToolDoc(cmd, cmd, []byte(body))
			if err != nil {
				return store.Revision{}, err
			}
			docs = append(docs, d)
			if err := w.PutTool(cmd, cmd, "p@1.0.0", "", ref, "", len(body), true); err != nil {
				return store.Revision{}, err
			}
		}
		return store.Revision{Note: "search"}, nil
	}); err != nil {
		t.Fatal(err)
	}
	terms := 0
	b := search.NewBuilder()
	for _, d := range docs {
		b.Add(d)
	}
	b.Postings(func(string, []byte) error { terms++; return nil })

	var sz store.SearchSize
	if _, err := s.ViewActive(func(ix *store.Index) error {
		var err error
		sz, err = ix.SearchSize("local")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if sz.Names != n || sz.Postings != terms || sz.Bags != len(bodies) {
		t.Errorf("records: %d names, %d postings, %d bags; want %d, %d, %d", sz.Names, sz.Postings, sz.Bags, n, terms, len(bodies))
	}
	if sz.NameBytes <= int64(n*4) || sz.PostingBytes <= int64(terms) || sz.BagBytes <= int64(len(bodies)*32) {
		t.Errorf("bytes: %+v: each record must count its key and value", sz)
	}

	publishIndexed(t, s, 3, 50) // no search records
	_, err := s.ViewActive(func(ix *store.Index) error {
		_, err := ix.SearchSize("local")
		return err
	})
	if !errors.Is(err, store.ErrNoSearch) {
		t.Errorf("a revision without search records: %v, want ErrNoSearch", err)
	}
}
