// Command indexprobe explains where a home's store size goes and what the
// per-request reads of the active revision cost: the store file per bucket,
// bytes per published command, and the time and records of one CLI route
// lookup, one tools/list page, one search (when the endpoint has search
// records) and one tools/call resolution.
//
//	go run ./bench/indexprobe HOME
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/rukh-dev/rukh/store"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: indexprobe RUKH_HOME")
		os.Exit(2)
	}
	if err := probe(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "indexprobe:", err)
		os.Exit(1)
	}
}

func probe(home string) error {
	s := store.New(home)
	fi, err := os.Stat(s.Path())
	if err != nil {
		return err
	}
	revs, err := s.Revisions()
	if err != nil {
		return err
	}
	stats, err := s.Stats()
	if err != nil {
		return err
	}
	var commands, tools int
	var route []string
	var endpoint, tool string
	var listed, searchable bool
	if _, err := s.ViewActive(func(ix *store.Index) error {
		for _, ep := range ix.Endpoints() {
			tools += ep.Tools
			if ep.Tools > 0 && endpoint == "" {
				endpoint, listed, searchable = ep.Name, ep.Pages > 0, ep.Search
			}
		}
		if endpoint != "" {
			// Any tool: a progressive endpoint may list none of them.
			errFound := fmt.Errorf("found")
			if err := ix.Tools(endpoint, func(t store.Tool) error { tool = t.Name; return errFound }); err != nil && err != errFound {
				return err
			}
		}
		return ix.Routes(func(r store.Route) error {
			if r.Kind == store.RouteCommand {
				commands++
				route = r.Words
			}
			return nil
		})
	}); err != nil {
		return err
	}
	fmt.Printf("store %s: %.1f MiB, %d revision(s), active: %d commands, %d tools\n", s.Path(), float64(fi.Size())/(1<<20), len(revs), commands, tools)
	used := 0
	for _, b := range stats {
		used += b.Bytes
		fmt.Printf("  bucket %-10s %8d keys %10.1f KiB\n", b.Name, b.Keys, float64(b.Bytes)/1024)
	}
	if commands > 0 {
		fmt.Printf("  in use: %.0f bytes per command per revision (file: %.0f)\n", float64(used)/float64(commands*len(revs)), float64(fi.Size())/float64(commands*len(revs)))
	}
	timeit := func(what string, fn func(ix *store.Index) error) {
		const n = 200
		before := s.RecordsRead()
		t := time.Now()
		for range n {
			if _, err := s.ViewActive(fn); err != nil {
				fmt.Printf("  %s: %v\n", what, err)
				return
			}
		}
		fmt.Printf("  %-28s %8s per request (store open included), %d records\n", what, (time.Since(t) / n).Round(time.Microsecond), (s.RecordsRead()-before)/n)
	}
	if route != nil {
		timeit("CLI: route + declaration", func(ix *store.Index) error {
			r, _, err := ix.Route(route)
			if err == nil {
				_, err = ix.Decl(r.Decl)
			}
			return err
		})
	}
	if endpoint != "" && listed {
		timeit("tools/list: first page", func(ix *store.Index) error {
			return ix.Page(endpoint, 0, func(string, []byte) error { return nil })
		})
	}
	if endpoint != "" && searchable {
		// A bench tool's words and two words every bench tool has.
		timeit("search: 4 terms, 10 hits", func(ix *store.Index) error {
			_, err := ix.Search(endpoint, "bench command p0000 c00", 10)
			return err
		})
	}
	if endpoint != "" {
		timeit("tools/call: name + declaration", func(ix *store.Index) error {
			t, _, err := ix.Tool(endpoint, tool)
			if err == nil {
				_, err = ix.Decl(t.Decl)
			}
			return err
		})
	}
	return nil
}
