package commands

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/serve/servetest"
	"github.com/rukh-dev/rukh/store"
)

// TestRequestsReadConstantRecords: at 20,000 published commands, building
// a CLI command and its group's help read as many store records as at 80:
// never the whole revision (serve's test counts the requests of agents).
func TestRequestsReadConstantRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: publishes a catalogue of 20,000 commands")
	}
	type counts struct{ cli, help int64 }
	measure := func(packages int) counts {
		a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, h: &home.Home{Env: func(string) string { return "" }, Store: store.New(t.TempDir())}}
		servetest.PublishCatalog(t, a.h.Store, packages, 10)
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
		return c
	}
	small, large := measure(8), measure(2000)
	t.Logf("records read at 80 and 20,000 commands: %+v %+v", small, large)
	if small != large {
		t.Errorf("records read grow with the catalogue: %+v at 80 commands, %+v at 20,000", small, large)
	}
	// a CLI call reads the set of untrusted releases once, beside its route
	if large.cli > 7 || large.help > 16 {
		t.Errorf("records read: %+v", large)
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
	servetest.PublishCatalog(t, writer.h.Store, 3, 10)
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
		servetest.PublishCatalog(t, writer.h.Store, []int{5, 3}[publishes%2], 10)
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
	servetest.PublishCatalog(b, a.h.Store, 1, 1)
	if _, err := a.h.UntrustedReleases(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := a.h.UntrustedReleases(); err != nil {
			b.Fatal(err)
		}
	}
}
