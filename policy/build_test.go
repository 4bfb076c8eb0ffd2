package policy_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
)

var update = flag.Bool("update", false, "rewrite testdata/golden files")

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run go test -update after checking):\n got %s\nwant %s", name, got, want)
	}
}

func parseManifest(t testing.TB, data string) *kernel.Manifest {
	t.Helper()
	m, err := kernel.ParseManifest([]byte(data))
	if err != nil {
		t.Fatalf("ParseManifest: %v\n%s", err, data)
	}
	return m
}

func release(m *kernel.Manifest) policy.ReleaseInput {
	return policy.ReleaseInput{
		BoundRelease: policy.BoundRelease{Digest: "h1:" + m.Name + "@" + m.Version, Dir: "releases/" + m.Name + "@" + m.Version},
		Manifest:     m,
	}
}

func acmeNotes(t testing.TB) *kernel.Manifest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "acme.notes.json"))
	if err != nil {
		t.Fatal(err)
	}
	return parseManifest(t, string(data))
}

// cmdSpec describes one command of a generated v2 manifest.
type cmdSpec struct {
	id, path, aliases string // path and aliases as JSON
	extra             string // extra command members, JSON, leading comma
	execute           string // overrides the default managed execute
}

func manifestJSON(name, version string, cmds ...cmdSpec) string {
	var parts []string
	for _, c := range cmds {
		exec := c.execute
		if exec == "" {
			exec = `{"program":"bin/x","result":{"kind":"text"}}`
		}
		machine := `,"machine":{"eligible":true,"requiredFeatures":[{"id":"command-result","version":1}]}`
		if strings.Contains(c.extra, `"machine"`) {
			machine = ""
		}
		aliases := ""
		if c.aliases != "" {
			aliases = `,"aliases":` + c.aliases
		}
		parts = append(parts, fmt.Sprintf(`{"id":%q,"path":%s%s,"summary":"Do %s","execute":%s%s%s}`, c.id, c.path, aliases, c.id, exec, machine, c.extra))
	}
	return fmt.Sprintf(`{"apiVersion":"rukh.extension/2","name":%q,"version":%q,"commands":[%s]}`, name, version, strings.Join(parts, ","))
}

func profile(t testing.TB, data string) *policy.Profile {
	t.Helper()
	p, err := policy.ParseProfile([]byte(data))
	if err != nil {
		t.Fatalf("ParseProfile: %v", err)
	}
	return p
}

