package policy_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
)

// The discovery block is read strictly, every error at its JSON pointer.
func TestDiscoveryProfileErrors(t *testing.T) {
	for _, tc := range []struct{ in, path, msg string }{
		{`{"mode":"lazy"}`, "/endpoints/e/discovery/mode", `unknown discovery mode "lazy": want direct or progressive`},
		{`{"mode":""}`, "/endpoints/e/discovery/mode", `unknown discovery mode ""`},
		{`{"mode":"progressive","limit":3}`, "/endpoints/e/discovery/limit", "unknown"},
		{`{"mode":null}`, "/endpoints/e/discovery/mode", "null is not allowed"},
		{`{"mode":"progressive","direct":["Notes.Add"]}`, "/endpoints/e/discovery/direct/0", `invalid command or package "Notes.Add"`},
		{`{"mode":"progressive","direct":["notes.add","notes.add"]}`, "/endpoints/e/discovery/direct/1", `duplicate command or package "notes.add"`},
		{`{"mode":"progressive","direct":["rukh.search-tools"]}`, "/endpoints/e/discovery/direct/0", "built-in rukh namespace"},
		{`{"mode":"progressive","direct":"notes.add"}`, "/endpoints/e/discovery/direct", ""},
		{`{"direct":["notes.add"]}`, "/endpoints/e/discovery/direct", "only matters in progressive mode"},
		{`{"mode":"direct","direct":["notes.add"]}`, "/endpoints/e/discovery/direct", "only matters in progressive mode"},
		{`"progressive"`, "/endpoints/e/discovery", ""},
	} {
		in := `{"endpoints":{"e":{"namespace":"n","discovery":` + tc.in + `}}}`
		_, err := policy.ParseProfile([]byte(in))
		var ke *kernel.Error
		if !errors.As(err, &ke) || ke.Code != kernel.CodeInvalid {
			t.Errorf("%s: %v, want an invalid error", tc.in, err)
			continue
		}
		if ke.Path != tc.path || !strings.Contains(ke.Message, tc.msg) {
			t.Errorf("%s: %s at %q, want %q at %q", tc.in, ke.Message, ke.Path, tc.msg, tc.path)
		}
	}
}

// An unstated block stays out of the canonical profile (old revisions keep
// their bytes); a stated one is kept with its mode and a sorted list, and
// the launch binding carries it.
func TestDiscoveryCanonical(t *testing.T) {
	for _, tc := range []struct {
		in, canon string
		want      *policy.Discovery
	}{
		{``, ``, nil},
		{`,"discovery":{}`, `"discovery":{"mode":"direct"}`, &policy.Discovery{Mode: policy.DiscoveryDirect}},
		{`,"discovery":{"mode":"direct"}`, `"discovery":{"mode":"direct"}`, &policy.Discovery{Mode: policy.DiscoveryDirect}},
		{`,"discovery":{"mode":"progressive"}`, `"discovery":{"mode":"progressive"}`, &policy.Discovery{Mode: policy.DiscoveryProgressive}},
		{`,"discovery":{"mode":"progressive","direct":["x.b","acme.notes","x.a"]}`, `"discovery":{"mode":"progressive","direct":["acme.notes","x.a","x.b"]}`,
			&policy.Discovery{Mode: policy.DiscoveryProgressive, Direct: []string{"acme.notes", "x.a", "x.b"}}},
	} {
		p, err := policy.ParseProfile([]byte(`{"endpoints":{"e":{"namespace":"n"` + tc.in + `}}}`))
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		canon := string(p.Canonical())
		if tc.canon == "" && strings.Contains(canon, "discovery") || !strings.Contains(canon, tc.canon) {
			t.Errorf("%s: canonical %s, want %s in it", tc.in, canon, tc.canon)
		}
		again, err := policy.ParseProfile(p.Canonical())
		if err != nil || string(again.Canonical()) != canon {
			t.Errorf("%s: canonical form does not read back: %v", tc.in, err)
		}
		l, err := policy.LaunchOf(p.Canonical(), "e")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(l.Discovery, tc.want) {
			t.Errorf("%s: launch discovery %+v, want %+v", tc.in, l.Discovery, tc.want)
		}
	}
}

func TestDiscoveryLists(t *testing.T) {
	prog := &policy.Discovery{Mode: policy.DiscoveryProgressive, Direct: []string{"acme.notes", "x.run"}}
	for _, tc := range []struct {
		d       *policy.Discovery
		id, pkg string
		want    bool
	}{
		{nil, "a.b", "p", true},
		{&policy.Discovery{Mode: policy.DiscoveryDirect}, "a.b", "p", true},
		{prog, "x.run", "acme.x", true},
		{prog, "notes.add", "acme.notes", true},
		{prog, "x.other", "acme.x", false},
		{prog, "acme.notes", "other", true},
	} {
		if got := tc.d.Lists(tc.id, tc.pkg); got != tc.want {
			t.Errorf("%+v lists %s (%s) = %v, want %v", tc.d, tc.id, tc.pkg, got, tc.want)
		}
	}
	if got := policy.DiscoveryToolName(policy.ToolNamesStable, "n", policy.DiscoverySearch); got != "rukh_search-tools" {
		t.Errorf("stable name of the search tool = %q", got)
	}
}
