package serve

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/serve/servetest"
	"github.com/rukh-dev/rukh/store"
)

func newTestHome(t testing.TB) *home.Home {
	return &home.Home{Env: func(string) string { return "" }, Store: store.New(t.TempDir())}
}

// TestServeRequestsReadConstantRecords: at 20,000 published commands, a
// tools/list page and a tools/call resolution read as many store records
// as at 80 (the list: its page and the next, read ahead): never the whole
// revision.
func TestServeRequestsReadConstantRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: publishes a catalogue of 20,000 commands")
	}
	type counts struct{ list, call int64 }
	measure := func(packages int) counts {
		h := newTestHome(t)
		servetest.PublishCatalog(t, h.Store, packages, 10)
		var c counts
		reads := func(fn func()) int64 {
			before := h.Store.RecordsRead()
			fn()
			return h.Store.RecordsRead() - before
		}
		var cache *catalogCache
		var name string
		c.list = reads(func() {
			cache = primedCache(h, newStoreReads(), "local") // reads the first page at start
			err := cache.view(0, func(n uint64, cat mcpcore.Catalog) error {
				return cat.Page(0, func(nm string, body []byte) error { name = nm; return nil })
			})
			if err != nil || name == "" {
				t.Fatalf("list: %v", err)
			}
			cache.settle() // the next page, read ahead
		})
		view := cache.view
		c.call = reads(func() {
			err := view(0, func(n uint64, cat mcpcore.Catalog) error {
				r, err := cat.Resolve(name)
				if err == nil && r == nil {
					err = fmt.Errorf("unknown tool %s", name)
				}
				return err
			})
			if err != nil {
				t.Fatalf("call: %v", err)
			}
		})
		return c
	}
	small, large := measure(8), measure(2000)
	t.Logf("records read at 80 and 20,000 commands: %+v %+v", small, large)
	if small != large {
		t.Errorf("records read grow with the catalogue: %+v at 80 commands, %+v at 20,000", small, large)
	}
	if large.list > 4+2*33 || large.call > 6 {
		t.Errorf("records read: %+v", large)
	}
}

// TestServeViewKeepsWhatItRead: serve-mcp answers a list page and a tool it
// read before without reading the store again while nothing was committed,
// and sees a publish at the very next request.
func TestServeViewKeepsWhatItRead(t *testing.T) {
	h, reads := newTestHome(t), newStoreReads()
	servetest.PublishCatalog(t, h.Store, 4, 10)
	cache := primedCache(h, reads, "local")
	view := cache.view
	var first uint64
	var name string
	list := func() {
		t.Helper()
		if err := view(0, func(n uint64, cat mcpcore.Catalog) error {
			first = n
			return cat.Page(0, func(nm string, body []byte) error { name = nm; return nil })
		}); err != nil || name == "" {
			t.Fatalf("list: %v", err)
		}
	}
	resolve := func() {
		t.Helper()
		if err := view(0, func(n uint64, cat mcpcore.Catalog) error {
			r, err := cat.Resolve(name)
			if err == nil && r == nil {
				err = fmt.Errorf("unknown tool %s", name)
			}
			return err
		}); err != nil {
			t.Fatalf("resolve: %v", err)
		}
	}
	list()
	resolve()
	cache.settle() // page 1, read ahead
	before := h.Store.RecordsRead()
	list()
	resolve()
	if got := h.Store.RecordsRead() - before; got != 0 {
		t.Fatalf("a repeated list and call read %d records", got)
	}
	// The server's own audit records change nothing it serves; another
	// process's commit (here: another handle's audit) may have.
	if err := h.Store.AppendAudit(store.AuditRecord{Endpoint: "local", Command: "x.y", Outcome: "succeeded"}); err != nil {
		t.Fatal(err)
	}
	list()
	resolve()
	if got := h.Store.RecordsRead() - before; got != 0 {
		t.Fatalf("a list and call after the server's own audit records read %d records", got)
	}
	if err := store.New(h.Store.Home()).AppendAudit(store.AuditRecord{Endpoint: "local", Command: "x.y", Outcome: "succeeded"}); err != nil {
		t.Fatal(err)
	}
	list()
	if got := h.Store.RecordsRead() - before; got == 0 {
		t.Fatal("the list after another process's commit read nothing")
	}
	before = h.Store.RecordsRead()
	servetest.PublishCatalog(t, h.Store, 5, 10)
	list()
	if got := h.Store.RecordsRead() - before; got == 0 {
		t.Fatal("the list after a publish read nothing")
	}
	active, err := h.Store.Active()
	if err != nil || first != active || first < 2 {
		t.Fatalf("the list after a publish served revision %d, active %d (%v)", first, active, err)
	}
}

