package mcpcore

import (
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/rukh-dev/rukh/mcpcore/mcpcoretest"
	"github.com/rukh-dev/rukh/policy"
)

// TestProgressiveListing: a progressive endpoint lists the tools its
// direct entries name (a command id, a package), and going progressive
// changes the list digest even when every tool stays listed, because the
// discovery tools follow them.
func TestProgressiveListing(t *testing.T) {
	binding := func(discovery map[string]any) *policy.Binding {
		b := mcpcoretest.Binding(1, 0, mcpcoretest.Template)
		if discovery != nil {
			var p map[string]map[string]map[string]any
			if err := json.Unmarshal(b.Profile, &p); err != nil {
				t.Fatal(err)
			}
			p["endpoints"]["local"]["discovery"] = discovery
			data, err := json.Marshal(p, json.Deterministic(true))
			if err != nil {
				t.Fatal(err)
			}
			b.Profile = data
		}
		return b
	}
	revs := map[uint64]*policy.Binding{
		1: binding(nil),
		2: binding(map[string]any{"mode": "progressive", "direct": []string{"test.pkg"}}),
		3: binding(map[string]any{"mode": "progressive", "direct": []string{"test.ok", "test.echo"}}),
		4: binding(map[string]any{"mode": "progressive"}),
	}
	s := newTestSession(Config{Endpoint: "local", Active: func() (uint64, error) { return 1, nil },
		Load: mcpcoretest.Bindings(func(n uint64) (*policy.Binding, error) { return revs[n], nil })})
	listed := map[uint64][]string{}
	for n := range revs {
		r, err := prepareRevision(n, mcpcoretest.View(t, revs[n]))
		if err != nil {
			t.Fatal(err)
		}
		for i := range r.Pages() {
			_ = r.Page(i, func(name string, _ []byte) error { listed[n] = append(listed[n], name); return nil })
		}
		if _, ok, _ := r.Tool(mcpcoretest.ToolName("hang", 1)); !ok {
			t.Errorf("revision %d: an unlisted tool is unknown to Tool", n)
		}
	}
	if len(listed[1]) != 10 || len(listed[2]) != 10 || len(listed[4]) != 0 {
		t.Errorf("listed %d, %d and %d tools; want 10 (direct), 10 (the package direct), 0", len(listed[1]), len(listed[2]), len(listed[4]))
	}
	if got := listed[3]; len(got) != 2 || got[0] != "echo__r1" || got[1] != "ok__r1" {
		t.Errorf("listed %v, want the direct commands in list order", got)
	}
	d1, ok1 := s.projectionDigest(1)
	d2, ok2 := s.projectionDigest(2)
	if !ok1 || !ok2 || d1 == d2 {
		t.Errorf("going progressive with every tool direct left the list digest as it was")
	}
}
