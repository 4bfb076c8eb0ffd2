//go:build linux

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/rukh-dev/rukh/store"
)

// The discovery rows: what a host reads before its first useful call in
// direct mode (every tools/list page) and in progressive mode (the list,
// one search, one describe), and the search tool's latency, first after
// start and warm. A home measures direct first, then republishes its
// endpoint progressive.

// discoveryResult is what one home's discovery measurement found.
type discoveryResult struct {
	tools                     int
	directBytes, directPages  int
	listBytes, searchBytes    int
	describeBytes, listedHere int
	first, warm               stats
	index                     store.SearchSize // of the progressive revision
	noIndex                   bool
}

// searchQuery is the i-th query of the bench: a bench tool's own words
// (its package and command words) plus two words every bench tool has, so
// two of its four terms read a block at the per-term cap.
func searchQuery(i int, z size) (query, want string) {
	p, c := (i*7919)%z.packages, (i*31)%z.commands
	return fmt.Sprintf("bench command p%04d c%02d", p, c), fmt.Sprintf("p%04d_c%02d__", p, c)
}

// searchResult is the part of a search tool's answer the bench checks.
type searchResult struct {
	Result struct {
		IsError           bool `json:"isError"`
		StructuredContent struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"structuredContent"`
	} `json:"result"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func decodeSearch(line []byte) (*searchResult, error) {
	var r searchResult
	if err := json.Unmarshal(line, &r); err != nil {
		return nil, fmt.Errorf("search response %.200q: %v", line, err)
	}
	if r.Error != nil || r.Result.IsError {
		return nil, fmt.Errorf("search failed: %.300s", line)
	}
	return &r, nil
}

// searchCall is a tools/call of the search tool.
func (s *session) searchCall(tool, query string) []byte {
	args, _ := json.Marshal(map[string]any{"query": query, "limit": 10})
	return s.call(tool, string(args))
}

// walkBytes pages through tools/list and returns the response bytes, the
// pages and the tools listed.
func (s *session) walkBytes() (bytes, pages int, names []string, err error) {
	cursor := ""
	for {
		line, _, err := s.roundTrip(s.list(cursor))
		if err != nil {
			return 0, 0, nil, err
		}
		r, err := decode(line)
		if err != nil {
			return 0, 0, nil, err
		}
		bytes, pages = bytes+len(line), pages+1
		for _, t := range r.Result.Tools {
			names = append(names, t.Name)
		}
		if r.Result.NextCursor == "" {
			return bytes, pages, names, nil
		}
		cursor = r.Result.NextCursor
	}
}

func nameWithPrefix(names []string, prefix string) string {
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			return n
		}
	}
	return ""
}

// measureDiscovery measures h (published direct, z's tools) in both modes;
// it leaves h published progressive. directBytes and directPages are a
// full walk's of the direct revision when the caller walked it (0: walk).
func measureDiscovery(c config, h *largeHome, z size, searches, directBytes, directPages int) (*discoveryResult, error) {
	res := &discoveryResult{tools: z.tools(), directBytes: directBytes, directPages: directPages}
	if directBytes == 0 {
		s, err := h.start()
		if err != nil {
			return nil, err
		}
		res.directBytes, res.directPages, _, err = s.walkBytes()
		s.close()
		if err != nil {
			return nil, err
		}
	}

	h.discovery = map[string]any{"mode": "progressive"}
	if err := h.setPolicy(h.names); err != nil {
		return nil, err
	}
	if _, err := h.rukh("publish"); err != nil {
		return nil, err
	}
	var err error
	if res.index, err = searchRecordBytes(h.dir); errors.Is(err, store.ErrNoSearch) {
		res.noIndex = true // a publish that wrote none: the row says so
	} else if err != nil {
		return nil, err
	}

	// What a host reads: the (short) list, one search, one describe.
	s, err := h.start()
	if err != nil {
		return nil, err
	}
	var names []string
	res.listBytes, _, names, err = s.walkBytes()
	if err != nil {
		s.close()
		return nil, err
	}
	res.listedHere = len(names)
	searchTool, describeTool := nameWithPrefix(names, "rukh_search-tools__"), nameWithPrefix(names, "rukh_describe-tool__")
	if searchTool == "" || describeTool == "" {
		s.close()
		return nil, fmt.Errorf("progressive tools/list has no search or describe tool: %v", names)
	}
	query, want := searchQuery(0, z)
	line, _, err := s.roundTrip(s.searchCall(searchTool, query))
	var sr *searchResult
	if err == nil {
		sr, err = decodeSearch(line)
	}
	if err == nil && (len(sr.Result.StructuredContent.Tools) == 0 || !strings.HasPrefix(sr.Result.StructuredContent.Tools[0].Name, want)) {
		err = fmt.Errorf("search %q: want %s* first, got %.300s", query, want, line)
	}
	if err != nil {
		s.close()
		return nil, err
	}
	res.searchBytes = len(line)
	n, _ := json.Marshal(map[string]string{"name": sr.Result.StructuredContent.Tools[0].Name})
	line, _, err = s.roundTrip(s.call(describeTool, string(n)))
	if err == nil {
		_, err = decodeSearch(line)
	}
	if err != nil {
		s.close()
		return nil, fmt.Errorf("describe: %v", err)
	}
	res.describeBytes = len(line)

	// Warm searches in the same session, a different tool's words each time.
	var warm []time.Duration
	for i := range c.warm + searches {
		q, want := searchQuery(i+1, z)
		line, d, err := s.roundTrip(s.searchCall(searchTool, q))
		if err == nil {
			sr, err = decodeSearch(line)
		}
		if err == nil && (len(sr.Result.StructuredContent.Tools) == 0 || !strings.HasPrefix(sr.Result.StructuredContent.Tools[0].Name, want)) {
			err = fmt.Errorf("search %q: want %s* first, got %.300s", q, want, line)
		}
		if err != nil {
			s.close()
			return nil, err
		}
		if i >= c.warm {
			warm = append(warm, d)
		}
	}
	s.close()
	res.warm = newStats(warm)

	// The first search of a fresh server, after discover and its list.
	var first []time.Duration
	for i := range 2 + c.cold/3 {
		s, err := h.start()
		if err != nil {
			return nil, err
		}
		line, _, err := s.roundTrip(s.discover())
		if err == nil {
			_, err = decode(line)
		}
		if err == nil {
			line, _, err = s.roundTrip(s.list(""))
			if err == nil {
				_, err = decode(line)
			}
		}
		var d time.Duration
		if err == nil {
			q, want := searchQuery(1000+i, z)
			line, d, err = s.roundTrip(s.searchCall(searchTool, q))
			if err == nil {
				sr, err = decodeSearch(line)
			}
			if err == nil && (len(sr.Result.StructuredContent.Tools) == 0 || !strings.HasPrefix(sr.Result.StructuredContent.Tools[0].Name, want)) {
				err = fmt.Errorf("search %q: want %s* first, got %.300s", q, want, line)
			}
		}
		s.close()
		if err != nil {
			return nil, err
		}
		if i >= 2 {
			first = append(first, d)
		}
	}
	res.first = newStats(first)
	h.discovery = nil
	return res, nil
}