// TestServeViewSharesPageReads: concurrent requests for a page serve-http
// has not kept wait for one read of it, and every store read waits for the
// bound on opens at once (storeReads): sixteen agents walking a large
// catalogue map the store file once, not sixteen times.
func TestServeViewSharesPageReads(t *testing.T) {
	h, reads := newTestHome(t), newStoreReads()
	servetest.PublishCatalog(t, h.Store, 200, 10) // some 90 pages: more than the cache keeps
	cache := primedCache(h, reads, "local")
	view := cache.view
	page := func(i int) ([]string, error) {
		var names []string
		err := view(0, func(n uint64, cat mcpcore.Catalog) error {
			return cat.Page(i, func(nm string, body []byte) error { names = append(names, nm); return nil })
		})
		return names, err
	}
	before := h.Store.RecordsRead()
	want, err := page(40)
	if err != nil || len(want) < 12 {
		t.Fatalf("page 40: %v, %d tools", err, len(want))
	}
	cache.settle()
	two := h.Store.RecordsRead() - before // page 40, and page 41 read ahead

	// Hold every permit: no request may read the store meanwhile.
	for range cap(reads) {
		reads <- struct{}{}
	}
	const agents = 16
	type answer struct {
		names []string
		err   error
	}
	answers := make(chan answer, agents)
	before = h.Store.RecordsRead()
	for range agents {
		go func() {
			names, err := page(50)
			answers <- answer{names, err}
		}()
	}
	select {
	case <-answers:
		t.Fatal("a page was read past the bound on store opens")
	case <-time.After(200 * time.Millisecond):
	}
	for range cap(reads) {
		<-reads
	}
	for range agents {
		select {
		case ans := <-answers:
			if ans.err != nil || len(ans.names) < 12 || ans.names[0] == want[0] {
				t.Errorf("page 50: %v, %d tools", ans.err, len(ans.names))
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no answer after the bound was released")
		}
	}
	cache.settle()
	if got := h.Store.RecordsRead() - before; got != two {
		t.Errorf("%d concurrent requests for one page read %d records, want %d (one read of it, one of the next)", agents, got, two)
	}
}

// TestServeViewReadsAhead: while a client walks the list, the page after
// the one it asked for is read before it asks, so each request finds its
// page read; pages read ahead that nobody takes stay within their bound.
func TestServeViewReadsAhead(t *testing.T) {
	h, reads := newTestHome(t), newStoreReads()
	servetest.PublishCatalog(t, h.Store, 200, 10) // some 90 pages: more than the cache keeps
	cache := primedCache(h, reads, "local")
	page := func(i int) int64 {
		t.Helper()
		cache.settle()
		before := h.Store.RecordsRead()
		var names []string
		err := cache.view(0, func(n uint64, cat mcpcore.Catalog) error {
			return cat.Page(i, func(nm string, body []byte) error { names = append(names, nm); return nil })
		})
		if err != nil || len(names) == 0 {
			t.Fatalf("page %d: %v, %d tools", i, err, len(names))
		}
		cache.settle()
		return h.Store.RecordsRead() - before
	}
	one := page(0) // kept since the start: only page 1 is read, ahead
	if one == 0 {
		t.Fatal("page 0 read nothing ahead")
	}
	last := listPages(t, h) - 1
	for i := 1; i < last-1; i++ {
		if got := page(i); got != one {
			t.Fatalf("page %d read %d records, want %d: the next page only", i, got, one)
		}
	}
	// A page is two records whatever its tools: the last too.
	if got := page(last - 1); got != one {
		t.Fatalf("page %d read %d records, want %d: the last page, read ahead", last-1, got, one)
	}
	if got := page(last); got != 0 {
		t.Fatalf("the last page read %d records, want 0: it was read ahead and has no next", got)
	}
	r := cache.rev
	if len(r.ahead) != 0 || r.aheadBytes != 0 {
		t.Errorf("after the walk %d pages (%d bytes) read ahead are still kept", len(r.ahead), r.aheadBytes)
	}

	// A request that comes while its page is being read ahead waits for
	// that read and takes the page: none is left kept for nobody.
	list := func(i int) error {
		return cache.view(0, func(n uint64, cat mcpcore.Catalog) error {
			return cat.Page(i, func(string, []byte) error { return nil })
		})
	}
	servetest.PublishCatalog(t, h.Store, 200, 10)
	cache = primedCache(h, reads, "local")
	for i := range 40 {
		page(i) // the cache is full long before page 40
	}
	for range cap(reads) {
		reads <- struct{}{}
	}
	if err := list(40); err != nil { // read ahead: no store read; page 41 waits for a permit
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- list(41) }()
	time.Sleep(50 * time.Millisecond)
	for range cap(reads) {
		<-reads
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	cache.settle()
	if _, kept := cache.rev.ahead[41]; kept || len(cache.rev.ahead) != 1 {
		t.Errorf("pages read ahead and kept: %v, want 42 only (41 went to the request that waited for it)", slices.Sorted(maps.Keys(cache.rev.ahead)))
	}

	// Every other page asked for: the ones between are read ahead and
	// never taken; what they keep stays within the bound, the older ones
	// making room for the newest.
	servetest.PublishCatalog(t, h.Store, 201, 10)
	cache = primedCache(h, reads, "local")
	asked := 0
	for i := 0; i+1 < listPages(t, h); i += 2 {
		page(i)
		asked = i
	}
	r = cache.rev
	if r.aheadBytes > cacheAheadBytes || r.pageBytes > cachePageBytes {
		t.Errorf("kept %d bytes of pages and %d read ahead, bounds %d and %d", r.pageBytes, r.aheadBytes, cachePageBytes, cacheAheadBytes)
	}
	if _, kept := r.ahead[asked+1]; !kept {
		t.Errorf("the page read ahead last (%d) was not kept: %v", asked+1, slices.Sorted(maps.Keys(r.ahead)))
	}
}

// listPages is how many list pages endpoint "local" of the active
// revision has.
func listPages(t *testing.T, h *home.Home) int {
	t.Helper()
	active, err := h.Store.Active()
	if err != nil {
		t.Fatal(err)
	}
	pages := 0
	if err := h.Store.ViewRevision(active, func(ix *store.Index) error {
		ep, _ := ix.Endpoint("local")
		pages = ep.Pages
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return pages
}

// TestPagesReadInRequestOrder: the reader takes the pages requests wait
// for before those read ahead that nobody asked for yet.
func TestPagesReadInRequestOrder(t *testing.T) {
	r := &cachedRev{queue: []*pageLoad{{i: 1, ahead: true}, {i: 2}, {i: 3, ahead: true, claimed: true}, {i: 4, ahead: true}, {i: 5}}}
	var got []int
	for {
		batch := r.takeLocked()
		if len(batch) == 0 {
			break
		}
		for _, l := range batch {
			got = append(got, l.i)
		}
	}
	if want := []int{2, 3, 5, 1, 4}; !slices.Equal(got, want) {
		t.Errorf("pages read in the order %v, want %v", got, want)
	}
}

// TestServePeekReadsNothing: a call's resolution through peek is answered
// from what the last read kept, without a store read; a tool not kept is
// ErrNotCached (the core then reads through view), and after a publish
// peek keeps nothing until a read.
func TestServePeekReadsNothing(t *testing.T) {
	h := newTestHome(t)
	servetest.PublishCatalog(t, h.Store, 40, 10)
	cache := primedCache(h, newStoreReads(), "local")
	var name string
	if err := cache.view(0, func(n uint64, cat mcpcore.Catalog) error {
		return cat.Page(0, func(nm string, body []byte) error { name = nm; return nil })
	}); err != nil || name == "" {
		t.Fatalf("list: %v", err)
	}
	cache.settle()
	resolve := func(n uint64, cat mcpcore.Catalog) error {
		r, err := cat.Resolve(name)
		if err == nil && r == nil {
			err = fmt.Errorf("unknown tool %s", name)
		}
		return err
	}
	before := h.Store.RecordsRead()
	if ok, err := cache.peek(resolve); !ok || !errors.Is(err, mcpcore.ErrNotCached) {
		t.Fatalf("peek of a tool not kept: %v %v, want true and ErrNotCached", ok, err)
	}
	if ok, err := cache.peek(func(_ uint64, cat mcpcore.Catalog) error {
		return cat.Page(cat.Pages()-1, func(string, []byte) error { return nil })
	}); !ok || !errors.Is(err, mcpcore.ErrNotCached) {
		t.Fatalf("peek of a page not kept: %v %v, want true and ErrNotCached", ok, err)
	}
	if got := h.Store.RecordsRead() - before; got != 0 {
		t.Fatalf("peek read %d records", got)
	}
	if err := cache.view(0, resolve); err != nil {
		t.Fatalf("view: %v", err)
	}
	before = h.Store.RecordsRead()
	if ok, err := cache.peek(resolve); !ok || err != nil {
		t.Fatalf("peek of a kept tool: %v %v", ok, err)
	}
	if got := h.Store.RecordsRead() - before; got != 0 {
		t.Fatalf("peek of a kept tool read %d records", got)
	}
	servetest.PublishCatalog(t, h.Store, 41, 10)
	if ok, _ := cache.peek(resolve); ok {
		t.Fatal("peek after a publish served what was kept before it")
	}
}

// TestCachedPageIsTheStoredPage: a page kept in the form tools/list writes
// gives back, through Page and PageWire, exactly what the store holds:
// every name and body, in order, and their tool objects joined.
func TestCachedPageIsTheStoredPage(t *testing.T) {
	h, reads := newTestHome(t), newStoreReads()
	servetest.PublishCatalog(t, h.Store, 5, 10) // two pages, the last short
	cache := primedCache(h, reads, "local")
	_, err := h.ViewActive(func(ix *store.Index) error {
		ep, _ := ix.Endpoint("local")
		if ep.Pages < 2 {
			t.Fatalf("%d pages, want at least 2", ep.Pages)
		}
		for i := range ep.Pages {
			var names, bodies []string
			var wire []byte
			if err := ix.Page("local", i, func(name string, body []byte) error {
				names, bodies = append(names, name), append(bodies, string(body))
				if len(wire) > 0 {
					wire = append(wire, ',')
				}
				wire = policy.AppendToolWire(wire, name, body)
				return nil
			}); err != nil {
				return err
			}
			var gotNames, gotBodies []string
			var gotWire []byte
			if err := cache.view(0, func(_ uint64, cat mcpcore.Catalog) error {
				if err := cat.Page(i, func(name string, body []byte) error {
					gotNames, gotBodies = append(gotNames, name), append(gotBodies, string(body))
					return nil
				}); err != nil {
					return err
				}
				var err error
				gotWire, err = cat.(mcpcore.PageWirer).PageWire(i)
				return err
			}); err != nil {
				return err
			}
			if !slices.Equal(gotNames, names) || !slices.Equal(gotBodies, bodies) {
				t.Errorf("page %d: cached %q / %q, stored %q / %q", i, gotNames, gotBodies, names, bodies)
			}
			if string(gotWire) != string(wire) {
				t.Errorf("page %d: wire\n%s\nwant\n%s", i, gotWire, wire)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A catalog found current by a stamp says so (ReadAt, the stamp a call's
// pin is then checked as of); one read from the store says nothing, and
// its call's pin takes a stamp of its own.
func TestCatalogReadAt(t *testing.T) {
	h := newTestHome(t)
	servetest.PublishCatalog(t, h.Store, 4, 10)
	cache := primedCache(h, newStoreReads(), "local")
	now, ok := h.Store.Stamp()
	if !ok {
		t.Fatal("no stamp")
	}
	readAt := func(cat mcpcore.Catalog) any {
		rc, ok := cat.(mcpcore.ReadAtCatalog)
		if !ok {
			t.Fatalf("%T is no ReadAtCatalog", cat)
		}
		return rc.ReadAt()
	}
	check := func(name string, want bool, run func(fn func(uint64, mcpcore.Catalog) error) error) {
		t.Helper()
		var at any
		if err := run(func(_ uint64, cat mcpcore.Catalog) error { at = readAt(cat); return nil }); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		st, isStamp := at.(*store.Stamp)
		switch {
		case want && (!isStamp || *st != now):
			t.Errorf("%s: ReadAt %v, want the stamp %v", name, at, now)
		case !want && at != nil:
			t.Errorf("%s: ReadAt %v, want nil", name, at)
		}
	}
	check("peek", true, func(fn func(uint64, mcpcore.Catalog) error) error {
		ok, err := cache.peek(fn)
		if !ok {
			return errors.New("nothing kept")
		}
		return err
	})
	check("a view of what is kept", true, func(fn func(uint64, mcpcore.Catalog) error) error { return cache.view(0, fn) })
	servetest.PublishCatalog(t, h.Store, 5, 10)
	check("a view that reads the store", false, func(fn func(uint64, mcpcore.Catalog) error) error { return cache.view(0, fn) })
}

// TestServeViewSharesPagesStillHeld: a page the cache has no room for is
// read once while a response still holds it: the agents walking at once
// that ask for it meanwhile are answered from the same bytes, and nothing
// keeps it once no one holds it.
func TestServeViewSharesPagesStillHeld(t *testing.T) {
	h, reads := newTestHome(t), newStoreReads()
	servetest.PublishCatalog(t, h.Store, 200, 10) // some 90 pages: more than the cache keeps
	cache := primedCache(h, reads, "local")
	wire := func(i int) []byte {
		t.Helper()
		var b []byte
		err := cache.view(0, func(n uint64, cat mcpcore.Catalog) error {
			var err error
			b, err = cat.(mcpcore.PageWirer).PageWire(i)
			return err
		})
		if err != nil || len(b) == 0 {
			t.Fatalf("page %d: %v, %d bytes", i, err, len(b))
		}
		cache.settle()
		return b
	}
	for i := range 40 {
		wire(i) // the cache is full long before page 40
	}
	r := cache.rev
	r.mu.Lock()
	held := r.recentLocked(45) // read ahead and taken by no one: not remembered yet
	r.mu.Unlock()
	if held != nil {
		t.Fatal("page 45 is known before anyone read it")
	}
	first := wire(45)
	r.mu.Lock()
	held = r.recentLocked(45)
	r.mu.Unlock()
	if held == nil {
		t.Fatal("page 45, not kept, is not remembered while it is held")
	}
	before := h.Store.RecordsRead()
	again := wire(45)
	if got := h.Store.RecordsRead() - before; got != 0 && got >= int64(len(held.tools)) {
		t.Errorf("page 45 asked for again while held read %d records, want at most its next page's", got)
	}
	if &again[0] != &first[0] {
		t.Error("page 45 asked for again while held is a second copy, not the same bytes")
	}
	if _, kept := r.pages[45]; kept {
		t.Fatal("page 45 is kept: the test needs a page the cache has no room for")
	}
}
