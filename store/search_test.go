package store_test

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/search"
	"github.com/rukh-dev/rukh/store"
)

var (
	searchNouns = []string{"invoice", "customer", "ticket", "order", "shipment", "report", "user", "project", "deploy", "backup",
		"calendar", "contact", "payment", "refund", "subscription", "webhook", "bucket", "cluster", "database", "dashboard"}
	searchVerbs = []string{"list", "get", "create", "update", "delete", "archive", "export", "import", "search", "sync"}
)

// searchCatalogue is n commands with real-looking ids and tool objects,
// and among them, at fixed places, a few that tests look for.
type searchTool struct{ name, cmd, object string }

func searchCatalogue(n int) []searchTool {
	special := map[int]searchTool{
		n / 3:    {cmd: "acme.mail.send-message", object: `{"title":"Send an email","description":"Sends an email message to one recipient.","inputSchema":{"type":"object","properties":{"to":{"type":"string","description":"the recipient's address"},"subject":{"type":"string"}}}}`},
		n / 2:    {cmd: "acme.notes.add-tag", object: `{"title":"Tag a note","description":"Adds a tag to a note.","inputSchema":{"type":"object","properties":{"noteId":{"type":"string"},"tag":{"type":"string"}}}}`},
		n - n/10: {cmd: "acme.people.greet", object: `{"description":"Greets Zoë and every naïve user, in 日本語 too.","inputSchema":{"type":"object"}}`},
	}
	tools := make([]searchTool, n)
	for i := range n {
		t, ok := special[i]
		if !ok {
			noun, verb := searchNouns[i%len(searchNouns)], searchVerbs[(i/len(searchNouns))%len(searchVerbs)]
			area := fmt.Sprintf("svc%d", i/(len(searchNouns)*len(searchVerbs)))
			t.cmd = fmt.Sprintf("%s.%s.%s-%s", area, noun, verb, noun)
			t.object = fmt.Sprintf(`{"title":"%s %s","description":"%ss a %s of the %s service.","inputSchema":{"type":"object","properties":{"%sId":{"type":"string","description":"the %s"}}}}`,
				verb, noun, verb, noun, area, noun, noun)
		}
		t.name = fmt.Sprintf("t%05d_%s", i, strings.ReplaceAll(t.cmd, ".", "_"))
		tools[i] = t
	}
	slices.SortFunc(tools, func(a, b searchTool) int { return strings.Compare(a.name, b.name) })
	return tools
}

