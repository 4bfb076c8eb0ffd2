package commands

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcpstdio"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
)

// publishCatalog publishes packages×perPackage commands ("p3.c7", path
// "p3 c7") as tools of the local endpoint, through policy.Build and the
// store's index writer, as publish does.
func publishCatalog(t *testing.T, a *app, packages, perPackage int) {
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
	base, err := a.store.Active()
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.store.Publish(base, func(_ uint64, id string, w *store.IndexWriter) (store.Revision, error) {
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
// resolution read as many store records as at 40: never the whole revision.
func TestRequestsReadConstantRecords(t *testing.T) {
	type counts struct{ cli, help, list, call int64 }
	measure := func(packages int) counts {
		a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, env: func(string) string { return "" }, store: store.New(t.TempDir())}
		publishCatalog(t, a, packages, 10)
		var c counts
		reads := func(fn func()) int64 {
			before := a.store.RecordsRead()
			fn()
			return a.store.RecordsRead() - before
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
		var view func(uint64, func(uint64, mcpstdio.Catalog) error) error
		var name string
		c.list = reads(func() {
			view = a.serveView("local") // reads the first page at start
			err := view(0, func(n uint64, cat mcpstdio.Catalog) error {
				return cat.Page(0, func(nm string, body []byte) error { name = nm; return nil })
			})
			if err != nil || name == "" {
				t.Fatalf("list: %v", err)
			}
		})
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
	small, large := measure(4), measure(2000)
	t.Logf("records read at 40 and 20,000 commands: %+v %+v", small, large)
	if small != large {
		t.Errorf("records read grow with the catalogue: %+v at 40 commands, %+v at 20,000", small, large)
	}
	if large.cli > 6 || large.help > 16 || large.list > 4+32 || large.call > 6 {
		t.Errorf("records read: %+v", large)
	}
}

// TestServeViewKeepsWhatItRead: serve-mcp answers a list page and a tool it
// read before without reading the store again while nothing was committed,
// and sees a publish at the very next request.
func TestServeViewKeepsWhatItRead(t *testing.T) {
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, env: func(string) string { return "" }, store: store.New(t.TempDir())}
	publishCatalog(t, a, 4, 10)
	view := a.serveView("local")
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
	before := a.store.RecordsRead()
	list()
	resolve()
	if got := a.store.RecordsRead() - before; got != 0 {
		t.Fatalf("a repeated list and call read %d records", got)
	}
	// The server's own audit records change nothing it serves; another
	// process's commit (here: another handle's audit) may have.
	if err := a.store.AppendAudit(store.AuditRecord{Endpoint: "local", Command: "x.y", Outcome: "succeeded"}); err != nil {
		t.Fatal(err)
	}
	list()
	resolve()
	if got := a.store.RecordsRead() - before; got != 0 {
		t.Fatalf("a list and call after the server's own audit records read %d records", got)
	}
	if err := store.New(a.store.Home()).AppendAudit(store.AuditRecord{Endpoint: "local", Command: "x.y", Outcome: "succeeded"}); err != nil {
		t.Fatal(err)
	}
	list()
	if got := a.store.RecordsRead() - before; got == 0 {
		t.Fatal("the list after another process's commit read nothing")
	}
	before = a.store.RecordsRead()
	publishCatalog(t, a, 5, 10)
	list()
	if got := a.store.RecordsRead() - before; got == 0 {
		t.Fatal("the list after a publish read nothing")
	}
	active, err := a.store.Active()
	if err != nil || first != active || first < 2 {
		t.Fatalf("the list after a publish served revision %d, active %d (%v)", first, active, err)
	}
}

// TestServeViewSharesPageReads: concurrent requests for a page serve-http
// has not kept wait for one read of it, and every store read waits for the
// bound on opens at once (storeReads): sixteen agents walking a large
// catalogue map the store file once, not sixteen times.
func TestServeViewSharesPageReads(t *testing.T) {
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, env: func(string) string { return "" }, store: store.New(t.TempDir())}
	publishCatalog(t, a, 200, 10) // 63 pages: more than the cache keeps
	view := a.serveView("local")
	page := func(i int) ([]string, error) {
		var names []string
		err := view(0, func(n uint64, cat mcpstdio.Catalog) error {
			return cat.Page(i, func(nm string, body []byte) error { names = append(names, nm); return nil })
		})
		return names, err
	}
	before := a.store.RecordsRead()
	want, err := page(40)
	if err != nil || len(want) != 32 {
		t.Fatalf("page 40: %v, %d tools", err, len(want))
	}
	one := a.store.RecordsRead() - before

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
	before = a.store.RecordsRead()
	for range agents {
		go func() {
			names, err := page(41)
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
				t.Errorf("page 41: %v, %d tools", ans.err, len(ans.names))
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no answer after the bound was released")
		}
	}
	if got := a.store.RecordsRead() - before; got != one {
		t.Errorf("%d concurrent requests for one page read %d records, want %d (one read)", agents, got, one)
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
	home := t.TempDir()
	writer := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, env: func(string) string { return "" }, store: store.New(home)}
	publishCatalog(t, writer, 3, 10)
	reader := store.New(home)
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
		if err := writer.store.AppendAudit(store.AuditRecord{Endpoint: "local", Command: "x.y", Outcome: "succeeded"}); err != nil {
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