func encode(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func indent(t testing.TB, b []byte) []byte {
	t.Helper()
	v := jsontext.Value(bytes.Clone(b))
	if err := v.Indent(); err != nil {
		t.Fatal(err)
	}
	return append(v, '\n')
}

func TestToolNameVector(t *testing.T) {
	const want = "f4385cfde9b5696df8a4489472e0f632b6bfe033f87a01d8dc8ec21e435077c5"
	fp, err := policy.Fingerprint("ns", "rev1", "cmd.id")
	if err != nil || fp != want {
		t.Fatalf("Fingerprint = %q, %v; want %q", fp, err, want)
	}
	if got := policy.ToolName("full", "ns", "rev1", "cmd.id"); got != "cmd_id__"+want {
		t.Errorf("full name = %q", got)
	}
	if got := policy.ToolName("", "ns", "rev1", "cmd.id"); got != "cmd_id__"+want[:24] {
		t.Errorf("default mode name = %q, want compact", got)
	}
	if got := policy.ToolName("compact", "ns", "rev1", "cmd.id"); got != "cmd_id__"+want[:24] {
		t.Errorf("compact name = %q", got)
	}
	if got := policy.ToolName("stable", "ns", "rev1", "cmd.id"); got != "cmd_id" {
		t.Errorf("stable name = %q", got)
	}
}

func TestToolNamesGolden(t *testing.T) {
	long := strings.Repeat("abcdefghij.", 11) + "tail" // 125 characters
	cases := []struct{ mode, namespace, revision, command string }{
		{"full", "ns", "rev1", "cmd.id"},
		{"compact", "ns", "rev1", "cmd.id"},
		{"full", "acme-laptop", "r1", "notes.add"},
		{"full", "acme-laptop", "r2", "notes.add"},
		{"full", "other", "r1", "notes.add"},
		{"compact", "acme-laptop", "r1", "notes.add"},
		{"full", "local", "r7", "a_b-c.d"},
		{"full", "local", "r7", long},
		{"compact", "local", "r7", long},
		{"stable", "acme-laptop", "r1", "notes.add"},
		{"stable", "acme-laptop", "r2", "notes.add"},
		{"stable", "local", "r7", long},
	}
	type row struct {
		Mode      string `json:"mode"`
		Namespace string `json:"namespace"`
		Revision  string `json:"revision"`
		Command   string `json:"command"`
		Name      string `json:"name"`
	}
	var rows []row
	for _, c := range cases {
		name := policy.ToolName(c.mode, c.namespace, c.revision, c.command)
		max := 48 + 2 + 64
		switch c.mode {
		case "compact":
			max = 16 + 2 + 24
		case "stable":
			max = 64
		}
		if len(name) > max {
			t.Errorf("%s name %q is %d characters, over %d", c.mode, name, len(name), max)
		}
		for _, r := range name {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
				t.Errorf("name %q has character %q", name, r)
			}
		}
		rows = append(rows, row{c.mode, c.namespace, c.revision, c.command, name})
	}
	if got := policy.ToolName("full", "local", "r7", long); !strings.HasPrefix(got, "abcdefghij_abcdefghij_abcdefghij_abcdefghij_abcd__") {
		t.Errorf("long slug not cut at 48: %q", got)
	}
	if got := policy.ToolName("stable", "local", "r7", long); len(got) != 64 || strings.Contains(got, "__") {
		t.Errorf("long stable name not cut at 64: %q", got)
	}
	if policy.ToolName("stable", "a", "r1", "x.y") != policy.ToolName("stable", "b", "r2", "x.y") {
		t.Error("stable names depend on namespace or revision")
	}
	golden(t, "toolnames.json", indent(t, encode(t, rows)))
}

func specInput(t testing.TB) policy.Input {
	return policy.Input{
		Revision: "r1",
		Profile: profile(t, `{"endpoints":{
			"local":{"namespace":"acme-laptop","publish":{"packages":["acme.notes"]}},
			"phone":{"namespace":"acme-phone","transports":["http"],"toolNames":"full","template":"small","publish":{"commands":["notes.add"]}}},
			"templates":{"small":{"timeoutMs":5000,"maxConcurrent":1,"maxHeld":1,"resultBytes":4096}}}`),
		Releases: []policy.ReleaseInput{release(acmeNotes(t))},
	}
}

