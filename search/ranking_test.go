package search_test

import (
	"bufio"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/search"
)

// rankingQuery is one line of testdata/ranking-queries.tsv.
type rankingQuery struct {
	line             int
	catalogue, query string
	expected         []string // command ids or path.Match patterns
}

func readQueries(t *testing.T) []rankingQuery {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "ranking-queries.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var qs []rankingQuery
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != 3 {
			t.Fatalf("ranking-queries.tsv:%d: %d columns, want 3", n, len(cols))
		}
		qs = append(qs, rankingQuery{n, cols[0], cols[1], strings.Split(cols[2], "|")})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return qs
}

// catalogue is one endpoint's tools, indexed as a publish indexes them.
type catalogue struct {
	index   *search.Index
	command map[string]string // tool name → command id
}

// publish builds the revision that publishes manifests on endpoint local
// (stable tool names, as an endpoint an agent keeps would use) and indexes
// its tools from their tool objects, exactly what a publish indexes.
func publish(t *testing.T, manifests []*kernel.Manifest) catalogue {
	t.Helper()
	var rels []policy.ReleaseInput
	var pkgs []string
	for _, m := range manifests {
		rels = append(rels, policy.ReleaseInput{
			BoundRelease: policy.BoundRelease{Digest: "h1:" + m.Name, Dir: "releases/" + m.Name + "@" + m.Version, AllowUnsigned: true},
			Manifest:     m,
		})
		pkgs = append(pkgs, m.Name)
	}
	prof := policy.DefaultProfile()
	ep := prof.Endpoints[policy.DefaultEndpoint]
	ep.ToolNames = policy.ToolNamesStable
	ep.Publish = policy.Publish{Packages: pkgs}
	prof.Endpoints[policy.DefaultEndpoint] = ep
	b, _, err := policy.Build(policy.Input{Revision: "r1", Profile: prof, Releases: rels})
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	var proj *policy.Projection
	for i := range b.Endpoints {
		if b.Endpoints[i].Endpoint == policy.DefaultEndpoint {
			proj = &b.Endpoints[i]
		}
	}
	if proj == nil || len(proj.Tools) == 0 {
		t.Fatalf("endpoint %s publishes nothing", policy.DefaultEndpoint)
	}
	c := catalogue{command: map[string]string{}}
	var docs []search.Doc
	for _, tool := range proj.Tools {
		d, err := search.ToolDoc(tool.Name, tool.Command, tool.Wire)
		if err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		docs = append(docs, d)
		c.command[tool.Name] = tool.Command
	}
	c.index = search.Build(docs)
	return c
}

func readManifest(t *testing.T, file string) *kernel.Manifest {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	m, err := kernel.ParseManifest(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return m
}

// genManifests is the generated catalogue as one package per service.
func genManifests(t *testing.T) []*kernel.Manifest {
	t.Helper()
	byPkg := map[string][]any{}
	var order []string
	for _, c := range genCatalogue() {
		params := []any{}
		for _, p := range c.Params {
			params = append(params, map[string]any{"id": p.ID, "type": "string", "flag": p.ID, "maxLength": 200, "description": p.Description})
		}
		if _, ok := byPkg[c.Package]; !ok {
			order = append(order, c.Package)
		}
		byPkg[c.Package] = append(byPkg[c.Package], map[string]any{
			"id": c.ID, "path": c.Path, "summary": c.Summary, "description": c.Description, "params": params,
			"execute": map[string]any{"program": "bin/prog", "args": []string{c.ID}, "result": map[string]any{"kind": "text"}},
			"machine": map[string]any{"eligible": true, "interaction": "none",
				"requiredFeatures": []any{map[string]any{"id": "command-result", "version": 1}}},
			"hints": map[string]any{"title": c.Title},
		})
	}
	var out []*kernel.Manifest
	for _, name := range order {
		data, err := json.Marshal(map[string]any{
			"apiVersion": "rukh.extension/2", "name": name, "version": "1.0.0", "publisher": "gen",
			"description": "generated", "commands": byPkg[name],
		})
		if err != nil {
			t.Fatal(err)
		}
		m, err := kernel.ParseManifest(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, m)
	}
	return out
}

// knownMisses are queries (by line of ranking-queries.tsv) that miss today
// and were reported rather than edited: each is logged, not failed, and the
// test fails when one starts to pass so the list is kept honest.
var knownMisses = map[int]string{
	// "add a dns record in cloudflare": "add" scores rule-add (a verb word
	// of the command id) above create, whose text says "Creates a new".
	48: "cloudflare.dns-records.create",
}

// TestRanking: for each query of testdata/ranking-queries.tsv, the expected
// command is among the top 3 hits. It reports the hit rate and every miss.
func TestRanking(t *testing.T) {
	qs := readQueries(t)
	if len(qs) < 30 {
		t.Fatalf("%d queries, want at least 30", len(qs))
	}
	cats := map[string]catalogue{
		"notes":       publish(t, []*kernel.Manifest{readManifest(t, "../examples/notes/package/rukh-extension.json")}),
		"conformance": publish(t, []*kernel.Manifest{readManifest(t, "../testdata/conformance/pkg/rukh-extension.json")}),
	}
	gen := genManifests(t)
	cats["generated"] = publish(t, gen)
	if n := len(cats["generated"].command); n != genSize {
		t.Fatalf("generated catalogue publishes %d tools, want %d", n, genSize)
	}
	hits := map[string][2]int{}
	for _, q := range qs {
		c, ok := cats[q.catalogue]
		if !ok {
			t.Fatalf("ranking-queries.tsv:%d: unknown catalogue %q", q.line, q.catalogue)
		}
		top := c.index.Search(q.query, 3)
		var got []string
		found := false
		for _, h := range top {
			id := c.command[h.Name]
			got = append(got, id)
			for _, e := range q.expected {
				if ok, _ := path.Match(e, id); ok {
					found = true
				}
			}
		}
		n := hits[q.catalogue]
		n[1]++
		_, known := knownMisses[q.line]
		switch {
		case found && known:
			n[0]++
			t.Errorf("ranking-queries.tsv:%d: %s %q now finds %s: drop it from knownMisses", q.line, q.catalogue, q.query, strings.Join(q.expected, " or "))
		case found:
			n[0]++
		case known:
			t.Logf("known miss, ranking-queries.tsv:%d: %s %q: want %s in the top 3, got %v", q.line, q.catalogue, q.query, strings.Join(q.expected, " or "), got)
		default:
			t.Errorf("ranking-queries.tsv:%d: %s %q: want %s in the top 3, got %v", q.line, q.catalogue, q.query, strings.Join(q.expected, " or "), got)
		}
		hits[q.catalogue] = n
	}
	total := [2]int{}
	for _, name := range []string{"notes", "conformance", "generated"} {
		n := hits[name]
		total[0] += n[0]
		total[1] += n[1]
		t.Logf("%-11s %d/%d in the top 3", name, n[0], n[1])
	}
	t.Logf("hit rate: %d/%d (%.0f%%)", total[0], total[1], 100*float64(total[0])/float64(total[1]))
}
