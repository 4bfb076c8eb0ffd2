package policy_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
)

// Two commands whose names collide refuse publication in every mode, naming
// both commands and the way out.
func TestBuildToolNameCollision(t *testing.T) {
	m := parseManifest(t, manifestJSON("p", "1.0.0",
		cmdSpec{id: "a.b", path: `["p","dot"]`},
		cmdSpec{id: "a_b", path: `["p","under"]`},
		cmdSpec{id: "c", path: `["p","c"]`},
	))
	build := func(mode string) error {
		prof := `{"endpoints":{"e":{"namespace":"n","publish":{"packages":["p"]}}}}`
		if mode != "" {
			prof = strings.Replace(prof, `"namespace":"n"`, `"namespace":"n","toolNames":"`+mode+`"`, 1)
		}
		_, _, err := policy.Build(policy.Input{Revision: "r1", Profile: profile(t, prof), Releases: []policy.ReleaseInput{release(m)}})
		return err
	}
	check := func(t *testing.T, err error, name, mode, hint string) {
		t.Helper()
		var ke *kernel.Error
		if !errors.As(err, &ke) {
			t.Fatalf("Build error = %v, want a collision", err)
		}
		want := `commands a.b (p@1.0.0) and a_b (p@1.0.0) would both be tool "` + name + `" (toolNames ` + mode + `)`
		if ke.Code != kernel.CodeConflict || ke.Path != "/endpoints/e" || ke.Message != want {
			t.Errorf("got %s %s %q\nwant %q", ke.Code, ke.Path, ke.Message, want)
		}
		if !strings.Contains(ke.Hint, hint) {
			t.Errorf("hint %q does not say %q", ke.Hint, hint)
		}
	}

	t.Run("stable, real names", func(t *testing.T) {
		check(t, build("stable"), "a_b", "stable", `set "toolNames": "compact"`)
		// the same ids get distinct compact and full names
		if err := build(""); err != nil {
			t.Errorf("compact: %v", err)
		}
		if err := build("full"); err != nil {
			t.Errorf("full: %v", err)
		}
	})
	for _, mode := range []string{"compact", "full"} {
		t.Run(mode+", forced hash collision", func(t *testing.T) {
			var modes []string
			defer policy.SetToolName(func(mode, namespace, revision, id string) string {
				modes = append(modes, mode)
				if id == "c" {
					return "c__1"
				}
				return "same__0"
			})()
			check(t, build(mode), "same__0", mode, "change the id of one of the two commands")
			if len(modes) == 0 || modes[0] != mode {
				t.Errorf("Build asked for mode %v, want %s", modes, mode)
			}
		})
	}
	t.Run("no collision with the seam in place", func(t *testing.T) {
		n := 0
		defer policy.SetToolName(func(mode, namespace, revision, id string) string {
			n++
			return id + "__x"
		})()
		if err := build("compact"); err != nil || n != 3 {
			t.Errorf("err %v after %d names", err, n)
		}
	})
}

// A profile that states no toolNames gets compact names; one that states a
// mode gets that mode; the projection records the effective mode.
func TestBuildToolNameModes(t *testing.T) {
	m := parseManifest(t, manifestJSON("p", "1.0.0", cmdSpec{id: "p.a-rather-long-command-name", path: `["p","a"]`}))
	id := "p.a-rather-long-command-name"
	prof := profile(t, `{"endpoints":{
		"c":{"namespace":"nc","publish":{"packages":["p"]}},
		"f":{"namespace":"nf","toolNames":"full","publish":{"packages":["p"]}},
		"s":{"namespace":"ns","toolNames":"stable","publish":{"packages":["p"]}}}}`)
	b, _, err := policy.Build(policy.Input{Revision: "r4", Profile: prof, Releases: []policy.ReleaseInput{release(m)}})
	if err != nil {
		t.Fatal(err)
	}
	fp, _ := policy.Fingerprint("nc", "r4", id)
	ffp, _ := policy.Fingerprint("nf", "r4", id)
	want := map[string]struct{ mode, name string }{
		"c": {"compact", "p_a-rather-long-__" + fp[:24]},
		"f": {"full", "p_a-rather-long-command-name__" + ffp},
		"s": {"stable", "p_a-rather-long-command-name"},
	}
	for _, p := range b.Endpoints {
		w := want[p.Endpoint]
		if p.ToolNames != w.mode || len(p.Tools) != 1 || p.Tools[0].Name != w.name {
			t.Errorf("endpoint %s: mode %s tools %+v, want %s %s", p.Endpoint, p.ToolNames, p.Tools, w.mode, w.name)
		}
	}
	if n := len(want["c"].name); n > 42 {
		t.Errorf("compact name is %d characters", n)
	}

	// No profile at all: the default profile, compact names.
	d, _, err := policy.Build(policy.Input{Revision: "r4", Releases: []policy.ReleaseInput{release(m)}})
	if err != nil || d.Endpoints[0].ToolNames != "compact" || strings.Contains(string(d.Profile), "toolNames") {
		t.Errorf("default profile: %v, mode %q, profile %s", err, d.Endpoints[0].ToolNames, d.Profile)
	}
}