func TestBuildGolden(t *testing.T) {
	b, warnings, err := policy.Build(specInput(t))
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings: %q", warnings)
	}
	golden(t, "build_acme_notes.json", indent(t, encode(t, b)))

	// Spot checks that do not depend on the golden file.
	if len(b.Endpoints) != 2 || b.Endpoints[0].Endpoint != "local" || b.Endpoints[1].Endpoint != "phone" {
		t.Fatalf("endpoints = %+v", b.Endpoints)
	}
	local := b.Endpoints[0]
	if len(local.Tools) != 1 {
		t.Fatalf("local tools = %+v", local.Tools)
	}
	tool := local.Tools[0]
	// local states no toolNames: compact, the default.
	if want := policy.ToolName("compact", "acme-laptop", "r1", "notes.add"); tool.Name != want || local.ToolNames != "compact" {
		t.Errorf("tool name = %q (%s), want %q", tool.Name, local.ToolNames, want)
	}
	if want := policy.ToolName("full", "acme-phone", "r1", "notes.add"); b.Endpoints[1].Tools[0].Name != want || len(want) != len("notes_add__")+64 {
		t.Errorf("full tool name = %q, want %q", b.Endpoints[1].Tools[0].Name, want)
	}
	var wire struct {
		Name         string         `json:"name"`
		Title        string         `json:"title"`
		Description  string         `json:"description"`
		InputSchema  jsontext.Value `json:"inputSchema"`
		OutputSchema jsontext.Value `json:"outputSchema"`
		Annotations  map[string]any `json:"annotations"`
	}
	if err := json.Unmarshal(tool.Wire, &wire, json.RejectUnknownMembers(true)); err != nil {
		t.Fatalf("wire %s: %v", tool.Wire, err)
	}
	if !bytes.HasPrefix(tool.Wire, []byte(`{"name":"`+tool.Name+`",`)) {
		t.Errorf("wire does not start with the name: %s", tool.Wire)
	}
	if wire.Title != "Add note" || wire.Description != "Add a note\n\nAdds a note and prints its id." {
		t.Errorf("title %q description %q", wire.Title, wire.Description)
	}
	wantAnn := map[string]any{"title": "Add note", "readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false}
	if fmt.Sprint(wire.Annotations) != fmt.Sprint(wantAnn) {
		t.Errorf("annotations = %v, want %v", wire.Annotations, wantAnn)
	}
	if wire.InputSchema.Kind() != '{' || wire.OutputSchema.Kind() != '{' {
		t.Errorf("schemas: %s %s", wire.InputSchema, wire.OutputSchema)
	}
	if got := b.Endpoints[1].Template; got != (policy.Template{Name: "small", TimeoutMs: 5000, MaxConcurrent: 1, MaxHeld: 1, DiagnosticsBytes: 65536, ResultBytes: 4096}) {
		t.Errorf("phone template = %+v", got)
	}
	wantRoutes := []policy.Route{
		{Words: []string{"note"}, Kind: policy.RouteGroup},
		{Words: []string{"note", "add"}, Kind: policy.RouteAlias, Command: "notes.add"},
		{Words: []string{"notes"}, Kind: policy.RouteGroup},
		{Words: []string{"notes", "add"}, Kind: policy.RouteCommand, Command: "notes.add"},
	}
	if !slices.EqualFunc(b.Routes, wantRoutes, func(a, b policy.Route) bool {
		return slices.Equal(a.Words, b.Words) && a.Kind == b.Kind && a.Command == b.Command
	}) {
		t.Errorf("routes = %+v", b.Routes)
	}
	// The routes' words share one array, but none is another's or a
	// declaration's: growing or changing one changes nothing else.
	_ = append(b.Routes[0].Words, "grown")
	b.Commands[0].Declaration.Path[0] = "changed"
	if !slices.Equal(b.Routes[1].Words, []string{"note", "add"}) || !slices.Equal(b.Routes[3].Words, []string{"notes", "add"}) {
		t.Errorf("routes changed with another's words or a declaration's path: %+v", b.Routes)
	}
}

