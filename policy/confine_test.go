package policy_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
)

// fullHost can enforce every template.
var fullHost = &kernel.Host{Containment: kernel.ContainNamespace, Landlock: 7}

// confineInput is acme.notes with one command per need, all published on
// endpoint local under template locked (confine as given).
func confineInput(t *testing.T, confine string, host *kernel.Host) policy.Input {
	t.Helper()
	exec := func(needs string) string {
		return `{"program":"bin/x","result":{"kind":"text"},"needs":` + needs + `}`
	}
	m := parseManifest(t, manifestJSON("acme.notes", "1.0.0",
		cmdSpec{id: "notes.plain", path: `["plain"]`},
		cmdSpec{id: "notes.net", path: `["net"]`, execute: exec(`{"network":true}`)},
		cmdSpec{id: "notes.read", path: `["read"]`, execute: exec(`{"read":["~/notes/a","release"]}`)},
		cmdSpec{id: "notes.write", path: `["write"]`, execute: exec(`{"write":["/srv/out","scratch"]}`)},
		cmdSpec{id: "notes.procs", path: `["procs"]`, execute: exec(`{"processes":8}`)},
	))
	tmpl := `{}`
	if confine != "" {
		tmpl = `{"confine":` + confine + `}`
	}
	p := profile(t, `{"endpoints":{"local":{"namespace":"n","template":"locked","publish":{"packages":["acme.notes"]}}},"templates":{"locked":`+tmpl+`}}`)
	return policy.Input{Revision: "r1", Profile: p, Releases: []policy.ReleaseInput{release(m)}, Host: host, OwnerHome: "/home/owner"}
}

func TestPublishNeedsAgainstTemplate(t *testing.T) {
	defer policy.SetUserHome(func() (string, error) { return "/home/owner", nil })()
	all := []string{"notes.net", "notes.plain", "notes.procs", "notes.read", "notes.write"}
	tests := []struct {
		name, confine string
		tools         []string
		warnings      []string
	}{
		{"unconfined grants everything", "", all, nil},
		{"network none", `{"network":"none","read":["/","release"],"write":["/","scratch"],"processes":8}`,
			[]string{"notes.plain", "notes.procs", "notes.read", "notes.write"},
			[]string{`notes.net is not published on local: it needs network, which template locked does not grant (set templates.locked.confine.network to "host")`}},
		{"network absent is host", `{"read":["/","release"],"write":["/","scratch"]}`, all, nil},
		{"reads and writes", `{"network":"host","read":["~/notes"],"write":["release","/srv"]}`,
			[]string{"notes.net", "notes.plain", "notes.procs", "notes.read"},
			[]string{`notes.write is not published on local: it needs to write scratch, which template locked does not grant (add "scratch" to templates.locked.confine.write)`}},
		{"read within a write grant", `{"write":["/home/owner","release","/srv/out","scratch"]}`, all, nil},
		{"read outside", `{"read":["/home/owner/other","release"],"write":["/srv","scratch"]}`,
			[]string{"notes.net", "notes.plain", "notes.procs", "notes.write"},
			[]string{`notes.read is not published on local: it needs to read ~/notes/a, which template locked does not grant (add "~/notes/a" to templates.locked.confine.read)`}},
		{"a prefix is not a parent", `{"read":["/home/owner/not","release"],"write":["/srv/o","/srv/outer","scratch"]}`,
			[]string{"notes.net", "notes.plain", "notes.procs"},
			[]string{`notes.read is not published on local: it needs to read ~/notes/a`, `notes.write is not published on local: it needs to write /srv/out`}},
		{"keyword needs the keyword", `{"read":["/"],"write":["/"]}`,
			[]string{"notes.net", "notes.plain", "notes.procs"},
			[]string{`it needs to read release, which template locked does not grant (add "release" to templates.locked.confine.read)`, `it needs to write scratch`}},
		{"processes", `{"read":["/","release"],"write":["/","scratch"],"processes":4}`,
			[]string{"notes.net", "notes.plain", "notes.read", "notes.write"},
			[]string{`notes.procs is not published on local: it needs 8 processes, which template locked does not grant (it allows 4) (set templates.locked.confine.processes to 8)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, build := range []func(policy.Input) (*policy.Binding, []string, error){policy.Build, dryStream} {
				b, warns, err := build(confineInput(t, tt.confine, fullHost))
				if err != nil {
					t.Fatal(err)
				}
				var tools []string
				for _, tool := range b.Endpoints[0].Tools {
					tools = append(tools, tool.Command)
				}
				slices.Sort(tools)
				if !slices.Equal(tools, tt.tools) {
					t.Errorf("tools = %v, want %v", tools, tt.tools)
				}
				if len(warns) != len(tt.warnings) {
					t.Errorf("warnings = %q, want %d", warns, len(tt.warnings))
				}
				for _, w := range tt.warnings {
					if !slices.ContainsFunc(warns, func(s string) bool { return strings.Contains(s, w) }) {
						t.Errorf("no warning %q in %q", w, warns)
					}
				}
				// Explain says the same of every command that is not a tool.
				for _, n := range policy.NotTools(b) {
					if !strings.HasPrefix(n.Reason, "not published on local: it needs") || n.Fix == "" {
						t.Errorf("not a tool: %+v", n)
					}
				}
				if got := len(policy.NotTools(b)); got != len(all)-len(tt.tools) {
					t.Errorf("%d not a tool, want %d", got, len(all)-len(tt.tools))
				}
			}
		})
	}
}

func TestPublishUnavailableTemplate(t *testing.T) {
	noLandlock := &kernel.Host{Containment: kernel.ContainNamespace, NoLandlock: "RUKH_WITHOUT lists landlock"}
	reason := noLandlock.Unavailable(&kernel.Confine{})
	if reason == "" {
		t.Fatal("a host without Landlock enforces confinement")
	}
	// A confined template on a host without Landlock: nothing published,
	// whatever the commands need, and publish says why once.
	b, warns, err := policy.Build(confineInput(t, `{"network":"host","read":["/","release"],"write":["/","scratch"]}`, noLandlock))
	if err != nil {
		t.Fatal(err)
	}
	p := b.Endpoints[0]
	if len(p.Tools) != 0 || p.Unavailable != reason || len(p.Withheld) != 5 {
		t.Fatalf("tools %d, unavailable %q, withheld %d", len(p.Tools), p.Unavailable, len(p.Withheld))
	}
	want := `endpoint "local": template locked is unavailable on this host, so none of its commands are published: ` + reason
	if !slices.Equal(warns, []string{want}) {
		t.Errorf("warnings = %q\nwant %q", warns, want)
	}
	for _, n := range policy.NotTools(b) {
		if n.Reason != "not published on local: template locked is unavailable on this host: "+reason || !strings.Contains(n.Fix, policy.ConfinementDoc) {
			t.Errorf("not a tool: %+v", n)
		}
	}
	// An unconfined template is available everywhere.
	b, _, err = policy.Build(confineInput(t, "", noLandlock))
	if err != nil || len(b.Endpoints[0].Tools) != 5 || b.Endpoints[0].Unavailable != "" {
		t.Fatalf("unconfined on the same host: %v, %+v", err, b.Endpoints[0])
	}
}