// rows are the report's rows of r: latencies at the sizes they are asked
// for, bytes at all.
func (r *discoveryResult) rows(latency bool) []row {
	kib := func(b int) string { return fmt.Sprintf("%.1f KiB", float64(b)/1024) }
	progressive := r.listBytes + r.searchBytes + r.describeBytes
	rows := []row{
		{name: fmt.Sprintf("bytes before the first call, %d tools: direct tools/list, %d pages", r.tools, r.directPages), n: 1, median: kib(r.directBytes)},
		{name: fmt.Sprintf("   progressive: list (%d tools) + search + describe", r.listedHere), n: 1, median: kib(progressive),
			ratio: fmt.Sprintf("%.3f×", float64(progressive)/float64(r.directBytes))},
		{name: "   of which list / search / describe", n: 1, median: fmt.Sprintf("%d / %d / %d B", r.listBytes, r.searchBytes, r.describeBytes)},
	}
	if latency {
		rows = append(rows,
			timeRow(fmt.Sprintf("search, first after start (%d tools)", r.tools), r.first, 5*time.Millisecond),
			timeRow(fmt.Sprintf("search, warm (%d tools)", r.tools), r.warm, 5*time.Millisecond),
		)
	}
	x := r.index
	if r.noIndex {
		return append(rows, row{name: "   search records per command", n: 1, median: "none written"})
	}
	rows = append(rows,
		row{name: "   search records per command: postings + tool numbers", n: 1,
			median: fmt.Sprintf("%.0f B", float64(x.PostingBytes+x.NameBytes)/float64(r.tools))},
		row{name: fmt.Sprintf("      postings %d records, %.1f MiB; term bags (shared by revisions)", x.Postings, float64(x.PostingBytes)/(1<<20)), n: 1,
			median: fmt.Sprintf("%.0f B", float64(x.BagBytes)/float64(r.tools))})
	return rows
}

// benchDiscoverySize is a home of z's tools measured for discovery alone.
func benchDiscoverySize(c config, z size) ([]row, error) {
	c.packages, c.commands = z.packages, z.commands
	c.dir = filepath.Join(c.dir, "discovery") // apart from the -sizes homes
	logf("home of %d commands (discovery): setup and publish", z.tools())
	h, _, err := setupLarge(c)
	if err != nil {
		return nil, err
	}
	if _, err := h.rukh("publish"); err != nil {
		return nil, err
	}
	logf("home of %d commands (discovery): direct and progressive", z.tools())
	r, err := measureDiscovery(c, h, z, c.searches, 0, 0)
	if err != nil {
		return nil, err
	}
	return append([]row{{name: fmt.Sprintf("%d published commands (%d packages): discovery", z.tools(), z.packages)}}, r.rows(z.tools() >= 1000)...), nil
}

// searchRecordBytes is the active revision's search records of endpoint
// local: postings and tool numbers (the revision's own) plus the term bags
// of its bodies (shared with later revisions).
func searchRecordBytes(home string) (store.SearchSize, error) {
	var sz store.SearchSize
	_, err := store.New(home).ViewActive(func(ix *store.Index) error {
		var err error
		sz, err = ix.SearchSize("local")
		return err
	})
	return sz, err
}
