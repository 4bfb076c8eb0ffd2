package policy

import (
	"reflect"
	"testing"

	"github.com/rukh-dev/rukh/kernel"
)

// A summary keeps a declaration's Machine as it is (so Publishable and the
// fixes answer as for the declaration) and its result kind, and shares the
// usual Machine and Result values.
func TestSummaryOf(t *testing.T) {
	var machines []*kernel.Machine
	for _, eligible := range []bool{false, true} {
		for _, in := range []string{"", kernel.InteractionNone, kernel.InteractionOptional, kernel.InteractionRequired, "later"} {
			for _, fs := range [][]kernel.Feature{nil, {}, {{ID: "command-result", Version: 1}}, {{ID: "time-travel", Version: 2}}, {{ID: "command-result", Version: 1}, {ID: "time-travel", Version: 2}}} {
				machines = append(machines, &kernel.Machine{Eligible: eligible, Interaction: in, RequiredFeatures: fs})
			}
		}
	}
	machines = append(machines, nil)
	results := []*kernel.ResultDecl{nil, {Kind: kernel.ResultText}, {Kind: kernel.ResultStructured, Schema: []byte(`{"type":"object"}`)}, {Kind: "later"}}
	for _, m := range machines {
		for _, r := range results {
			c := &kernel.Command{ID: "a.b", Path: []string{"a", "b"}, Summary: "s", Description: "d", Machine: m,
				Execute: kernel.Execute{Program: "bin/x", Mode: kernel.ModeManaged, Result: r}}
			s := summaryOf(c)
			full := BoundCommand{Declaration: *c, Eligible: true}
			sum := BoundCommand{Declaration: s, Eligible: true}
			if a, _ := full.Publishable(); a != func() bool { b, _ := sum.Publishable(); return b }() {
				t.Fatalf("machine %+v: Publishable %v on the declaration, not on its summary", m, a)
			}
			switch {
			case m == nil:
				if s.Machine != nil {
					t.Fatalf("a summary without a machine has %+v", s.Machine)
				}
			case s.Machine == nil || !reflect.DeepEqual(*s.Machine, *m):
				t.Fatalf("machine %+v: summary %+v", m, s.Machine)
			case m.Interaction == kernel.InteractionNone && len(m.RequiredFeatures) == 1 && m.RequiredFeatures[0].ID == "command-result" && s.Machine == m:
				t.Fatalf("machine %+v: summaries do not share it", m)
			}
			switch {
			case r == nil:
				if s.Execute.Result != nil {
					t.Fatalf("a summary without a result has %+v", s.Execute.Result)
				}
			case s.Execute.Result == nil || s.Execute.Result.Kind != r.Kind || s.Execute.Result.Schema != nil:
				t.Fatalf("result %+v: summary %+v", r, s.Execute.Result)
			case r.Kind == kernel.ResultText && summaryOf(c).Execute.Result != s.Execute.Result:
				t.Fatalf("result %+v: summaries do not share it", r)
			}
			if s.Description != "" || s.Execute.Program != "" || s.ID != c.ID || s.Summary != c.Summary || len(s.Path) != 2 {
				t.Fatalf("summary %+v", s)
			}
		}
	}
}
