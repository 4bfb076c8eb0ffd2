package store_test

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
)

// publishIndexed publishes a revision of n commands "c<i>" under group
// "g<i/100>", every one a tool of endpoint "local" with a body of size
// bodySize; decls and bodies do not depend on the revision, tool names
// do ("c<i>__<revision id>"), as compact names do.
func publishIndexed(t *testing.T, s *store.Store, n, bodySize int) store.Revision {
	t.Helper()
	active, err := s.Active()
	if err != nil {
		t.Fatal(err)
	}
	rev, err := s.Publish(active, func(_ uint64, id string, w *store.IndexWriter) (store.Revision, error) {
		if err := w.PutRevision(id, []byte(`{"profile":"`+id+`"}`), []byte(`["rel"]`)); err != nil {
			return store.Revision{}, err
		}
		type tool struct{ name, cmd, decl, body string }
		var tools []tool
		groups := map[string]bool{}
		for i := range n {
			cmd := fmt.Sprintf("c%05d", i)
			decl, err := w.PutCommand([]byte("declaration of " + cmd))
			if err != nil {
				return store.Revision{}, err
			}
			body, err := w.PutBody([]byte(fmt.Sprintf("%s%0*d", cmd, bodySize-len(cmd), 0)))
			if err != nil {
				return store.Revision{}, err
			}
			g := fmt.Sprintf("g%03d", i/100)
			groups[g] = true
			if err := w.PutRoute([]string{g, cmd}, store.RouteCommand, cmd, decl, "summary of "+cmd); err != nil {
				return store.Revision{}, err
			}
			tools = append(tools, tool{name: cmd + "__" + id, cmd: cmd, decl: decl, body: body})
		}
		for g := range groups {
			if err := w.PutRoute([]string{g}, store.RouteGroup, "", "", "group "+g); err != nil {
				return store.Revision{}, err
			}
		}
		if err := w.PutEndpoint("local", []byte(`{"ns":"x"}`)); err != nil {
			return store.Revision{}, err
		}
		slices.SortFunc(tools, func(a, b tool) int { return strings.Compare(a.name, b.name) })
		for _, tl := range tools {
			if err := w.PutTool(tl.name, tl.cmd, "p@1.0.0", tl.decl, tl.body, "", bodySize+len(tl.name)+10, true); err != nil {
				return store.Revision{}, err
			}
		}
		if err := w.PutEndpoint("empty", nil); err != nil {
			return store.Revision{}, err
		}
		return store.Revision{Note: "indexed"}, nil
	})
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	return rev
}