func TestBuildAnnotationsOnlySetHints(t *testing.T) {
	m := parseManifest(t, manifestJSON("p", "1.0.0",
		cmdSpec{id: "a", path: `["a"]`, extra: `,"hints":{"readOnly":true}`},
		cmdSpec{id: "b", path: `["b"]`},
	))
	b, _, err := policy.Build(policy.Input{Revision: "r1", Profile: profile(t, `{"endpoints":{"e":{"namespace":"n","publish":{"packages":["p"]}}}}`), Releases: []policy.ReleaseInput{release(m)}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tool := range b.Endpoints[0].Tools {
		var w struct {
			Annotations jsontext.Value `json:"annotations"`
			Title       string         `json:"title"`
		}
		if err := json.Unmarshal(tool.Wire, &w); err != nil {
			t.Fatal(err)
		}
		got[tool.Command] = w.Title + " " + string(w.Annotations)
	}
	want := map[string]string{"a": `Do a {"readOnlyHint":true}`, "b": "Do b "}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestBuildConflicts(t *testing.T) {
	rel := func(name, version string, cmds ...cmdSpec) policy.ReleaseInput {
		return release(parseManifest(t, manifestJSON(name, version, cmds...)))
	}
	tests := []struct {
		name     string
		releases []policy.ReleaseInput
		code     kernel.Code
		msg      string
	}{
		{"identity", []policy.ReleaseInput{
			rel("acme.notes", "1.2.0", cmdSpec{id: "notes.add", path: `["notes","add"]`}),
			rel("other", "1.0.0", cmdSpec{id: "notes.add", path: `["other","add"]`}),
		}, kernel.CodeConflict, `command identity "notes.add" is declared by both acme.notes@1.2.0 and other@1.0.0`},
		{"command vs command", []policy.ReleaseInput{
			rel("acme.notes", "1.2.0", cmdSpec{id: "notes.add", path: `["notes","add"]`}),
			rel("other", "1.0.0", cmdSpec{id: "other.add", path: `["notes","add"]`}),
		}, kernel.CodeConflict, `route "notes add": command notes.add (acme.notes@1.2.0) collides with command other.add (other@1.0.0)`},
		{"alias vs command", []policy.ReleaseInput{
			rel("acme.notes", "1.2.0", cmdSpec{id: "notes.add", path: `["notes","add"]`}),
			rel("other", "1.0.0", cmdSpec{id: "notes.new", path: `["notes","new"]`, aliases: `[["notes","add"]]`}),
		}, kernel.CodeConflict, `route "notes add": command notes.add (acme.notes@1.2.0) collides with alias of notes.new (other@1.0.0)`},
		{"alias vs alias", []policy.ReleaseInput{
			rel("a", "1.0.0", cmdSpec{id: "a.x", path: `["a","x"]`, aliases: `[["x"]]`}),
			rel("b", "1.0.0", cmdSpec{id: "b.x", path: `["b","x"]`, aliases: `[["x"]]`}),
		}, kernel.CodeConflict, `route "x": alias of a.x (a@1.0.0) collides with alias of b.x (b@1.0.0)`},
		{"command vs group", []policy.ReleaseInput{
			rel("a", "1.0.0", cmdSpec{id: "notes", path: `["notes"]`}),
			rel("b", "1.0.0", cmdSpec{id: "notes.add", path: `["notes","add"]`}),
		}, kernel.CodeConflict, `route "notes": command notes (a@1.0.0) collides with group of notes.add (b@1.0.0)`},
		{"group vs alias", []policy.ReleaseInput{
			rel("a", "1.0.0", cmdSpec{id: "a.list", path: `["a","list"]`, aliases: `[["ls"]]`}),
			rel("b", "1.0.0", cmdSpec{id: "b.ls", path: `["ls","all"]`}),
		}, kernel.CodeConflict, `route "ls": alias of a.list (a@1.0.0) collides with group of b.ls (b@1.0.0)`},
		{"two active releases of one package", []policy.ReleaseInput{
			rel("a", "1.0.0", cmdSpec{id: "a.x", path: `["a","x"]`}),
			rel("a", "2.0.0", cmdSpec{id: "a.y", path: `["a","y"]`}),
		}, kernel.CodeConflict, "package a has two active releases: 1.0.0 and 2.0.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := policy.Build(policy.Input{Revision: "r1", Releases: tt.releases})
			var ke *kernel.Error
			if !errors.As(err, &ke) {
				t.Fatalf("Build error = %v, want a *kernel.Error", err)
			}
			if ke.Code != tt.code || ke.Message != tt.msg {
				t.Errorf("got %s %q\nwant %s %q", ke.Code, ke.Message, tt.code, tt.msg)
			}
		})
	}
}

// ParseManifest already refuses built-in words and the rukh namespace;
// Build checks again, because a binding must never depend on how a
// manifest reached it.
func TestBuildBuiltins(t *testing.T) {
	mk := func(id string, path ...string) *kernel.Manifest {
		return &kernel.Manifest{APIVersion: kernel.APIVersion2, Name: "p", Version: "1.0.0", Commands: []kernel.Command{{
			ID: id, Path: path, Execute: kernel.Execute{Program: "bin/x", Mode: kernel.ModeManaged, Lifetime: kernel.LifetimeForeground},
		}}}
	}
	tests := []struct {
		name string
		m    *kernel.Manifest
		code kernel.Code
		msg  string
	}{
		{"built-in verb", mk("p.install", "install"), kernel.CodeConflict, `route "install": command p.install (p@1.0.0) collides with built-in verb "install"`},
		{"built-in verb as group", mk("p.x", "publish", "x"), kernel.CodeConflict, `route "publish x": command p.x (p@1.0.0) collides with built-in verb "publish"`},
		{"rukh namespace", mk("rukh.install", "p"), kernel.CodeInvalid, "command rukh.install (p@1.0.0) is in the built-in rukh namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := policy.Build(policy.Input{Revision: "r1", Releases: []policy.ReleaseInput{release(tt.m)}})
			var ke *kernel.Error
			if !errors.As(err, &ke) || ke.Code != tt.code || ke.Message != tt.msg {
				t.Errorf("Build error = %v\nwant %s %q", err, tt.code, tt.msg)
			}
		})
	}
}

func TestBuildPublication(t *testing.T) {
	m := parseManifest(t, manifestJSON("p", "1.0.0",
		cmdSpec{id: "p.plain", path: `["p","plain"]`},
		cmdSpec{id: "p.optional", path: `["p","optional"]`, extra: `,"machine":{"eligible":true,"interaction":"optional","requiredFeatures":[{"id":"command-result","version":1}]}`},
		cmdSpec{id: "p.required", path: `["p","required"]`, extra: `,"machine":{"eligible":true,"interaction":"required","requiredFeatures":[{"id":"command-result","version":1}]}`},
		cmdSpec{id: "p.raw", path: `["p","raw"]`, execute: `{"program":"bin/x","mode":"passthrough"}`, extra: `,"machine":{"eligible":false}`},
		cmdSpec{id: "p.cli", path: `["p","cli"]`, extra: `,"machine":{"eligible":false}`},
	))
	q := parseManifest(t, manifestJSON("q", "1.0.0", cmdSpec{id: "q.one", path: `["q","one"]`}))
	v1 := parseManifest(t, `{"apiVersion":"rukh.extension/1","name":"old","version":"0.1.0","commands":[{"id":"old.run","path":["old"],"execute":{"program":"bin/old"}}]}`)
	prof := profile(t, `{"endpoints":{
		"all":{"namespace":"n-all","publish":{"packages":["p","q","old","ghost"]}},
		"picked":{"namespace":"n-picked","publish":{"commands":["p.required","p.raw","q.one","old.run","ghost.cmd"]}},
		"none":{"namespace":"n-none"}}}`)
	b, warnings, err := policy.Build(policy.Input{Revision: "r1", Profile: prof, Releases: []policy.ReleaseInput{release(m), release(q), release(v1)}})
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string][]string{}
	for _, p := range b.Endpoints {
		tools[p.Endpoint] = []string{}
		for _, tool := range p.Tools {
			tools[p.Endpoint] = append(tools[p.Endpoint], tool.Command)
		}
		slices.Sort(tools[p.Endpoint])
	}
	want := map[string][]string{
		"all":    {"p.optional", "p.plain", "q.one"},
		"none":   {},
		"picked": {"q.one"},
	}
	if fmt.Sprint(tools) != fmt.Sprint(want) {
		t.Errorf("tools = %v\nwant %v", tools, want)
	}
	wantWarnings := []string{
		`endpoint "all": publish.packages names "ghost", which is not an active package`,
		`endpoint "picked": publish.commands names "ghost.cmd", which no active release declares`,
		`endpoint "picked": command old.run (old@0.1.0) is not published: `,
		`endpoint "picked": command p.raw (p@1.0.0) is not published: `,
		`endpoint "picked": command p.required (p@1.0.0) is not published: it requires interaction and the MCP adapter is non-interactive`,
	}
	if len(warnings) != len(wantWarnings) {
		t.Fatalf("warnings = %q", warnings)
	}
	for i, w := range wantWarnings {
		if !strings.HasPrefix(warnings[i], w) || strings.HasSuffix(warnings[i], ": ") {
			t.Errorf("warning %d = %q, want it to start with %q and give a reason", i, warnings[i], w)
		}
	}
	// Eligibility is recorded for describe and publish --dry-run.
	for id, eligible := range map[string]bool{"p.plain": true, "p.optional": true, "p.required": true, "p.raw": false, "p.cli": false, "old.run": false} {
		c, ok := b.Command(id)
		if !ok {
			t.Fatalf("Command(%q) not found", id)
		}
		if c.Eligible != eligible || (c.Reason == "") != eligible {
			t.Errorf("%s: eligible %v reason %q, want eligible %v", id, c.Eligible, c.Reason, eligible)
		}
	}
	for id, want := range map[string]string{"p.plain": "", "p.optional": "", "p.required": "it requires interaction", "p.raw": "passthrough"} {
		c, _ := b.Command(id)
		ok, reason := c.Publishable()
		if ok != (want == "") || !strings.Contains(reason, want) {
			t.Errorf("%s Publishable = %v, %q; want reason %q", id, ok, reason, want)
		}
	}
	// The v1 and passthrough commands are still CLI routes.
	routes := map[string]string{}
	for _, r := range b.Routes {
		routes[strings.Join(r.Words, " ")] = r.Command
	}
	for _, words := range []string{"old", "p raw", "p cli"} {
		if routes[words] == "" {
			t.Errorf("no command route %q in %v", words, routes)
		}
	}
}