// publishSearch publishes tools on endpoint "local", listing those listed
// says; indexed false publishes as a rukh from before search did. It
// returns how many bodies' terms came from an earlier revision.
func publishSearch(t testing.TB, s *store.Store, tools []searchTool, listed func(i int) bool, indexed bool) (store.Revision, int) {
	t.Helper()
	active, err := s.Active()
	if err != nil {
		t.Fatal(err)
	}
	reused := 0
	rev, err := s.Publish(active, func(_ uint64, id string, w *store.IndexWriter) (store.Revision, error) {
		if indexed {
			w.IndexSearch(search.ObjectBag)
		}
		if err := w.PutRevision(id, []byte(`{}`), []byte(`[]`)); err != nil {
			return store.Revision{}, err
		}
		decls, bodies := make([]string, len(tools)), make([]string, len(tools))
		for i, tl := range tools {
			if decls[i], err = w.PutCommand([]byte("declaration of " + tl.cmd)); err != nil {
				return store.Revision{}, err
			}
			if bodies[i], err = w.PutBody([]byte(tl.object)); err != nil {
				return store.Revision{}, err
			}
		}
		if err := w.PutEndpoint("local", nil); err != nil {
			return store.Revision{}, err
		}
		for i, tl := range tools {
			if err := w.PutTool(tl.name, tl.cmd, "acme@1.0.0", decls[i], bodies[i], "", len(tl.object)+len(tl.name)+10, listed(i)); err != nil {
				return store.Revision{}, err
			}
		}
		reused = w.ReusedTerms()
		return store.Revision{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rev, reused
}

func nameOf(tools []searchTool, cmd string) string {
	for _, tl := range tools {
		if tl.cmd == cmd {
			return tl.name
		}
	}
	return ""
}

// A search of a 10,000-tool endpoint reads one record per query term and
// one per hit, finds what the in-memory index finds, and a progressive
// endpoint's pages hold only its listed tools while every tool stays.
func TestSearchRecords(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 2000
	}
	s := mustStore(t)
	tools := searchCatalogue(n)
	listed := func(i int) bool { return i%100 == 0 }
	rev, reused := publishSearch(t, s, tools, listed, true)
	if reused != 0 {
		t.Errorf("a first publish reused %d bodies' terms", reused)
	}
	docs := make([]search.Doc, len(tools))
	for i, tl := range tools {
		d, err := search.ToolDoc(tl.name, tl.cmd, []byte(tl.object))
		if err != nil {
			t.Fatal(err)
		}
		docs[i] = d
	}
	mem := search.Build(docs)
	err := s.ViewRevision(rev.Number, func(ix *store.Index) error {
		ep, _ := ix.Endpoint("local")
		if want := (n/100 + store.PageTools - 1) / store.PageTools; ep.Tools != n || ep.Pages != want || !ep.Search {
			t.Errorf("endpoint %+v: want %d tools in %d pages, with search", ep, n, want)
		}
		var paged []string
		for p := range ep.Pages {
			if err := ix.Page("local", p, func(name string, _ []byte) error { paged = append(paged, name); return nil }); err != nil {
				return err
			}
		}
		if len(paged) != n/100 || paged[1] != tools[100].name {
			t.Errorf("pages hold %d tools (second %q), want the %d listed", len(paged), paged[1], n/100)
		}
		if _, ok, err := ix.Tool("local", tools[1].name); !ok || err != nil {
			t.Errorf("unlisted tool %s not found: %v", tools[1].name, err)
		}
		for _, tc := range []struct {
			query, want string
			limit       int
		}{
			{"send an email", "acme.mail.send-message", 10},
			{"email recipient", "acme.mail.send-message", 3},
			{"add_tag note", "acme.notes.add-tag", 3},
			{"addTag", "acme.notes.add-tag", 1},
			{"zoe", "acme.people.greet", 1},
			{"NAIVE", "acme.people.greet", 1},
			{"日本語", "acme.people.greet", 1},
			{"refund invoice export svc1", "", 50},
			{"delete customers", "", 5},
		} {
			before := s.RecordsRead()
			hits, err := ix.Search("local", tc.query, tc.limit)
			if err != nil {
				return err
			}
			reads := s.RecordsRead() - before
			if max := int64(len(search.QueryTerms(tc.query)) + len(hits)); reads > max {
				t.Errorf("%q: %d records read for %d hits, want at most %d", tc.query, reads, len(hits), max)
			}
			if len(hits) == 0 || len(hits) > tc.limit {
				t.Errorf("%q: %d hits, want 1..%d", tc.query, len(hits), tc.limit)
				continue
			}
			if tc.want != "" && hits[0].Name != nameOf(tools, tc.want) {
				t.Errorf("%q: first hit %s, want %s", tc.query, hits[0].Name, nameOf(tools, tc.want))
			}
			if m := mem.Search(tc.query, tc.limit); !slices.Equal(m, hits) {
				t.Errorf("%q: the store ranks\n%v\nthe in-memory index\n%v", tc.query, hits, m)
			}
		}
		if hits, err := ix.Search("local", "the of and", 10); err != nil || len(hits) != 0 {
			t.Errorf("a query of stop words: %v, %v", hits, err)
		}
		if hits, err := ix.Search("local", "xyzzy", 10); err != nil || len(hits) != 0 {
			t.Errorf("a query nothing has: %v, %v", hits, err)
		}
		_, err := ix.Search("nope", "email", 10)
		if kernel.ErrorCode(err) != kernel.CodeNotFound {
			t.Errorf("search of an unknown endpoint: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A republish analyses no body it has seen.
	if _, reused := publishSearch(t, s, tools, listed, true); reused != n {
		t.Errorf("a republish of the same bodies reused %d bodies' terms, want %d", reused, n)
	}
}

// Terms an older analyser made are not reused: a publish under a new
// analyser version analyses every body again, and prune then removes the
// old terms.
func TestSearchTermsAnalyserVersion(t *testing.T) {
	s := mustStore(t)
	tools := searchCatalogue(30)
	all := func(int) bool { return true }
	publishSearch(t, s, tools, all, true)
	if _, reused := publishSearch(t, s, tools, all, true); reused != len(tools) {
		t.Fatalf("a republish reused %d bodies' terms, want %d", reused, len(tools))
	}
	store.SetTermsVersionForTest(t, search.AnalyserVersion+1)
	if _, reused := publishSearch(t, s, tools, all, true); reused != 0 {
		t.Errorf("a publish under a new analyser reused %d bodies' terms, want 0", reused)
	}
	if _, reused := publishSearch(t, s, tools, all, true); reused != len(tools) {
		t.Errorf("a second publish under the new analyser reused %d bodies' terms, want %d", reused, len(tools))
	}
	before, err := store.CountForTest(s, "objects")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PruneRevisions(1); err != nil {
		t.Fatal(err)
	}
	after, err := store.CountForTest(s, "objects")
	if err != nil {
		t.Fatal(err)
	}
	if before-after != len(tools) {
		t.Errorf("prune removed %d objects, want the old analyser's %d bags", before-after, len(tools))
	}
	if err := s.Check(); err != nil {
		t.Error(err)
	}
}

// A damaged postings block, or one naming a tool number the endpoint does
// not have, is an internal error that names the store and says what to
// run, never a panic or a wrong answer.
func TestSearchDamagedPostings(t *testing.T) {
	s := mustStore(t)
	rev, _ := publishSearch(t, s, searchCatalogue(50), func(int) bool { return true }, true)
	key, err := store.SearchKeyForTest(s, rev.Number, "local", "email")
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range [][]byte{{0xff, 1, 2}, search.EncodeBlock(nil, []search.Posting{{Doc: 9999, Impact: 1}})} {
		if err := store.PokeForTest(s, "gens", key, block); err != nil {
			t.Fatal(err)
		}
		err := s.ViewRevision(rev.Number, func(ix *store.Index) error {
			_, err := ix.Search("local", "email", 10)
			return err
		})
		var ke *kernel.Error
		if !errors.As(err, &ke) || ke.Code != kernel.CodeInternal || ke.Path == "" ||
			!strings.Contains(ke.Message, `search index of endpoint "local" is unreadable`) || !strings.Contains(ke.Hint, "rukh doctor") {
			t.Errorf("block %x: %#v", block, err)
		}
	}
}

// A revision published without search records still reads; a search on it
// is a clear refusal, never a panic or a wrong answer.
func TestSearchOldRevision(t *testing.T) {
	s := mustStore(t)
	tools := searchCatalogue(50)
	rev, _ := publishSearch(t, s, tools, func(int) bool { return true }, false)
	err := s.ViewRevision(rev.Number, func(ix *store.Index) error {
		if ep, _ := ix.Endpoint("local"); ep.Search || ep.Tools != 50 || ep.Pages != 2 {
			t.Errorf("endpoint %+v", ep)
		}
		_, err := ix.Search("local", "email", 10)
		var ke *kernel.Error
		if !errors.As(err, &ke) || ke.Code != kernel.CodeUnsupported || !errors.Is(err, store.ErrNoSearch) ||
			err.Error() != `revision r1 has no search index for endpoint "local": it was published before tool search` || !strings.Contains(ke.Hint, "rukh publish") {
			t.Errorf("search on an old revision: %v", err)
		}
		if _, _, err := ix.Postings("local", "email"); !errors.Is(err, store.ErrNoSearch) {
			t.Errorf("postings on an old revision: %v", err)
		}
		if _, _, err := ix.SearchDoc("local", 0); !errors.Is(err, store.ErrNoSearch) {
			t.Errorf("a tool number on an old revision: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// BenchmarkPublishSearch publishes n real-looking tools without search
// records (as before them), with them into a fresh store (every body
// analysed), and again (every body's terms found stored). Run with
// -benchtime=1x; docs/performance.md has the figures.
func BenchmarkPublishSearch(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		tools := searchCatalogue(n)
		all := func(int) bool { return true }
		for _, mode := range []string{"unsearched", "first", "republish"} {
			b.Run(fmt.Sprintf("%s-%d", mode, n), func(b *testing.B) {
				var cpu time.Duration
				var peak uint64
				for range b.N {
					b.StopTimer()
					s := newTestStore(b)
					if mode == "republish" {
						publishSearch(b, s, tools, all, true)
					}
					runtime.GC()
					b.StartTimer()
					start := cpuTime()
					peak = max(peak, peakHeap(func() { publishSearch(b, s, tools, all, mode != "unsearched") }))
					cpu += cpuTime() - start
				}
				// CPU time: on a busy host, wall time says more of the others.
				b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
				// The catalogue itself is in the heap too.
				b.ReportMetric(float64(peak)/(1<<20), "peak-live-MiB")
			})
		}
	}
}

// Prune keeps the search terms of the bodies the kept revisions use and
// removes the others'; a later publish of the kept bodies still reuses
// theirs.
func TestSearchTermsPrune(t *testing.T) {
	s := mustStore(t)
	old, kept := searchCatalogue(40), searchCatalogue(60)
	for i := range old {
		old[i].object = strings.Replace(old[i].object, `"description":"`, `"description":"Old. `, 1)
	}
	all := func(int) bool { return true }
	publishSearch(t, s, old, all, true)
	publishSearch(t, s, kept, all, true)
	objects := func() int {
		n, err := store.CountForTest(s, "objects")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := objects()
	if _, err := s.PruneRevisions(1); err != nil {
		t.Fatal(err)
	}
	// The old revision's pages (its bodies), declarations and terms go
	// (its declarations are the same as the kept ones' but for the 3
	// special tools at other places).
	if gone, want := before-objects(), len(old)+(len(old)+store.PageTools-1)/store.PageTools; gone < want {
		t.Errorf("prune removed %d objects, want at least the old pages and their bodies' terms (%d)", gone, want)
	}
	if _, reused := publishSearch(t, s, kept, all, true); reused != len(kept) {
		t.Errorf("after prune, a republish reused %d bodies' terms, want %d", reused, len(kept))
	}
}