func TestIndexedRevision(t *testing.T) {
	s := mustStore(t)
	r1 := publishIndexed(t, s, 250, 100)
	if !r1.Indexed {
		t.Fatal("revision is not indexed")
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	err := s.ViewRevision(r1.Number, func(ix *store.Index) error {
		if ix.Revision() != "r1" || string(ix.Profile()) != `{"profile":"r1"}` {
			t.Errorf("header: %q %s", ix.Revision(), ix.Profile())
		}
		ep, ok := ix.Endpoint("local")
		if !ok || ep.Tools != 250 || ep.Pages < 250/store.PageTools || string(ep.Meta) != `{"ns":"x"}` {
			t.Errorf("endpoint local = %+v, %v (want 250 tools)", ep, ok)
		}
		checkPageCuts(t, ix, "local", ep.Pages, 250)
		if ep, ok := ix.Endpoint("empty"); !ok || ep.Tools != 0 || ep.Pages != 0 {
			t.Errorf("endpoint empty = %+v, %v", ep, ok)
		}
		r, ok, err := ix.Route([]string{"g001", "c00142"})
		if err != nil || !ok || r.Kind != store.RouteCommand || r.Command != "c00142" || r.Line != "summary of c00142" {
			t.Errorf("route = %+v, %v, %v", r, ok, err)
		}
		decl, err := ix.Decl(r.Decl)
		if err != nil || string(decl) != "declaration of c00142" {
			t.Errorf("decl = %q, %v", decl, err)
		}
		if _, ok, _ := ix.Route([]string{"g001", "nope"}); ok {
			t.Error("found a route that does not exist")
		}
		var top, kids []string
		ix.Children(nil, func(r store.Route) error { top = append(top, strings.Join(r.Words, " ")); return nil })
		ix.Children([]string{"g002"}, func(r store.Route) error { kids = append(kids, r.Words[1]); return nil })
		if !slices.Equal(top, []string{"g000", "g001", "g002"}) || len(kids) != 50 || kids[0] != "c00200" {
			t.Errorf("children: top %v, g002 %d from %v", top, len(kids), kids[:min(len(kids), 1)])
		}
		tl, ok, err := ix.Tool("local", "c00007__r1")
		if err != nil || !ok || tl.Command != "c00007" || tl.Release != "p@1.0.0" {
			t.Errorf("tool = %+v, %v, %v", tl, ok, err)
		}
		body, err := ix.Body(tl)
		if sum, ok := ix.BodySum(tl.Body); err != nil || !ok || sum != sha256.Sum256(body) {
			t.Errorf("body sum of %s = %x, %v; want the SHA-256 of its body (%v)", tl.Name, sum, ok, err)
		}
		if _, ok := ix.BodySum("short"); ok {
			t.Error("BodySum took a ref that is no hash")
		}
		var names []string
		if err := ix.Page("local", ep.Pages-1, func(name string, body []byte) error {
			names = append(names, name)
			if !strings.HasPrefix(string(body), strings.TrimSuffix(name, "__r1")) {
				t.Errorf("page body of %s = %.10q", name, body)
			}
			return nil
		}); err != nil || len(names) == 0 || names[len(names)-1] != "c00249__r1" {
			t.Errorf("last page: %v, %v", names, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkPageCuts checks that the n listed tools of endpoint are cut into
// pages as the writer's rule says: each page ends at the first tool from
// the minimum on whose command says so, at the most tools, or at the end.
func checkPageCuts(t *testing.T, ix *store.Index, endpoint string, pages, n int) {
	t.Helper()
	total, prev := 0, ""
	for i := range pages {
		var names []string
		if err := ix.Page(endpoint, i, func(name string, _ []byte) error {
			names = append(names, name)
			return nil
		}); err != nil {
			t.Fatalf("page %d: %v", i, err)
		}
		for j, name := range names {
			if name <= prev {
				t.Fatalf("page %d: %q after %q", i, name, prev)
			}
			prev = name
			tl, _, err := ix.Tool(endpoint, name)
			if err != nil {
				t.Fatal(err)
			}
			cut := j+1 >= store.PageMinToolsForTest && store.PageCutForTest(tl.Command)
			last := j == len(names)-1
			switch {
			case cut && !last:
				t.Errorf("page %d goes on after %q (tool %d), where its command ends a page", i, name, j+1)
			case last && !cut && len(names) != store.PageTools && i != pages-1:
				t.Errorf("page %d ends at %q (tool %d), which neither ends a page nor fills one", i, name, j+1)
			}
		}
		total += len(names)
	}
	if total != n {
		t.Errorf("%d tools in %d pages, want %d", total, pages, n)
	}
}

func TestIndexPagesRespectBytes(t *testing.T) {
	s := mustStore(t)
	r := publishIndexed(t, s, 10, 300<<10) // 300 KiB each: 3 per page
	err := s.ViewRevision(r.Number, func(ix *store.Index) error {
		ep, _ := ix.Endpoint("local")
		if ep.Pages != 4 {
			t.Errorf("%d pages for 10 tools of 300 KiB, want 4", ep.Pages)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestIndexSharesObjects: an unchanged declaration or body is stored once,
// whatever the number of revisions; prune removes old revisions and what
// only they used, and never the active one.
func TestIndexSharesObjectsAndPrunes(t *testing.T) {
	s := mustStore(t)
	r1 := publishIndexed(t, s, 100, 200)
	size1 := objectCount(t, s)
	publishIndexed(t, s, 100, 200)
	r3 := publishIndexed(t, s, 120, 200)
	// A listed body is stored only in its page's object, and pages end
	// where their commands say, whatever the tools' names (which carry
	// the revision here): r2 shares all of r1's; r3's 20 new commands come
	// last, so only its pages from r1's last one on are new.
	p1, p3 := pageObjects(t, s, r1.Number), pageObjects(t, s, r3.Number)
	fresh := 0
	for i, o := range p3 {
		if !slices.Contains(p1, o) {
			fresh++
			if i < len(p1)-1 {
				t.Errorf("r3's page %d is new, before r1's last page (%d)", i, len(p1)-1)
			}
		}
	}
	if got := objectCount(t, s); fresh == 0 || got != size1+20+fresh {
		t.Errorf("%d objects after three revisions, want %d (only the 20 new commands add a declaration each, and %d pages one object each)", got, size1+20+fresh, fresh)
	}
	if _, err := s.PruneRevisions(0); kernel.ErrorCode(err) != kernel.CodeUsage {
		t.Errorf("keep 0: %v", err)
	}
	// the 20 extra commands only in r3 stay; only r1's pages r3 does not
	// have are unused
	gone := 0
	for _, o := range p1 {
		if !slices.Contains(p3, o) {
			gone++
		}
	}
	p, err := s.PruneRevisions(1)
	if err != nil || !slices.Equal(p.Revisions, []string{"r1", "r2"}) || !p.Swept || p.Objects != gone {
		t.Fatalf("prune: %+v, %v (want %d objects)", p, err, gone)
	}
	publishIndexed(t, s, 100, 200) // r4 drops the 20
	p, err = s.PruneRevisions(1)
	if err != nil || !slices.Equal(p.Revisions, []string{"r3"}) || p.Objects != 20+fresh {
		t.Fatalf("prune: %+v, %v (want %d objects)", p, err, 20+fresh)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	revs, err := s.Revisions()
	if err != nil || len(revs) != 1 || revs[0].ID != "r4" {
		t.Fatalf("revisions after prune: %+v, %v", revs, err)
	}
	// numbering goes on after a prune
	if r := publishIndexed(t, s, 1, 10); r.ID != "r5" {
		t.Errorf("next revision is %s", r.ID)
	}
}

// pageObjects is the keys of the page objects of endpoint "local" of
// revision n, by page.
func pageObjects(t *testing.T, s *store.Store, n uint64) []string {
	t.Helper()
	var pages int
	if err := s.ViewRevision(n, func(ix *store.Index) error {
		ep, _ := ix.Endpoint("local")
		pages = ep.Pages
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	out := make([]string, pages)
	for i := range out {
		_, _, o, err := store.PageForTest(s, n, "local", i)
		if err != nil || o == "" {
			t.Fatalf("page %d: %q, %v", i, o, err)
		}
		out[i] = o
	}
	return out
}

func objectCount(t *testing.T, s *store.Store) int {
	t.Helper()
	n, err := store.CountForTest(s, "objects")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestIndexReadsAreConstant: a route, a page and a tool lookup read the
// same number of records in a revision of 20,000 commands as in one of 20.
func TestIndexReadsAreConstant(t *testing.T) {
	reads := func(n int) (route, page, tool int64) {
		s := mustStore(t)
		publishIndexed(t, s, n, 50)
		measure := func(fn func(ix *store.Index) error) int64 {
			before := s.RecordsRead()
			if _, err := s.ViewActive(fn); err != nil {
				t.Fatal(err)
			}
			return s.RecordsRead() - before
		}
		route = measure(func(ix *store.Index) error {
			r, _, err := ix.Route([]string{"g000", "c00003"})
			if err != nil {
				return err
			}
			_, err = ix.Decl(r.Decl)
			return err
		})
		page = measure(func(ix *store.Index) error { return ix.Page("local", 0, func(string, []byte) error { return nil }) })
		tool = measure(func(ix *store.Index) error {
			tl, _, err := ix.Tool("local", "c00003__r1")
			if err != nil {
				return err
			}
			_, err = ix.Decl(tl.Decl)
			return err
		})
		return
	}
	r1, p1, t1 := reads(40)
	r2, p2, t2 := reads(20000)
	// A page: the active pointer, the revision's record and header, the
	// page record and its bodies.
	if r1 != r2 || p1 != p2 || t1 != t2 || r2 > 5 || p2 > 5 || t2 > 5 {
		t.Errorf("records read (route, page, tool): %d %d %d at 40 commands, %d %d %d at 20,000", r1, p1, t1, r2, p2, t2)
	}
}

func TestSchema1RevisionIsNotIndexed(t *testing.T) {
	s := mustStore(t)
	rev := publish(t, s, "blob")
	err := s.ViewRevision(rev.Number, func(*store.Index) error { return nil })
	if kernel.ErrorCode(err) != kernel.CodeUnsupported {
		t.Fatalf("ViewRevision of a blob revision: %v", err)
	}
	err = s.AttachIndex(rev.Number, func(w *store.IndexWriter) error {
		return w.PutRevision(rev.ID, []byte("{}"), []byte("[]"))
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Revision(rev.Number)
	if err != nil || !got.Indexed || len(got.Binding) != 0 {
		t.Fatalf("after AttachIndex: %+v, %v", got, err)
	}
	if err := s.ViewRevision(rev.Number, func(ix *store.Index) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

// A walk in pieces, each in its own read, gives what one walk gives.
func TestIndexWalksInPieces(t *testing.T) {
	s := mustStore(t)
	r := publishIndexed(t, s, 250, 100)
	var routes, tools, pieceRoutes, pieceTools []string
	if err := s.ViewRevision(r.Number, func(ix *store.Index) error {
		ix.Routes(func(r store.Route) error { routes = append(routes, strings.Join(r.Words, " ")); return nil })
		return ix.Tools("local", func(t store.Tool) error { tools = append(tools, t.Name+" "+t.Body); return nil })
	}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 7, 250, 1000} {
		pieceRoutes, pieceTools = nil, nil
		reads := 0
		for rc, tc := (store.Cursor{}), (store.Cursor{}); !rc.Done() || !tc.Done(); reads++ {
			if err := s.ViewRevision(r.Number, func(ix *store.Index) (err error) {
				if rc, err = ix.RoutesFrom(rc, n, func(r store.Route) error { pieceRoutes = append(pieceRoutes, strings.Join(r.Words, " ")); return nil }); err != nil {
					return err
				}
				tc, err = ix.ToolsFrom("local", tc, n, func(t store.Tool) error { pieceTools = append(pieceTools, t.Name+" "+t.Body); return nil })
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if reads > 1000 {
				t.Fatal("the walk does not end")
			}
		}
		if !slices.Equal(pieceRoutes, routes) || !slices.Equal(pieceTools, tools) {
			t.Errorf("pieces of %d: %d routes, %d tools; one walk: %d, %d", n, len(pieceRoutes), len(pieceTools), len(routes), len(tools))
		}
		if want := (len(routes)+n-1)/n + 1; n < 250 && reads > want {
			t.Errorf("pieces of %d: %d reads, want at most %d", n, reads, want)
		}
	}
}

// Objects written in many small transactions, read from the scratch file
// while the one before commits, are each whole and under their key, and a
// second publish of the same objects writes none of them again.
func TestIndexedRevisionInSmallChunks(t *testing.T) {
	store.SetChunkBytesForTest(8 << 10)
	t.Cleanup(func() { store.SetChunkBytesForTest(4 << 20) })
	s := mustStore(t)
	for range 2 {
		r := publishIndexed(t, s, 600, 700)
		if err := s.Check(); err != nil {
			t.Fatal(err)
		}
		if err := s.ViewRevision(r.Number, func(ix *store.Index) error {
			if ep, ok := ix.Endpoint("local"); !ok || ep.Tools != 600 {
				t.Errorf("endpoint local = %+v, %v (want 600 tools)", ep, ok)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkViewActiveOpen is a served request's store read: open the
// active revision's index (through pread snapshots, as serve-http does)
// and look at its profile and endpoints.
func BenchmarkViewActiveOpen(b *testing.B) {
	s := mustStore(b)
	profile := []byte(`{"endpoints":{"local":{"namespace":"n","publish":{"packages":[` + strings.Repeat(`"some.package.name",`, 400) + `"last"]}}}}`)
	_, err := s.Publish(0, func(_ uint64, id string, w *store.IndexWriter) (store.Revision, error) {
		if err := w.PutRevision(id, profile, []byte(`["rel"]`)); err != nil {
			return store.Revision{}, err
		}
		for _, ep := range []string{"local", "remote", "empty"} {
			if err := w.PutEndpoint(ep, []byte(`{"ns":"`+ep+`","tools":["a","b","c"]}`)); err != nil {
				return store.Revision{}, err
			}
		}
		return store.Revision{Note: "indexed"}, nil
	})
	if err != nil {
		b.Fatal(err)
	}
	s.SnapshotReads()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.ViewActive(func(ix *store.Index) error {
			if len(ix.Profile()) != len(profile) || len(ix.Endpoints()) != 3 {
				b.Fatal("the revision read back differs")
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
}