func TestBuildInvalidInput(t *testing.T) {
	m := acmeNotes(t)
	tests := []struct {
		name string
		in   policy.Input
		msg  string
	}{
		{"empty revision", policy.Input{}, `invalid revision id ""`},
		{"revision with space", policy.Input{Revision: "r 1"}, `invalid revision id "r 1"`},
		{"invalid profile", policy.Input{Revision: "r1", Profile: &policy.Profile{Endpoints: map[string]policy.Endpoint{"e": {Namespace: "N"}}}}, `/endpoints/e/namespace: invalid namespace "N"`},
		{"missing manifest", policy.Input{Revision: "r1", Releases: []policy.ReleaseInput{{BoundRelease: policy.BoundRelease{Name: "x", Version: "1.0.0"}}}}, "release x@1.0.0 has no manifest"},
		{"name disagrees", policy.Input{Revision: "r1", Releases: []policy.ReleaseInput{{BoundRelease: policy.BoundRelease{Name: "other"}, Manifest: m}}}, `disagrees with its manifest`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := policy.Build(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Build error = %v, want %q", err, tt.msg)
			}
		})
	}
}

func TestBuildDeterministic(t *testing.T) {
	var releases []policy.ReleaseInput
	for i := range 30 {
		releases = append(releases, release(parseManifest(t, manifestJSON(fmt.Sprintf("pkg%02d", i), "1.0.0",
			cmdSpec{id: fmt.Sprintf("pkg%02d.a", i), path: fmt.Sprintf(`["pkg%02d","a"]`, i), aliases: fmt.Sprintf(`[["a%02d"]]`, i)},
			cmdSpec{id: fmt.Sprintf("pkg%02d.b", i), path: fmt.Sprintf(`["pkg%02d","b","c"]`, i)},
		))))
	}
	prof := `{"endpoints":{"x":{"namespace":"nx","publish":{"packages":["pkg03","pkg01"],"commands":["pkg07.b"]}},"y":{"namespace":"ny","toolNames":"compact","publish":{"packages":["pkg01","pkg02"]}}}}`
	first, _, err := policy.Build(policy.Input{Revision: "r9", Profile: profile(t, prof), Releases: releases})
	if err != nil {
		t.Fatal(err)
	}
	want := encode(t, first)
	for i := range 5 {
		shuffled := slices.Clone(releases)
		slices.Reverse(shuffled)
		shuffled = append(shuffled[i:], shuffled[:i]...)
		b, _, err := policy.Build(policy.Input{Revision: "r9", Profile: profile(t, prof), Releases: shuffled})
		if err != nil {
			t.Fatal(err)
		}
		if got := encode(t, b); !bytes.Equal(got, want) {
			t.Fatalf("build %d differs:\n%s\n%s", i, got, want)
		}
	}
	// The encoded binding round-trips through JSON unchanged (the store keeps it so).
	var back policy.Binding
	if err := json.Unmarshal(want, &back); err != nil {
		t.Fatal(err)
	}
	if got := encode(t, &back); !bytes.Equal(got, want) {
		t.Errorf("round trip differs")
	}
	for _, p := range first.Endpoints {
		if !slices.IsSortedFunc(p.Tools, func(a, b policy.Tool) int { return strings.Compare(a.Name, b.Name) }) {
			t.Errorf("tools of %s are not sorted by name", p.Endpoint)
		}
	}
	if !slices.IsSortedFunc(first.Routes, func(a, b policy.Route) int { return slices.Compare(a.Words, b.Words) }) {
		t.Errorf("routes are not sorted")
	}
}

