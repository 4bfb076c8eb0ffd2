package serve

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/serve/servetest"
	"github.com/rukh-dev/rukh/store"
)

// TestServeSearchReadsBoundedRecords: on a progressive endpoint of 20,000
// commands, a search through serve's catalog finds the command its words
// name and reads one record per query term and three per hit (number,
// tool, body), as at 80; describe reads two (plus the revision's, as
// any request); the list holds only the direct tools.
func TestServeSearchReadsBoundedRecords(t *testing.T) {
	packages := 2000
	if testing.Short() {
		packages = 50
	}
	type counts struct{ search, describe int64 }
	measure := func(packages int) counts {
		h := newTestHome(t)
		servetest.PublishCatalogWith(t, h.Store, packages, 10, `"discovery":{"mode":"progressive","direct":["p1.c2"]},`)
		cache := primedCache(h, newStoreReads(), "local")
		cache.settle()
		var c counts
		reads := func(fn func(cat mcpcore.Catalog) error) int64 {
			before := h.Store.RecordsRead()
			if err := cache.view(0, func(_ uint64, cat mcpcore.Catalog) error { return fn(cat) }); err != nil {
				t.Fatal(err)
			}
			return h.Store.RecordsRead() - before
		}
		var first string
		c.search = reads(func(cat mcpcore.Catalog) error {
			if d := cat.Discovery(); !d.Progressive() || len(d.Direct) != 1 {
				t.Errorf("discovery %+v", d)
			}
			var listed []string
			if err := cat.Page(0, func(name string, _ []byte) error { listed = append(listed, name); return nil }); err != nil {
				return err
			}
			if cat.Pages() != 1 || len(listed) != 1 {
				t.Errorf("a progressive endpoint lists %d tools in %d pages, want its one direct tool", len(listed), cat.Pages())
			}
			hits, err := cat.Search("p7 c3", 5)
			if err != nil {
				return err
			}
			// c3 is in every package: at 20,000 commands its postings keep
			// 1,024 of its 2,000 tools, so only p7 is sure to count there.
			if len(hits) != 5 || !strings.HasPrefix(hits[0].Name, "p7_") || packages < 100 && hits[0].Description != "command 3 of 7" {
				t.Errorf("search p7 c3 in %d packages: %+v", packages, hits)
			} else {
				first = hits[0].Name
			}
			return nil
		})
		start := time.Now()
		for range 20 {
			if err := cache.view(0, func(_ uint64, cat mcpcore.Catalog) error {
				_, err := cat.Search("command 3 of 7 in p9", 10)
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%d commands: a warm search of 4 terms (3 in 1,024 tools or more), 10 hits, takes %v", packages*10, time.Since(start)/20)
		c.describe = reads(func(cat mcpcore.Catalog) error {
			obj, ok, err := cat.Tool(first)
			if err != nil || !ok || len(obj) == 0 {
				t.Errorf("describe %s: %v %v", first, ok, err)
			}
			if _, ok, err := cat.Tool("nope__1"); ok || err != nil {
				t.Errorf("describe of an unknown tool: %v %v", ok, err)
			}
			return nil
		})
		return c
	}
	small, large := measure(8), measure(packages)
	t.Logf("records read at 80 and %d commands: %+v %+v", packages*10, small, large)
	if small != large || large.search > 2+3*5+2 || large.describe > 3+2 {
		t.Errorf("records read: %+v at 80 commands, %+v at %d", small, large, packages*10)
	}
}

// TestServeSearchOldRevision: a revision published before search records
// is served as before; a search on it is the store's clear refusal.
func TestServeSearchOldRevision(t *testing.T) {
	h := newTestHome(t)
	servetest.PublishCatalogUnsearched(t, h.Store, 2, 3)
	cache := primedCache(h, newStoreReads(), "local")
	err := cache.view(0, func(_ uint64, cat mcpcore.Catalog) error {
		if cat.Pages() != 1 || cat.Discovery() != nil {
			t.Errorf("pages %d, discovery %+v", cat.Pages(), cat.Discovery())
		}
		_, err := cat.Search("c1", 3)
		return err
	})
	if !errors.Is(err, store.ErrNoSearch) {
		t.Fatalf("search of an old revision: %v", err)
	}
}
