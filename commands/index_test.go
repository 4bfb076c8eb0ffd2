package commands

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcpstdio"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
)

// publishCatalog publishes packages×perPackage commands ("p3.c7", path
// "p3 c7") as tools of the local endpoint, through policy.Build and the
// store's index writer, as publish does.
func publishCatalog(t testing.TB, a *app, packages, perPackage int) {
	t.Helper()
	in := policy.Input{}
	var pkgs []string
	for p := range packages {
		name := fmt.Sprintf("acme.p%d", p)
		pkgs = append(pkgs, `"`+name+`"`)
		var cmds []string
		for c := range perPackage {
			cmds = append(cmds, fmt.Sprintf(`{"id":"p%d.c%d","path":["p%d","c%d"],"summary":"command %d of %d",
				"params":[{"id":"title","type":"string","flag":"title","maxLength":100},{"id":"n","type":"integer","flag":"n","default":3}],
				"execute":{"program":"bin/x","result":{"kind":"text"}},
				"machine":{"eligible":true,"interaction":"none","requiredFeatures":[{"id":"command-result","version":1}]}}`, p, c, p, c, c, p))
		}
		m, err := kernel.ParseManifest([]byte(fmt.Sprintf(`{"apiVersion":"rukh.extension/2","name":%q,"version":"1.0.0","publisher":"acme","commands":[%s]}`,
			name, strings.Join(cmds, ","))))
		if err != nil {
			t.Fatal(err)
		}
		in.Releases = append(in.Releases, policy.ReleaseInput{BoundRelease: policy.BoundRelease{Digest: fmt.Sprintf("h1:%043d=", p), AllowUnsigned: true}, Manifest: m})
	}
	prof, err := policy.ParseProfile([]byte(`{"endpoints":{"local":{"namespace":"n","publish":{"packages":[` + strings.Join(pkgs, ",") + `]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	in.Profile = prof
	base, err := a.h.Store.Active()
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.h.Store.Publish(base, func(_ uint64, id string, w *store.IndexWriter) (store.Revision, error) {
		in.Revision = id
		b, _, err := policy.Build(in)
		if err != nil {
			return store.Revision{}, err
		}
		return store.Revision{}, policy.WriteIndex(b, w)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRequestsReadConstantRecords: at 20,000 published commands, building
// a CLI command, its group's help, a tools/list page and a tools/call
// resolution read as many store records as at 80 (the list: its page and
// the next, read ahead): never the whole revision.
func TestRequestsReadConstantRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: publishes a catalogue of 20,000 commands")
	}
	type counts struct{ cli, help, list, call int64 }
	measure := func(packages int) counts {
		a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, h: &home.Home{Env: func(string) string { return "" }, Store: store.New(t.TempDir())}}
		publishCatalog(t, a, packages, 10)
		var c counts
		reads := func(fn func()) int64 {
			before := a.h.Store.RecordsRead()
			fn()
			return a.h.Store.RecordsRead() - before
		}
		c.cli = reads(func() {
			root, err := a.root([]string{"rukh", "p1", "c7", "--title", "x"})
			if err != nil || root.Command("p1") == nil || root.Command("p1").Command("c7") == nil {
				t.Fatalf("root: %v", err)
			}
		})
		c.help = reads(func() {
			root, err := a.root([]string{"rukh", "p1", "--help"})
			if err != nil || len(root.Command("p1").Commands) != 10 {
				t.Fatalf("root: %v", err)
			}
		})
		var cache *serveCache
		var name string
		c.list = reads(func() {
			cache = a.primedCache("local") // reads the first page at start
			err := cache.view(0, func(n uint64, cat mcpstdio.Catalog) error {
				return cat.Page(0, func(nm string, body []byte) error { name = nm; return nil })
			})
			if err != nil || name == "" {
				t.Fatalf("list: %v", err)
			}
			cache.settle() // the next page, read ahead
		})
		view := cache.view
		c.call = reads(func() {
			err := view(0, func(n uint64, cat mcpstdio.Catalog) error {
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
	// a CLI call reads the set of untrusted releases once, beside its route
	if large.cli > 7 || large.help > 16 || large.list > 4+2*33 || large.call > 6 {
		t.Errorf("records read: %+v", large)
	}
}

// TestServeViewKeepsWhatItRead: serve-mcp answers a list page and a tool it
// read before without reading the store again while nothing was committed,
// and sees a publish at the very next request.
func TestServeViewKeepsWhatItRead(t *testing.T) {
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, h: &home.Home{Env: func(string) string { return "" }, Store: store.New(t.TempDir())}}
	publishCatalog(t, a, 4, 10)
	cache := a.primedCache("local")
	view := cache.view
	var first uint64
	var name string
	list := func() {
		t.Helper()
		if err := view(0, func(n uint64, cat mcpstdio.Catalog) error {
			first = n
			return cat.Page(0, func(nm string, body []byte) error { name = nm; return nil })
		}); err != nil || name == "" {
			t.Fatalf("list: %v", err)
		}
	}
	resolve := func() {
		t.Helper()
		if err := view(0, func(n uint64, cat mcpstdio.Catalog) error {
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
	before := a.h.Store.RecordsRead()
	list()
	resolve()
	if got := a.h.Store.RecordsRead() - before; got != 0 {
		t.Fatalf("a repeated list and call read %d records", got)
	}
	// The server's own audit records change nothing it serves; another
	// process's commit (here: another handle's audit) may have.
	if err := a.h.Store.AppendAudit(store.AuditRecord{Endpoint: "local", Command: "x.y", Outcome: "succeeded"}); err != nil {
		t.Fatal(err)
	}
	list()
	resolve()
	if got := a.h.Store.RecordsRead() - before; got != 0 {
		t.Fatalf("a list and call after the server's own audit records read %d records", got)
	}
	if err := store.New(a.h.Store.Home()).AppendAudit(store.AuditRecord{Endpoint: "local", Command: "x.y", Outcome: "succeeded"}); err != nil {
		t.Fatal(err)
	}
	list()
	if got := a.h.Store.RecordsRead() - before; got == 0 {
		t.Fatal("the list after another process's commit read nothing")
	}
	before = a.h.Store.RecordsRead()
	publishCatalog(t, a, 5, 10)
	list()
	if got := a.h.Store.RecordsRead() - before; got == 0 {
		t.Fatal("the list after a publish read nothing")
	}
	active, err := a.h.Store.Active()
	if err != nil || first != active || first < 2 {
		t.Fatalf("the list after a publish served revision %d, active %d (%v)", first, active, err)
	}
}

// TestServeViewSharesPageReads: concurrent requests for a page serve-http
// has not kept wait for one read of it, and every store read waits for the
// bound on opens at once (storeReads): sixteen agents walking a large
// catalogue map the store file once, not sixteen times.
func TestServeViewSharesPageReads(t *testing.T) {
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, h: &home.Home{Env: func(string) string { return "" }, Store: store.New(t.TempDir())}}
	publishCatalog(t, a, 200, 10) // 63 pages: more than the cache keeps
	cache := a.primedCache("local")
	view := cache.view
	page := func(i int) ([]string, error) {
		var names []string
		err := view(0, func(n uint64, cat mcpstdio.Catalog) error {
			return cat.Page(i, func(nm string, body []byte) error { names = append(names, nm); return nil })
		})
		return names, err
	}
	before := a.h.Store.RecordsRead()
	want, err := page(40)
	if err != nil || len(want) != 32 {
		t.Fatalf("page 40: %v, %d tools", err, len(want))
	}
	cache.settle()
	two := a.h.Store.RecordsRead() - before // page 40, and page 41 read ahead

	// Hold every permit: no request may read the store meanwhile.
	for range cap(storeReads) {
		storeReads <- struct{}{}
	}
	const agents = 16
	type answer struct {
		names []string
		err   error
	}
	answers := make(chan answer, agents)
	before = a.h.Store.RecordsRead()
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
	for range cap(storeReads) {
		<-storeReads
	}
	for range agents {
		select {
		case ans := <-answers:
			if ans.err != nil || len(ans.names) != 32 || ans.names[0] == want[0] {
				t.Errorf("page 50: %v, %d tools", ans.err, len(ans.names))
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no answer after the bound was released")
		}
	}
	cache.settle()
	if got := a.h.Store.RecordsRead() - before; got != two {
		t.Errorf("%d concurrent requests for one page read %d records, want %d (one read of it, one of the next)", agents, got, two)
	}
}

// TestServeViewReadsAhead: while a client walks the list, the page after
// the one it asked for is read before it asks, so each request finds its
// page read; pages read ahead that nobody takes stay within their bound.
func TestServeViewReadsAhead(t *testing.T) {
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, h: &home.Home{Env: func(string) string { return "" }, Store: store.New(t.TempDir())}}
	publishCatalog(t, a, 200, 10) // 63 pages: more than the cache keeps
	cache := a.primedCache("local")
	page := func(i int) int64 {
		t.Helper()
		cache.settle()
		before := a.h.Store.RecordsRead()
		var names []string
		err := cache.view(0, func(n uint64, cat mcpstdio.Catalog) error {
			return cat.Page(i, func(nm string, body []byte) error { names = append(names, nm); return nil })
		})
		if err != nil || len(names) == 0 {
			t.Fatalf("page %d: %v, %d tools", i, err, len(names))
		}
		cache.settle()
		return a.h.Store.RecordsRead() - before
	}
	one := page(0) // kept since the start: only page 1 is read, ahead
	if one == 0 {
		t.Fatal("page 0 read nothing ahead")
	}
	for i := 1; i < 61; i++ {
		if got := page(i); got != one {
			t.Fatalf("page %d read %d records, want %d: the next page only", i, got, one)
		}
	}
	if got := page(61); got == 0 || got >= one {
		t.Fatalf("page 61 read %d records, want those of the last page (16 tools)", got)
	}
	if got := page(62); got != 0 {
		t.Fatalf("the last page read %d records, want 0: it was read ahead and has no next", got)
	}
	r := cache.rev
	if len(r.ahead) != 0 || r.aheadBytes != 0 {
		t.Errorf("after the walk %d pages (%d bytes) read ahead are still kept", len(r.ahead), r.aheadBytes)
	}

	// A request that comes while its page is being read ahead waits for
	// that read and takes the page: none is left kept for nobody.
	list := func(i int) error {
		return cache.view(0, func(n uint64, cat mcpstdio.Catalog) error {
			return cat.Page(i, func(string, []byte) error { return nil })
		})
	}
	publishCatalog(t, a, 200, 10)
	cache = a.primedCache("local")
	for i := range 40 {
		page(i) // the cache is full long before page 40
	}
	for range cap(storeReads) {
		storeReads <- struct{}{}
	}
	if err := list(40); err != nil { // read ahead: no store read; page 41 waits for a permit
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- list(41) }()
	time.Sleep(50 * time.Millisecond)
	for range cap(storeReads) {
		<-storeReads
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
	publishCatalog(t, a, 201, 10)
	cache = a.primedCache("local")
	for i := 0; i < 62; i += 2 {
		page(i)
	}
	r = cache.rev
	if r.aheadBytes > cacheAheadBytes || r.pageBytes > cachePageBytes {
		t.Errorf("kept %d bytes of pages and %d read ahead, bounds %d and %d", r.pageBytes, r.aheadBytes, cachePageBytes, cacheAheadBytes)
	}
	if _, kept := r.ahead[61]; !kept {
		t.Errorf("the page read ahead last (61) was not kept: %v", slices.Sorted(maps.Keys(r.ahead)))
	}
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

// TestSnapshotReadsUnderPublishes: a server's snapshot reads (no lock, no
// mapping) stay consistent while another process publishes one revision
// after another: every view sees one whole revision — all its pages, each
// body a JSON object, as many tools as that revision has — never a mix,
// whatever the commits rewrote meanwhile.
func TestSnapshotReadsUnderPublishes(t *testing.T) {
	if testing.Short() {
		t.Skip("publishes for a few seconds")
	}
	dir := t.TempDir()
	writer := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, h: &home.Home{Env: func(string) string { return "" }, Store: store.New(dir)}}
	publishCatalog(t, writer, 3, 10)
	reader := store.New(dir)
	reader.SnapshotReads()

	stop := make(chan struct{})
	type outcome struct {
		views, revisions int
		err              error
	}
	done := make(chan outcome, 1)
	go func() {
		seen := map[uint64]int{} // revision → tools in it
		views := 0
		for ; ; views++ {
			select {
			case <-stop:
				done <- outcome{views, len(seen), nil}
				return
			default:
			}
			var n uint64
			tools := 0
			_, err := reader.ViewActive(func(ix *store.Index) error {
				n, tools = ix.Number(), 0
				ep, ok := ix.Endpoint("local")
				if !ok {
					return fmt.Errorf("revision %d has no endpoint local", n)
				}
				for i := range ep.Pages {
					if err := ix.Page("local", i, func(name string, body []byte) error {
						if !strings.HasPrefix(name, "p") || len(body) == 0 || body[0] != '{' || body[len(body)-1] != '}' {
							return fmt.Errorf("page %d: tool %q has body %.80q", i, name, body)
						}
						tools++
						return nil
					}); err != nil {
						return err
					}
				}
				return nil
			})
			if err == nil && tools != 30 && tools != 50 {
				err = fmt.Errorf("revision %d has %d tools; every revision has 30 or 50", n, tools)
			}
			if before, ok := seen[n]; err == nil && ok && before != tools {
				err = fmt.Errorf("revision %d had %d tools, now %d", n, before, tools)
			}
			if err != nil {
				done <- outcome{views, len(seen), fmt.Errorf("view %d: %w", views, err)}
				return
			}
			seen[n] = tools
		}
	}()
	publishes := 0
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); publishes++ {
		publishCatalog(t, writer, []int{5, 3}[publishes%2], 10)
		if err := writer.h.Store.AppendAudit(store.AuditRecord{Endpoint: "local", Command: "x.y", Outcome: "succeeded"}); err != nil {
			close(stop)
			<-done
			t.Fatal(err)
		}
		select {
		case o := <-done:
			t.Fatalf("after %d publishes: %v", publishes, o.err)
		default:
		}
	}
	close(stop)
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	if publishes < 5 || o.revisions < 3 {
		t.Fatalf("only %d publishes and %d revisions seen in %d views: the reads did not race the writes", publishes, o.revisions, o.views)
	}
	t.Logf("%d views of %d revisions during %d publishes", o.views, o.revisions, publishes)
}

// BenchmarkUntrustedReleases is what a served call pays to learn whether
// its release is still trusted: a stamp read while nothing changed.
func BenchmarkUntrustedReleases(b *testing.B) {
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, h: &home.Home{Env: func(string) string { return "" }, Store: store.New(b.TempDir())}}
	publishCatalog(b, a, 1, 1)
	if _, err := a.h.UntrustedReleases(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := a.h.UntrustedReleases(); err != nil {
			b.Fatal(err)
		}
	}
}