func TestPolicyOnlyChangeRenamesEveryTool(t *testing.T) {
	m := parseManifest(t, manifestJSON("p", "1.0.0",
		cmdSpec{id: "p.a", path: `["p","a"]`}, cmdSpec{id: "p.b", path: `["p","b"]`}, cmdSpec{id: "p.c", path: `["p","c"]`}))
	build := func(revision, namespace string) *policy.Binding {
		b, _, err := policy.Build(policy.Input{Revision: revision, Releases: []policy.ReleaseInput{release(m)},
			Profile: profile(t, `{"endpoints":{"local":{"namespace":"`+namespace+`","publish":{"packages":["p"]}}}}`)})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	base := build("r1", "home")
	for _, tt := range []struct{ name, revision, namespace string }{
		{"new revision id", "r2", "home"},
		{"new namespace", "r1", "work"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			next := build(tt.revision, tt.namespace)
			c := policy.Diff(base, next)
			if len(c.Renamed) != 3 || len(c.Added) != 0 || len(c.Removed) != 0 {
				t.Fatalf("changes = %+v, want 3 renames only", c)
			}
			for _, r := range c.Renamed {
				if r.OldName == r.NewName || r.Endpoint != "local" {
					t.Errorf("rename %+v", r)
				}
			}
			if len(c.RoutesAdded)+len(c.RoutesRemoved)+len(c.RoutesChanged) != 0 {
				t.Errorf("routes changed: %+v", c)
			}
		})
	}
}

