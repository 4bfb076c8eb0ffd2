package policy_test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
)

func routeBinding(t *testing.T) *policy.Binding {
	t.Helper()
	a := parseManifest(t, manifestJSON("acme.notes", "1.2.0",
		cmdSpec{id: "notes.add", path: `["notes","add"]`, aliases: `[["note","add"],["na"]]`},
		cmdSpec{id: "notes.list", path: `["notes","list"]`},
		cmdSpec{id: "notes.tag.rm", path: `["notes","tag","rm"]`},
	))
	b := parseManifest(t, manifestJSON("zeta", "0.1.0", cmdSpec{id: "zeta", path: `["zeta"]`}))
	bd, _, err := policy.Build(policy.Input{Revision: "r3", Releases: []policy.ReleaseInput{release(b), release(a)},
		Profile: profile(t, `{"endpoints":{"local":{"namespace":"local","publish":{"packages":["acme.notes"]}},"ci":{"namespace":"ci"}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	return bd
}

func TestCommandLookup(t *testing.T) {
	b := routeBinding(t)
	for _, id := range []string{"notes.add", "notes.list", "notes.tag.rm", "zeta"} {
		c, ok := b.Command(id)
		if !ok || c.Declaration.ID != id {
			t.Errorf("Command(%q) = %+v, %v", id, c, ok)
		}
	}
	if c, ok := b.Command("notes"); ok {
		t.Errorf("Command(notes) = %+v", c)
	}
}

func TestVisible(t *testing.T) {
	b := routeBinding(t)
	p, err := policy.Visible(b, "local")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tool := range p.Tools {
		got = append(got, tool.Command)
	}
	slices.Sort(got)
	if want := []string{"notes.add", "notes.list", "notes.tag.rm"}; !slices.Equal(got, want) {
		t.Errorf("local sees %q, want %q", got, want)
	}
	ci, err := policy.Visible(b, "ci")
	if err != nil || len(ci.Tools) != 0 {
		t.Errorf("ci = %+v, %v; want no tools", ci, err)
	}
	for _, tt := range []struct {
		b    *policy.Binding
		name string
	}{{b, "phone"}, {nil, "local"}} {
		_, err := policy.Visible(tt.b, tt.name)
		var ke *kernel.Error
		if !errors.As(err, &ke) || ke.Code != kernel.CodeNotFound {
			t.Errorf("Visible(%v, %q) error = %v, want not_found", tt.b != nil, tt.name, err)
		}
	}
}

func TestDiff(t *testing.T) {
	mk := func(version string, ids ...string) policy.ReleaseInput {
		var cmds []cmdSpec
		for _, id := range ids {
			cmds = append(cmds, cmdSpec{id: id, path: fmt.Sprintf(`["p",%q]`, strings.TrimPrefix(id, "p."))})
		}
		return release(parseManifest(t, manifestJSON("p", version, cmds...)))
	}
	build := func(rev, prof string, rels ...policy.ReleaseInput) *policy.Binding {
		b, _, err := policy.Build(policy.Input{Revision: rev, Profile: profile(t, prof), Releases: rels})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	const prof1 = `{"endpoints":{"local":{"namespace":"home","publish":{"packages":["p"]}}}}`
	const prof2 = `{"endpoints":{"local":{"namespace":"home","publish":{"commands":["p.a"]}},"ci":{"namespace":"ci","publish":{"packages":["p"]}}}}`
	r1 := build("r1", prof1, mk("1.0.0", "p.a", "p.b"))
	r2 := build("r2", prof1, mk("1.1.0", "p.a", "p.c"))
	r3 := build("r3", prof2, mk("1.1.0", "p.a", "p.c"))

	t.Run("first publish", func(t *testing.T) {
		c := policy.Diff(nil, r1)
		if len(c.Added) != 2 || len(c.Removed)+len(c.Renamed) != 0 || !c.ProfileChanged {
			t.Errorf("changes = %+v", c)
		}
		if want := []string{"p", "p a", "p b"}; !slices.Equal(c.RoutesAdded, want) {
			t.Errorf("routes added = %q, want %q", c.RoutesAdded, want)
		}
		if !slices.Equal(c.ReleasesAdded, []string{"p@1.0.0"}) || !slices.Equal(c.EndpointsAdded, []string{"local"}) {
			t.Errorf("releases %q endpoints %q", c.ReleasesAdded, c.EndpointsAdded)
		}
	})
	t.Run("upgrade", func(t *testing.T) {
		c := policy.Diff(r1, r2)
		if len(c.Added) != 1 || c.Added[0].Command != "p.c" || len(c.Removed) != 1 || c.Removed[0].Command != "p.b" {
			t.Errorf("added %+v removed %+v", c.Added, c.Removed)
		}
		if len(c.Renamed) != 1 || c.Renamed[0].Command != "p.a" || c.Renamed[0].OldRelease != "p@1.0.0" || c.Renamed[0].NewRelease != "p@1.1.0" {
			t.Errorf("renamed %+v", c.Renamed)
		}
		if !slices.Equal(c.RoutesAdded, []string{"p c"}) || !slices.Equal(c.RoutesRemoved, []string{"p b"}) {
			t.Errorf("routes +%q -%q", c.RoutesAdded, c.RoutesRemoved)
		}
		if !slices.Equal(c.ReleasesAdded, []string{"p@1.1.0"}) || !slices.Equal(c.ReleasesRemoved, []string{"p@1.0.0"}) {
			t.Errorf("releases +%q -%q", c.ReleasesAdded, c.ReleasesRemoved)
		}
		if c.ProfileChanged {
			t.Errorf("profile did not change")
		}
	})
	t.Run("policy change", func(t *testing.T) {
		c := policy.Diff(r2, r3)
		var added []string
		for _, a := range c.Added {
			added = append(added, a.Endpoint+":"+a.Command)
		}
		if want := []string{"ci:p.a", "ci:p.c"}; len(added) != 2 || !slices.Contains(added, want[0]) || !slices.Contains(added, want[1]) {
			t.Errorf("added %q, want %q", added, want)
		}
		if len(c.Removed) != 1 || c.Removed[0].Endpoint != "local" || c.Removed[0].Command != "p.c" {
			t.Errorf("removed %+v", c.Removed)
		}
		if len(c.Renamed) != 1 || c.Renamed[0].Command != "p.a" {
			t.Errorf("renamed %+v", c.Renamed)
		}
		if !c.ProfileChanged || !slices.Equal(c.EndpointsAdded, []string{"ci"}) {
			t.Errorf("profile %v endpoints %q", c.ProfileChanged, c.EndpointsAdded)
		}
		if len(c.RoutesAdded)+len(c.RoutesRemoved)+len(c.RoutesChanged) != 0 {
			t.Errorf("routes changed")
		}
		back := policy.Diff(r3, r2)
		if !slices.Equal(back.EndpointsRemoved, []string{"ci"}) || len(back.Removed) != 2 {
			t.Errorf("reverse: endpoints removed %q, tools removed %+v", back.EndpointsRemoved, back.Removed)
		}
	})
	t.Run("route retargeted", func(t *testing.T) {
		other := build("r4", prof1, release(parseManifest(t, manifestJSON("p", "2.0.0",
			cmdSpec{id: "p.a2", path: `["p","a"]`}, cmdSpec{id: "p.c", path: `["p","c"]`}))))
		c := policy.Diff(r3, other)
		if !slices.Equal(c.RoutesChanged, []string{"p a"}) {
			t.Errorf("routes changed = %q", c.RoutesChanged)
		}
	})
	t.Run("same binding", func(t *testing.T) {
		if c := policy.Diff(r2, r2); !c.Empty() {
			t.Errorf("Diff(r2, r2) = %+v, want empty", c)
		}
		if c := policy.Diff(r1, r2); c.Empty() {
			t.Errorf("Diff(r1, r2) is empty")
		}
		if !policy.Diff(nil, nil).Empty() {
			t.Errorf("Diff(nil, nil) is not empty")
		}
	})
	t.Run("same revision id, new release", func(t *testing.T) {
		again := build("r2", prof1, mk("1.2.0", "p.a", "p.c"))
		c := policy.Diff(r2, again)
		if len(c.Updated) != 2 || len(c.Renamed) != 0 {
			t.Errorf("updated %+v renamed %+v", c.Updated, c.Renamed)
		}
	})
}

func TestLaunchFrom(t *testing.T) {
	a := parseManifest(t, manifestJSON("acme.notes", "1.2.0", cmdSpec{id: "notes.add", path: `["notes","add"]`}))
	b, _, err := policy.Build(policy.Input{Revision: "r1", Releases: []policy.ReleaseInput{release(a)},
		Profile: profile(t, `{"endpoints":{"local":{"namespace":"lap","subject":"me","template":"quick","publish":{"packages":["acme.notes"]}},"ci":{"namespace":"ci","transports":["http"]}},
		 "templates":{"quick":{"timeoutMs":1500,"maxConcurrent":1}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(b, json.Deterministic(true))
	if err != nil {
		t.Fatal(err)
	}
	l, err := policy.LaunchFrom(data, "local")
	if err != nil {
		t.Fatal(err)
	}
	var local policy.Projection
	for _, p := range b.Endpoints {
		if p.Endpoint == "local" {
			local = p
		}
	}
	want := policy.Launch{Endpoint: "local", Namespace: "lap", Subject: "me", Template: local.Template, Transports: []string{"stdio"}, HTTPAuth: policy.HTTPAuthBearer, ToolNames: policy.ToolNamesCompact}
	if !reflect.DeepEqual(*l, want) || l.Template.TimeoutMs != 1500 || l.Template.MaxConcurrent != 1 || !l.Serves("stdio") {
		t.Errorf("launch = %+v, want %+v", *l, want)
	}
	// the serve view carries the same launch binding, per endpoint
	for _, ep := range []string{"local", "ci"} {
		v, err := b.ServeView(ep)
		if err != nil {
			t.Fatal(err)
		}
		l, _ := policy.LaunchFrom(data, ep)
		if v.Launch == nil || !reflect.DeepEqual(*v.Launch, *l) {
			t.Errorf("serve view of %s: launch %+v, want %+v", ep, v.Launch, l)
		}
	}
	if ci, _ := policy.LaunchFrom(data, "ci"); ci.Serves("stdio") || !ci.Serves("http") {
		t.Errorf("ci launch %+v: want http only", ci)
	}
	if v, _ := b.ServeView("nope"); v.Launch != nil {
		t.Errorf("serve view of an unknown endpoint has a launch binding: %+v", v.Launch)
	}
	if _, err := policy.LaunchFrom(data, "nope"); kernel.ErrorCode(err) != kernel.CodeNotFound || !strings.Contains(kernel.ErrorHint(err), "ci, local") {
		t.Errorf("unknown endpoint: %v (hint %q)", err, kernel.ErrorHint(err))
	}
	for _, bad := range []string{`[]`, `{"revision":"r1"}`, `{"profile":{"endpoints":`} {
		if _, err := policy.LaunchFrom([]byte(bad), "local"); err == nil {
			t.Errorf("LaunchFrom(%s) succeeded", bad)
		}
	}
}

func TestServeView(t *testing.T) {
	b := routeBinding(t)
	v, err := b.ServeView("local")
	if err != nil {
		t.Fatal(err)
	}
	if v.Revision != b.Revision || !slices.Equal(v.Endpoints, []string{"ci", "local"}) || len(v.Releases) != len(b.Releases) {
		t.Errorf("view = %+v", v)
	}
	var local policy.Projection
	for _, p := range b.Endpoints {
		if p.Endpoint == "local" {
			local = p
		}
	}
	if v.Projection == nil || v.Projection.Namespace != local.Namespace || len(v.Projection.Tools) != len(local.Tools) {
		t.Fatalf("projection = %+v, want %+v", v.Projection, local)
	}
	for i, tool := range local.Tools {
		if got := v.Projection.Tools[i]; got.Name != tool.Name || string(got.Wire) != string(tool.Wire) {
			t.Errorf("tool %d = %+v, want %+v", i, got, tool)
		}
	}
	if len(v.Commands) != len(b.Commands) {
		t.Fatalf("%d commands, want %d", len(v.Commands), len(b.Commands))
	}
	for i := range v.Commands {
		c, err := v.Commands[i].Decode()
		if err != nil {
			t.Fatal(err)
		}
		want := b.Commands[i]
		if v.Commands[i].ID != want.Declaration.ID || v.Commands[i].Release != want.Release || c.ID != want.Declaration.ID || !slices.Equal(c.Path, want.Declaration.Path) {
			t.Errorf("command %d = %+v / %+v, want %+v", i, v.Commands[i], c, want)
		}
	}
	none, err := b.ServeView("nowhere")
	if err != nil || none.Projection != nil {
		t.Errorf("unknown endpoint: %+v, %v", none, err)
	}
	if _, err := policy.DecodeServeView([]byte(`{"commands":{}}`), "local"); err == nil {
		t.Error("commands that are not an array were accepted")
	}
}
