package policy_test

import (
	"crypto/sha256"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
)

// recordSink keeps what an IndexSink receives, as lines, with refs that
// are the content's hash.
type recordSink struct {
	revision string
	objects  map[string]string // ref → content
	routes   []string
	tools    []string // "endpoint meta" and tool lines, in order
}

func newRecordSink() *recordSink { return &recordSink{objects: map[string]string{}} }

func (s *recordSink) ref(kind string, b []byte) string {
	r := fmt.Sprintf("%s:%x", kind, sha256.Sum256(b))
	s.objects[r] = string(b)
	return r
}
func (s *recordSink) PutRevision(rev string, profile, releases []byte) error {
	if s.revision != "" {
		return fmt.Errorf("PutRevision twice")
	}
	s.revision = rev + "\n" + string(profile) + "\n" + string(releases)
	return nil
}
func (s *recordSink) PutCommand(decl []byte) (string, error) { return s.ref("decl", decl), nil }
func (s *recordSink) PutBody(body []byte) (string, error)    { return s.ref("body", body), nil }
func (s *recordSink) PutRoute(words []string, kind, command, decl, line string) error {
	s.routes = append(s.routes, strings.Join([]string{strings.Join(words, " "), kind, command, decl, line}, "|"))
	return nil
}
func (s *recordSink) PutEndpoint(endpoint string, meta []byte) error {
	s.tools = append(s.tools, "endpoint "+endpoint+" "+string(meta))
	return nil
}
func (s *recordSink) PutTool(name, command, release, decl, body, security string, wireSize int, listed bool) error {
	s.tools = append(s.tools, fmt.Sprintf("%s|%s|%s|%s|%s|%s|%d|%t", name, command, release, decl, body, security, wireSize, listed))
	return nil
}

// streamCases are candidates with a bit of everything: aliases, groups,
// several endpoints and name modes, a development release, job tools,
// security levels, ineligible and interactive commands, publish entries
// naming nothing.
func streamCases(t *testing.T) map[string]policy.Input {
	notes := devRelease(t, manifestJSON("acme.dev", "1.2.0",
		cmdSpec{id: "wip.add", path: `["wip","add"]`},
		cmdSpec{id: "wip.list", path: `["wip","list"]`, aliases: `[["dl"]]`}))
	other := release(parseManifest(t, manifestJSON("acme.other", "1.0.0",
		cmdSpec{id: "other.run", path: `["other","run"]`, aliases: `[["or"],["other","go"]]`},
		cmdSpec{id: "other.ask", path: `["other","ask"]`, extra: `,"description":"Asks.\nTwice.","hints":{"readOnly":true,"title":"Ask"}`},
		cmdSpec{id: "other.pass", path: `["other","pass"]`, execute: `{"program":"bin/x","mode":"passthrough"}`})))
	prof := profile(t, `{"endpoints":{
		"dev":   {"namespace":"dev","publish":{"packages":["acme.dev","acme.other"]}},
		"local": {"namespace":"local","toolNames":"compact","publish":{"packages":["acme.dev","acme.other","acme.gone"]},
		          "security":{"commands":{"other.run":"strict","nope.x":"elevated"}},
		          "tasks":{"commands":["other.run","other.ask"],"jobTools":true}},
		"ci":    {"namespace":"ci","toolNames":"stable","publish":{"commands":["wip.add","other.run","other.ask","other.pass","missing.cmd"]},
		          "discovery":{"mode":"progressive","direct":["other.run","nope.y"]}}}}`)
	cases := map[string]policy.Input{
		"mixed":      {Revision: "r7", Profile: prof, Releases: []policy.ReleaseInput{other, notes, release(acmeNotes(t))}},
		"no profile": {Revision: "r1", Releases: []policy.ReleaseInput{release(acmeNotes(t))}},
		"empty":      {Revision: "r2"},
	}
	// Errors must be the same too.
	clash := release(parseManifest(t, manifestJSON("acme.clash", "1.0.0", cmdSpec{id: "clash.run", path: `["other","run"]`})))
	cases["route clash"] = policy.Input{Revision: "r3", Releases: []policy.ReleaseInput{other, clash}}
	twice := release(parseManifest(t, manifestJSON("acme.twice", "1.0.0", cmdSpec{id: "other.run", path: `["twice"]`})))
	cases["identity clash"] = policy.Input{Revision: "r3", Releases: []policy.ReleaseInput{other, twice}}
	return cases
}

