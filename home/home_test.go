package home

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/search"
	"github.com/rukh-dev/rukh/store"
)

// digest is a well-formed package digest made from s.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "h1:" + base64.StdEncoding.EncodeToString(sum[:])
}

func newHome(t *testing.T) *Home {
	t.Helper()
	return &Home{Store: store.New(t.TempDir()), Env: func(string) string { return "" }}
}

// publish commits a revision of two packages of two commands each, as
// publish does (policy.Build into the store's index writer), and returns
// the binding Build made and the revision.
func publish(t *testing.T, h *Home) (*policy.Binding, store.Revision) {
	t.Helper()
	in := policy.Input{}
	for p := range 2 {
		var cmds []string
		for c := range 2 {
			cmds = append(cmds, fmt.Sprintf(`{"id":"p%d.c%d","path":["p%d","c%d"],"summary":"command %d",
				"params":[{"id":"title","type":"string","flag":"title","maxLength":100}],
				"execute":{"program":"bin/x","result":{"kind":"text"}},
				"machine":{"eligible":true,"interaction":"none","requiredFeatures":[{"id":"command-result","version":1}]}}`, p, c, p, c, c))
		}
		m, err := kernel.ParseManifest([]byte(fmt.Sprintf(`{"apiVersion":"rukh.extension/2","name":"acme.p%d","version":"1.0.0","publisher":"acme","commands":[%s]}`,
			p, strings.Join(cmds, ","))))
		if err != nil {
			t.Fatal(err)
		}
		in.Releases = append(in.Releases, policy.ReleaseInput{BoundRelease: policy.BoundRelease{
			Name: m.Name, Version: m.Version, Digest: digest(m.Name), Dir: "/elsewhere", AllowUnsigned: true, Development: p == 1,
		}, Manifest: m})
	}
	prof, err := policy.ParseProfile([]byte(`{"endpoints":{"local":{"namespace":"n","publish":{"packages":["acme.p0"]}},"dev":{"namespace":"dev","publish":{"packages":["acme.p1"]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	in.Profile = prof
	var built *policy.Binding
	rev, err := h.Store.Publish(0, func(n uint64, id string, w *store.IndexWriter) (store.Revision, error) {
		in.Revision = id
		b, _, err := policy.Build(in)
		if err != nil {
			return store.Revision{}, err
		}
		built = b
		return store.Revision{Number: n, ID: id}, policy.WriteIndex(b, w)
	})
	if err != nil {
		t.Fatal(err)
	}
	return built, rev
}

// TestRevisionReadBack: the one index walker reads back, to each depth,
// what publish wrote, with release directories resolved under this home
// rather than where they were when published.
func TestRevisionReadBack(t *testing.T) {
	h := newHome(t)
	built, rev := publish(t, h)
	want := *built
	want.Releases = append([]policy.BoundRelease(nil), built.Releases...)
	for i, r := range want.Releases {
		want.Releases[i].Dir = h.CopyDir(r.Digest, r.Development)
		if !strings.HasPrefix(want.Releases[i].Dir, h.Store.Home()+string(filepath.Separator)) {
			t.Fatalf("copy of %s is outside the home: %s", r.Name, want.Releases[i].Dir)
		}
	}
	for _, tc := range []struct {
		name string
		read func(store.Revision) (*policy.Binding, error)
		// summary: no declarations, and tools carry the sum of their body
		summary bool
	}{
		{"RevisionBinding", h.RevisionBinding, false},
		{"RevisionSummary", h.RevisionSummary, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.read(rev)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Releases, want.Releases) {
				t.Errorf("releases:\n got %+v\nwant %+v", got.Releases, want.Releases)
			}
			if got.Revision != want.Revision || string(got.Profile) != string(want.Profile) || !reflect.DeepEqual(got.Routes, want.Routes) {
				t.Errorf("revision, profile or routes differ:\n got %s %s %v\nwant %s %s %v", got.Revision, got.Profile, got.Routes, want.Revision, want.Profile, want.Routes)
			}
			if len(got.Endpoints) != len(want.Endpoints) {
				t.Fatalf("%d endpoints, want %d", len(got.Endpoints), len(want.Endpoints))
			}
			for i, p := range got.Endpoints {
				wp := want.Endpoints[i]
				if p.Endpoint != wp.Endpoint || len(p.Tools) != len(wp.Tools) {
					t.Fatalf("endpoint %s with %d tools, want %s with %d", p.Endpoint, len(p.Tools), wp.Endpoint, len(wp.Tools))
				}
				for j, tool := range p.Tools {
					wt := wp.Tools[j]
					if tool.Name != wt.Name || tool.Command != wt.Command || tool.Release != wt.Release {
						t.Errorf("tool %d of %s: %s %s %s, want %s %s %s", j, p.Endpoint, tool.Name, tool.Command, tool.Release, wt.Name, wt.Command, wt.Release)
					}
					if tc.summary {
						body, err := toolBodyOf(wt)
						if err != nil {
							t.Fatal(err)
						}
						if tool.Wire != nil || tool.Sum != sha256.Sum256(body) {
							t.Errorf("summary tool %s: wire %q, sum %x", tool.Name, tool.Wire, tool.Sum)
						}
					} else if string(tool.Wire) != string(wt.Wire) {
						t.Errorf("tool %s:\n got %s\nwant %s", tool.Name, tool.Wire, wt.Wire)
					}
				}
			}
			switch {
			case tc.summary && len(got.Commands) != 0:
				t.Errorf("a summary read %d declarations", len(got.Commands))
			case !tc.summary && !reflect.DeepEqual(got.Commands, want.Commands):
				t.Errorf("commands:\n got %+v\nwant %+v", got.Commands, want.Commands)
			}
		})
	}
}

// toolBodyOf is the body the index keeps for a tool object.
func toolBodyOf(t policy.Tool) ([]byte, error) {
	p := `{"name":"` + t.Name + `",`
	if !strings.HasPrefix(string(t.Wire), p) {
		return nil, fmt.Errorf("tool %q: its object does not start with its name", t.Name)
	}
	return append([]byte{'{'}, t.Wire[len(p):]...), nil
}

// TestPinCall: a call is refused before it holds anything when its
// release is untrusted, and when the copy it would run is not the one
// installed.
func TestPinCall(t *testing.T) {
	h := newHome(t)
	br := &policy.BoundRelease{Name: "acme.x", Version: "1.0.0", Digest: digest("acme.x")}
	for _, tc := range []struct {
		name      string
		untrusted map[string]bool
		code      kernel.Code
		hint      string
	}{
		{"untrusted", map[string]bool{store.ReleaseRef(br.Digest, false): true}, kernel.CodeDenied, UntrustedHint(br.Name)},
		{"copy missing", nil, kernel.CodeConflict, RepairHint(false)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			unpin, err := h.PinCall("r1", br, tc.untrusted)
			if err == nil {
				unpin()
				t.Fatal("pinned")
			}
			if kernel.ErrorCode(err) != tc.code || kernel.ErrorHint(err) != tc.hint {
				t.Errorf("got %s %q (hint %q), want %s, hint %q", kernel.ErrorCode(err), err, kernel.ErrorHint(err), tc.code, tc.hint)
			}
		})
	}
}

func TestCurrentTrust(t *testing.T) {
	trusted := map[string]store.Key{"k1": {Name: "acme", KeyID: "k1"}}
	for _, tc := range []struct {
		name    string
		r       store.Release
		trust   string
		refused bool // by CheckTrusted
	}{
		{"signed by a trusted key", store.Release{Signer: "acme", KeyID: "k1"}, "signed by trusted key acme", false},
		{"key removed", store.Release{Name: "a", Version: "1", Signer: "old", KeyID: "k2"}, "signed by key old (k2), no longer trusted", true},
		{"unsigned", store.Release{AllowUnsigned: true}, "unsigned (installed with --allow-unsigned)", false},
		{"development", store.Release{Development: true}, "development copy (never signed, published only on endpoint dev)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CurrentTrust(tc.r, trusted); got != tc.trust {
				t.Errorf("CurrentTrust = %q, want %q", got, tc.trust)
			}
			err := CheckTrusted(tc.r, trusted)
			if (err != nil) != tc.refused || (err != nil && kernel.ErrorCode(err) != kernel.CodeDenied) {
				t.Errorf("CheckTrusted = %v, refused want %v", err, tc.refused)
			}
		})
	}
}

// TestDiagnostics: an invocation that succeeded silently leaves nothing;
// one that failed or wrote is kept, and only the newest maxDiagnostics.
func TestDiagnostics(t *testing.T) {
	h := newHome(t)
	inv := func(id string, stderr string) *kernel.Invocation {
		d := kernel.NewDiagnostics(1 << 10)
		d.Write([]byte(stderr))
		return &kernel.Invocation{ID: id, Command: &kernel.Command{ID: "acme.x"}, Stdout: kernel.NewDiagnostics(1 << 10), Stderr: d}
	}
	for _, tc := range []struct {
		id      string
		stderr  string
		outcome kernel.Outcome
		kept    bool
	}{
		{"quiet", "", kernel.Succeeded, false},
		{"noisy", "warning: \xff\n", kernel.Succeeded, true},
		{"failed", "", kernel.CommandFailed, true},
	} {
		if err := h.SaveDiagnostics("local", inv(tc.id, tc.stderr), kernel.Result{Outcome: tc.outcome}); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := h.LoadDiagnostics()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.InvocationID)
	}
	if strings.Join(ids, " ") != "noisy failed" {
		t.Fatalf("kept %v, want [noisy failed]", ids)
	}
	if recs[0].Stderr != "warning: \uFFFD\n" || recs[0].Endpoint != "local" || recs[0].Command != "acme.x" {
		t.Errorf("record %+v", recs[0])
	}
	for i := range maxDiagnostics + 3 {
		if err := h.SaveDiagnostics("local", inv(fmt.Sprintf("f%d", i), ""), kernel.Result{Outcome: kernel.CommandFailed}); err != nil {
			t.Fatal(err)
		}
	}
	if recs, err = h.LoadDiagnostics(); err != nil || len(recs) != maxDiagnostics {
		t.Fatalf("%d kept (%v), want %d", len(recs), err, maxDiagnostics)
	}
}

// A revision published before search records is no revision to keep when
// the draft binds the same: publish makes one with them, so the hint of a
// search refused there ('rukh publish') leads somewhere.
func TestPublishUnsearchedIsChanged(t *testing.T) {
	h := newHome(t)
	built, rev := publish(t, h) // as a Rukh from before search: no search records
	if u, err := h.unsearched(rev); err != nil || !u {
		t.Fatalf("a revision without search records: unsearched %v, %v", u, err)
	}
	searched, err := h.Store.Publish(rev.Number, func(n uint64, id string, w *store.IndexWriter) (store.Revision, error) {
		w.IndexSearch(search.ObjectBag)
		return store.Revision{Number: n, ID: id, Parent: rev.Number}, policy.WriteIndex(built, w)
	})
	if err != nil {
		t.Fatal(err)
	}
	if u, err := h.unsearched(searched); err != nil || u {
		t.Fatalf("a revision with search records: unsearched %v, %v", u, err)
	}
	for _, tc := range []struct {
		c    candidate
		want bool
	}{
		{candidate{old: built}, true},
		{candidate{old: built, oldUnsearched: true}, false},
		{candidate{old: built, o: PublishOptions{Force: true}}, false},
		{candidate{}, false},
	} {
		if got := tc.c.unchanged(built); got != tc.want {
			t.Errorf("unsearched %v, force %v, old %v: unchanged %v, want %v", tc.c.oldUnsearched, tc.c.o.Force, tc.c.old != nil, got, tc.want)
		}
	}
}

// UntrustedReleasesAt answers as of the stamp it is given: the set kept at
// that stamp without a read, and a set read under a stamp the store moved
// on from is read again by a caller that looks now.
func TestUntrustedReleasesAt(t *testing.T) {
	h := newHome(t)
	if _, err := h.Store.Secret(); err != nil { // creates the store file
		t.Fatal(err)
	}
	reads := 0
	defer func(f func(*store.Store) (map[string]bool, error)) { readUntrusted = f }(readUntrusted)
	readUntrusted = func(s *store.Store) (map[string]bool, error) { reads++; return s.UntrustedReleases() }
	stamp := func() *store.Stamp {
		st, ok := h.Store.Stamp()
		if !ok {
			t.Fatal("no stamp")
		}
		return &st
	}
	// Another handle's write changes the stamp, as a trust change would.
	write := func() {
		if err := store.New(h.Store.Home()).AppendAudit(store.AuditRecord{Tool: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	old := stamp()
	write()
	steps := []struct {
		name  string
		at    *store.Stamp
		reads int
	}{
		{"the lookup's stamp, nothing kept: read", old, 1},
		{"the same stamp again: kept", old, 1},
		{"now: the store moved on from that stamp, read", nil, 2},
		{"now again: kept", nil, 2},
		{"a stamp taken now: kept", stamp(), 2},
		{"the old stamp: older than what is kept, read", old, 3},
	}
	for _, s := range steps {
		if _, err := h.UntrustedReleasesAt(s.at); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if reads != s.reads {
			t.Fatalf("%s: %d reads of the store, want %d", s.name, reads, s.reads)
		}
	}
}