// Publishing explains itself: commands that are not tools with their fixes,
// endpoints with no tools with theirs, and names hosts reject.
func TestExplain(t *testing.T) {
	m := parseManifest(t, manifestJSON("p", "1.0.0",
		cmdSpec{id: "p.ok", path: `["p","ok"]`},
		cmdSpec{id: "p.nomachine", path: `["p","nomachine"]`, extra: `,"machine":{"eligible":true}`},
		cmdSpec{id: "p.ask", path: `["p","ask"]`, extra: `,"machine":{"eligible":true,"interaction":"required","requiredFeatures":[{"id":"command-result","version":1}]}`},
	))
	build := func(prof *policy.Profile) *policy.Binding {
		b, _, err := policy.Build(policy.Input{Revision: "r1", Profile: prof, Releases: []policy.ReleaseInput{release(m)}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	// No profile: nothing is a tool, and the fix is a profile to set.
	b := build(nil)
	nt := policy.NotTools(b)
	got := map[string]policy.NotTool{}
	for _, n := range nt {
		got[n.Command] = n
	}
	if len(nt) != 3 {
		t.Fatalf("NotTools = %+v", nt)
	}
	if n := got["p.ok"]; n.Reason != "eligible, but no endpoint publishes it" || !strings.Contains(n.Fix, `add "p.ok" to "publish.commands" (or "p" to "publish.packages") of an endpoint`) {
		t.Errorf("p.ok: %+v", n)
	}
	if n := got["p.nomachine"]; n.Reason != "does not require command-result/1" || !strings.Contains(n.Fix, `add {"id": "command-result", "version": 1} to "machine.requiredFeatures"`) {
		t.Errorf("p.nomachine: %+v", n)
	}
	if n := got["p.ask"]; !strings.Contains(n.Reason, "requires interaction") || !strings.Contains(n.Fix, `"interaction": "optional"`) {
		t.Errorf("p.ask: %+v", n)
	}
	eps := policy.Endpoints(b, true)
	if len(eps) != 1 || eps[0].Tools != 0 || eps[0].ToolNames != "compact" || eps[0].ToolNamesStated || len(eps[0].Warnings) != 1 {
		t.Fatalf("Endpoints = %+v", eps)
	}
	if w := eps[0].Warnings[0]; !strings.Contains(w.Message, "no profile is set") ||
		!strings.Contains(w.Fix, `{"endpoints": {"local": {"namespace": "local", "publish": {"packages": ["p"]}}}}`) || !strings.Contains(w.Fix, "rukh policy set") {
		t.Errorf("no-profile warning = %+v", w)
	}
	// The same profile set explicitly says what its publish lacks.
	if w := policy.Endpoints(b, false)[0].Warnings[0]; !strings.Contains(w.Message, `its "publish" names no command and no package`) || !strings.Contains(w.Fix, `"publish": {"packages": ["p"]}`) {
		t.Errorf("empty-publish warning = %+v", w)
	}

	// Full names are over 64 characters: a warning with the fix.
	b = build(profile(t, `{"endpoints":{"e":{"namespace":"n","toolNames":"full","publish":{"packages":["p"]}}}}`))
	eps = policy.Endpoints(b, false)
	if len(eps) != 1 || eps[0].Tools != 1 || eps[0].LongNames != 1 || eps[0].LongestName != len("p_ok__")+64 || !eps[0].ToolNamesStated {
		t.Fatalf("Endpoints = %+v", eps)
	}
	if w := eps[0].Warnings; len(w) != 1 || !strings.Contains(w[0].Message, "1 tool name(s) are longer than 64 characters (up to 70, toolNames full)") ||
		!strings.Contains(w[0].Message, "Claude, Cursor and Copilot") || !strings.Contains(w[0].Fix, `set "toolNames": "compact" for endpoint "e"`) {
		t.Errorf("long-name warnings = %+v", w)
	}
	if nt := policy.NotTools(b); len(nt) != 2 {
		t.Errorf("NotTools = %+v", nt)
	}

	// Compact names: no warning at all.
	b = build(profile(t, `{"endpoints":{"e":{"namespace":"n","publish":{"packages":["p"]}}}}`))
	if eps := policy.Endpoints(b, false); eps[0].LongNames != 0 || eps[0].LongestName != len("p_ok__")+24 || len(eps[0].Warnings) != 0 {
		t.Errorf("compact Endpoints = %+v", eps)
	}

	// Publishing only commands that are not tools.
	b = build(profile(t, `{"endpoints":{"e":{"namespace":"n","publish":{"commands":["p.ask"]}}}}`))
	if w := policy.Endpoints(b, false)[0].Warnings; len(w) != 1 || !strings.Contains(w[0].Message, `nothing its "publish" names is a tool`) {
		t.Errorf("warnings = %+v", w)
	}

	// Nothing installed.
	e, _, err := policy.Build(policy.Input{Revision: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	if w := policy.Endpoints(e, true)[0].Warnings; len(w) != 1 || !strings.Contains(w[0].Message, "no active release declares a command") {
		t.Errorf("warnings = %+v", w)
	}
}

// A mode change shows in the diff, and says whether the profile chose it.
func TestDiffToolNameModes(t *testing.T) {
	m := parseManifest(t, manifestJSON("p", "1.0.0", cmdSpec{id: "p.a", path: `["p","a"]`}))
	build := func(rev, prof string) *policy.Binding {
		var p *policy.Profile
		if prof != "" {
			p = profile(t, prof)
		}
		b, _, err := policy.Build(policy.Input{Revision: rev, Profile: p, Releases: []policy.ReleaseInput{release(m)}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	full := build("r1", `{"endpoints":{"local":{"namespace":"local","toolNames":"full","publish":{"packages":["p"]}}}}`)
	unstated := build("r2", `{"endpoints":{"local":{"namespace":"local","publish":{"packages":["p"]}}}}`)
	c := policy.Diff(full, unstated)
	if len(c.ToolNames) != 1 || c.ToolNames[0] != (policy.ToolNamesChange{Endpoint: "local", Old: "full", New: "compact", Stated: false}) {
		t.Errorf("ToolNames = %+v", c.ToolNames)
	}
	stable := build("r3", `{"endpoints":{"local":{"namespace":"local","toolNames":"stable","publish":{"packages":["p"]}}}}`)
	c = policy.Diff(unstated, stable)
	if len(c.ToolNames) != 1 || c.ToolNames[0] != (policy.ToolNamesChange{Endpoint: "local", Old: "compact", New: "stable", Stated: true}) {
		t.Errorf("ToolNames = %+v", c.ToolNames)
	}
	// stable names survive a new revision: no rename, nothing changed in the tools
	c = policy.Diff(stable, build("r4", `{"endpoints":{"local":{"namespace":"local","toolNames":"stable","publish":{"packages":["p"]}}}}`))
	if len(c.Renamed) != 0 || len(c.Added) != 0 || len(c.Removed) != 0 || len(c.Updated) != 0 || len(c.ToolNames) != 0 {
		t.Errorf("stable republish changed tools: %+v", c)
	}
	// same mode: nothing about modes
	if c := policy.Diff(unstated, build("r5", "")); len(c.ToolNames) != 0 {
		t.Errorf("ToolNames = %+v", c.ToolNames)
	}
}
