package policy_test

import (
	"strings"
	"testing"

	"github.com/rukh-dev/rukh/policy"
)

func devRelease(t testing.TB, manifest string) policy.ReleaseInput {
	r := release(parseManifest(t, manifest))
	r.Name, r.Version, r.Development = r.Manifest.Name, "dev", true
	return r
}

func toolCommands(b *policy.Binding, endpoint string) []string {
	for _, p := range b.Endpoints {
		if p.Endpoint == endpoint {
			var ids []string
			for _, tool := range p.Tools {
				ids = append(ids, tool.Command)
			}
			return ids
		}
	}
	return nil
}

// A development release is published on the dev endpoint only: every other
// endpoint leaves its commands out, even when its publish lists name the
// package or the commands, and says so in a warning naming them.
func TestBuildPublishesDevelopmentReleasesOnlyOnDevEndpoint(t *testing.T) {
	notes := devRelease(t, manifestJSON("acme.notes", "1.2.0",
		cmdSpec{id: "notes.add", path: `["notes","add"]`},
		cmdSpec{id: "notes.list", path: `["notes","list"]`}))
	other := release(parseManifest(t, manifestJSON("acme.other", "1.0.0", cmdSpec{id: "other.run", path: `["other","run"]`})))
	prof := profile(t, `{"endpoints":{
		"dev":   {"namespace":"dev","publish":{"packages":["acme.notes","acme.other"]}},
		"local": {"namespace":"local","publish":{"packages":["acme.notes","acme.other"]}},
		"ci":    {"namespace":"ci","publish":{"commands":["notes.add","other.run"]}}}}`)
	b, warns, err := policy.Build(policy.Input{Revision: "r1", Profile: prof, Releases: []policy.ReleaseInput{notes, other}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(toolCommands(b, "dev"), " "); got != "notes.add notes.list other.run" {
		t.Errorf("dev endpoint tools = %q", got)
	}
	if got := strings.Join(toolCommands(b, "local"), " "); got != "other.run" {
		t.Errorf("local endpoint tools = %q, want only other.run", got)
	}
	if got := strings.Join(toolCommands(b, "ci"), " "); got != "other.run" {
		t.Errorf("ci endpoint tools = %q, want only other.run", got)
	}
	want := map[string]string{
		"local": `endpoint "local": acme.notes@dev is a development release, published only on endpoint "dev": left out notes.add, notes.list`,
		"ci":    `endpoint "ci": acme.notes@dev is a development release, published only on endpoint "dev": left out notes.add`,
	}
	for ep, w := range want {
		found := false
		for _, got := range warns {
			found = found || got == w
		}
		if !found {
			t.Errorf("no warning for endpoint %s: want %q in %q", ep, w, warns)
		}
	}
	for _, w := range warns {
		if strings.Contains(w, `endpoint "dev"`) && !strings.Contains(w, `published only on endpoint "dev"`) {
			t.Errorf("unexpected warning for the dev endpoint: %q", w)
		}
	}

	// the CLI still routes the development release's commands, under its version
	var bound []string
	for _, c := range b.Commands {
		bound = append(bound, c.Declaration.ID+"="+c.Release)
	}
	if got := strings.Join(bound, " "); got != "notes.add=acme.notes@dev notes.list=acme.notes@dev other.run=acme.other@1.0.0" {
		t.Errorf("bound commands = %q", got)
	}
	if len(b.Routes) == 0 {
		t.Error("no CLI routes")
	}
	for _, r := range b.Releases {
		if r.Development != (r.Name == "acme.notes") {
			t.Errorf("release %s: development = %v", r.Name, r.Development)
		}
	}
}

// Without a dev endpoint a development release is CLI-only; the same
// release as an installed one is published as usual.
func TestBuildDevelopmentFlagIsWhatCounts(t *testing.T) {
	manifest := manifestJSON("acme.notes", "1.2.0", cmdSpec{id: "notes.add", path: `["notes","add"]`})
	prof := profile(t, `{"endpoints":{"local":{"namespace":"local","publish":{"packages":["acme.notes"]}}}}`)
	b, _, err := policy.Build(policy.Input{Revision: "r1", Profile: prof, Releases: []policy.ReleaseInput{devRelease(t, manifest)}})
	if err != nil {
		t.Fatal(err)
	}
	if got := toolCommands(b, "local"); len(got) != 0 {
		t.Errorf("local publishes the development release: %q", got)
	}
	b, warns, err := policy.Build(policy.Input{Revision: "r1", Profile: prof, Releases: []policy.ReleaseInput{release(parseManifest(t, manifest))}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(toolCommands(b, "local"), " "); got != "notes.add" || len(warns) != 0 {
		t.Errorf("installed release: tools %q, warnings %q", got, warns)
	}
}

func TestBuildDevelopmentReleaseNeedsItsVersion(t *testing.T) {
	r := devRelease(t, manifestJSON("acme.notes", "1.2.0", cmdSpec{id: "notes.add", path: `["notes","add"]`}))
	r.Version = ""
	if _, _, err := policy.Build(policy.Input{Revision: "r1", Releases: []policy.ReleaseInput{r}}); err == nil {
		t.Fatal("a development release without its version built")
	}
}