func TestToolObjectLimit(t *testing.T) {
	// A tool object over 1 MiB could never fit in a tools/list page.
	c := kernel.Command{
		ID: "big.one", Path: []string{"big"}, Summary: "Big",
		Execute: kernel.Execute{Program: "bin/x", Mode: kernel.ModeManaged, Lifetime: kernel.LifetimeForeground, Result: &kernel.ResultDecl{Kind: kernel.ResultText}},
		Machine: &kernel.Machine{Eligible: true, Interaction: kernel.InteractionNone, RequiredFeatures: []kernel.Feature{{ID: "command-result", Version: 1}}},
	}
	// Built in Go: ParseManifest would cap the description at 16 KiB, but
	// Build must not rely on that.
	c.Description = strings.Repeat("y", 1<<20)
	m := &kernel.Manifest{APIVersion: kernel.APIVersion2, Name: "big", Version: "1.0.0", Commands: []kernel.Command{c}}
	_, _, err := policy.Build(policy.Input{Revision: "r1", Releases: []policy.ReleaseInput{release(m)},
		Profile: profile(t, `{"endpoints":{"local":{"namespace":"n","publish":{"commands":["big.one"]}}}}`)})
	if err == nil || !strings.Contains(err.Error(), "over the 1048576-byte page limit") {
		t.Fatalf("Build error = %v, want the 1 MiB tool limit", err)
	}
}