// Stream checks and writes what Build and WriteIndex check and write, and
// its summary reports what Build's binding reports.
func TestStreamMatchesBuild(t *testing.T) {
	for name, in := range streamCases(t) {
		t.Run(name, func(t *testing.T) {
			built, bwarn, berr := policy.Build(in)
			want := newRecordSink()
			if berr == nil {
				if err := policy.WriteIndex(built, want); err != nil {
					t.Fatal(err)
				}
			}
			got := newRecordSink()
			sum, swarn, serr := policy.Stream(in, got)
			if fmt.Sprint(berr) != fmt.Sprint(serr) {
				t.Fatalf("Stream error %v, Build error %v", serr, berr)
			}
			if berr != nil {
				if kernel.ErrorCode(serr) != kernel.ErrorCode(berr) {
					t.Errorf("codes %v and %v", kernel.ErrorCode(serr), kernel.ErrorCode(berr))
				}
				return
			}
			if !slices.Equal(bwarn, swarn) {
				t.Errorf("warnings\n got %q\nwant %q", swarn, bwarn)
			}
			if got.revision != want.revision {
				t.Errorf("revision record\n got %s\nwant %s", got.revision, want.revision)
			}
			if !reflect.DeepEqual(got.objects, want.objects) {
				t.Errorf("objects differ: %d and %d", len(got.objects), len(want.objects))
			}
			if !slices.Equal(got.routes, want.routes) {
				t.Errorf("routes\n got %q\nwant %q", got.routes, want.routes)
			}
			if !slices.Equal(got.tools, want.tools) {
				t.Errorf("tools\n got %q\nwant %q", got.tools, want.tools)
			}
			if len(want.tools) == 0 && name == "mixed" {
				t.Fatal("the mixed case publishes no tools")
			}
			if name == "mixed" {
				// ci is progressive: only its direct other.run is listed.
				var unlisted, listed []string
				ep := ""
				for _, r := range got.tools {
					if e, ok := strings.CutPrefix(r, "endpoint "); ok {
						ep, _, _ = strings.Cut(e, " ")
						continue
					}
					if ep != "ci" {
						if strings.HasSuffix(r, "|false") {
							t.Errorf("endpoint %s: tool not listed: %s", ep, r)
						}
						continue
					}
					f := strings.Split(r, "|")
					if f[len(f)-1] == "true" {
						listed = append(listed, f[1])
					} else {
						unlisted = append(unlisted, f[1])
					}
				}
				if !slices.Equal(listed, []string{"other.run"}) || len(unlisted) == 0 {
					t.Errorf("ci lists %q, leaves out %q: want other.run only listed", listed, unlisted)
				}
				if !slices.ContainsFunc(swarn, func(w string) bool { return strings.Contains(w, `discovery.direct names "nope.y"`) }) {
					t.Errorf("no warning of the direct entry nope.y: %q", swarn)
				}
			}
			// The dry run checks the same and returns the same summary.
			dry, _, err := policy.Stream(in, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(policy.NotTools(sum), policy.NotTools(built)) || !reflect.DeepEqual(policy.NotTools(dry), policy.NotTools(built)) {
				t.Errorf("not tools\n got %+v\nwant %+v", policy.NotTools(sum), policy.NotTools(built))
			}
			for _, noProfile := range []bool{false, true} {
				if !reflect.DeepEqual(policy.Endpoints(sum, noProfile), policy.Endpoints(built, noProfile)) {
					t.Errorf("endpoint reports\n got %+v\nwant %+v", policy.Endpoints(sum, noProfile), policy.Endpoints(built, noProfile))
				}
			}
			if !reflect.DeepEqual(sum.Routes, built.Routes) || !reflect.DeepEqual(sum.Releases, built.Releases) || string(sum.Profile) != string(built.Profile) {
				t.Error("routes, releases or profile differ")
			}
			// A diff against the full binding sees no change.
			for _, s := range []*policy.Binding{sum, dry} {
				if c := policy.Diff(built, s); !c.Empty() {
					t.Errorf("Diff(built, summary) = %+v", c)
				}
				if c := policy.Diff(s, built); !c.Empty() {
					t.Errorf("Diff(summary, built) = %+v", c)
				}
			}
			for _, p := range sum.Endpoints {
				for _, tool := range p.Tools {
					if tool.Wire != nil {
						t.Fatalf("tool %s holds its wire", tool.Name)
					}
				}
			}
		})
	}
}

// TestStreamToolOrderIgnoresTheRevision: under default names, commands
// that share their slug reach the index in the same order in every
// revision, so an unchanged catalogue makes the same list pages.
func TestStreamToolOrderIgnoresTheRevision(t *testing.T) {
	var cmds []cmdSpec
	for i := range 40 {
		cmds = append(cmds, cmdSpec{id: fmt.Sprintf("inventory.item-%02d", i), path: fmt.Sprintf(`["inv","i%02d"]`, i)})
	}
	rel := release(parseManifest(t, manifestJSON("acme.inventory", "1.0.0", cmds...)))
	prof := profile(t, `{"endpoints":{"local":{"namespace":"local","publish":{"packages":["acme.inventory"]}}}}`)
	order := func(rev string) []string {
		sink := newRecordSink()
		if _, _, err := policy.Stream(policy.Input{Revision: rev, Profile: prof, Releases: []policy.ReleaseInput{rel}}, sink); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range sink.tools {
			if name, rest, ok := strings.Cut(r, "|"); ok && !strings.HasPrefix(r, "endpoint ") {
				cmd, _, _ := strings.Cut(rest, "|")
				if !strings.HasPrefix(name, "inventory_item-") {
					t.Fatalf("tool %s of %s: not a compact name of a shared slug", name, cmd)
				}
				out = append(out, cmd)
			}
		}
		return out
	}
	a, b := order("r1"), order("r2")
	if len(a) != 40 || !slices.Equal(a, b) {
		t.Errorf("the tools' order changed with the revision:\n%v\n%v", a, b)
	}
}