// benchInput is packages×perPackage commands with two params and a
// structured result, all published on one endpoint.
func benchInput(b *testing.B, packages, perPackage int) policy.Input {
	var releases []policy.ReleaseInput
	for p := range packages {
		name := fmt.Sprintf("pkg%04d", p)
		var cmds []cmdSpec
		for c := range perPackage {
			cmds = append(cmds, cmdSpec{
				id:      fmt.Sprintf("%s.cmd%d", name, c),
				path:    fmt.Sprintf(`[%q,"grp%d","cmd%d"]`, name, c%3, c),
				aliases: fmt.Sprintf(`[[%q,"c%d"]]`, name, c),
				extra: `,"params":[{"id":"title","type":"string","flag":"title","required":true,"maxLength":200},` +
					`{"id":"n","type":"integer","flag":"n","default":3,"minimum":1,"maximum":5}],` +
					`"hints":{"readOnly":true}`,
				execute: `{"program":"bin/x","result":{"kind":"structured","schema":{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"],"additionalProperties":false}}}`,
			})
		}
		releases = append(releases, release(parseManifest(b, manifestJSON(name, "1.0.0", cmds...))))
	}
	var pkgs []string
	for _, r := range releases {
		pkgs = append(pkgs, `"`+r.Manifest.Name+`"`)
	}
	prof := profile(b, `{"endpoints":{"local":{"namespace":"local","publish":{"packages":[`+strings.Join(pkgs, ",")+`]}}}}`)
	return policy.Input{Revision: "r1", Profile: prof, Releases: releases}
}

func benchBuild(b *testing.B, packages, perPackage int, build func(policy.Input) (*policy.Binding, []string, error)) {
	in := benchInput(b, packages, perPackage)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		bd, _, err := build(in)
		if err != nil {
			b.Fatal(err)
		}
		if n := len(bd.Endpoints[0].Tools); n != packages*perPackage {
			b.Fatalf("%d tools", n)
		}
		if len(policy.NotTools(bd)) != 0 {
			b.Fatal("not tools")
		}
	}
}

func dryStream(in policy.Input) (*policy.Binding, []string, error) { return policy.Stream(in, nil) }

// BenchmarkBuild10k publishes 1,000 packages with 10 commands each (the
// target in docs/performance.md: rukh publish of 10,000 commands in at most 2
// s, store included).
func BenchmarkBuild10k(b *testing.B) { benchBuild(b, 1000, 10, policy.Build) }

// BenchmarkBuild100k is 1,000 packages of 100 commands (the target in
// docs/performance.md: 100,000 commands in at most 10 s). The report's
// NotTools is in the loop: it was quadratic.
func BenchmarkBuild100k(b *testing.B) { benchBuild(b, 1000, 100, policy.Build) }

// BenchmarkStream10k and BenchmarkStream100k are what a publish dry run
// does in policy: Stream keeps summaries only (compare B/op and the
// heap with Build's).
func BenchmarkStream10k(b *testing.B)  { benchBuild(b, 1000, 10, dryStream) }
func BenchmarkStream100k(b *testing.B) { benchBuild(b, 1000, 100, dryStream) }
