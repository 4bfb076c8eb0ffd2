package home

import (
	"reflect"
	"testing"

	"github.com/rukh-dev/rukh/extpkg"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
)

// install records a release as installed (no copy on disk: these tests
// read the store, never run a command).
func install(t testing.TB, h *Home, r store.Release) store.Release {
	t.Helper()
	if r.Digest == "" {
		r.Digest = digest(r.Name + "@" + r.Version)
	}
	if r.Signer == "" {
		r.AllowUnsigned = true
	}
	if _, err := h.Store.PutRelease(r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRemoveKey: a key that signed a release the draft activates is kept
// unless force, which removes it and says which releases it leaves
// untrusted; a key nothing uses goes at once, an unknown one is not found.
func TestRemoveKey(t *testing.T) {
	for _, tc := range []struct {
		name     string
		activate bool // the draft activates the release the key signed
		force    bool
		remove   string // the key removed: "acme" (added) or another name
		code     kernel.Code
		uses     []KeyUse
		kept     bool // the key is still trusted afterwards
	}{
		{"in use", true, false, "acme", kernel.CodeConflict, nil, true},
		{"in use, forced", true, true, "acme", "", []KeyUse{{Name: "acme.x", Release: "acme.x@1.0.0", Where: "activated in the draft"}}, false},
		{"unused", false, false, "acme", "", nil, false},
		{"unknown", false, false, "other", kernel.CodeNotFound, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHome(t)
			pub, _, err := extpkg.GenerateKey()
			if err != nil {
				t.Fatal(err)
			}
			k, err := h.AddKey("acme", pub)
			if err != nil {
				t.Fatal(err)
			}
			install(t, h, store.Release{Name: "acme.x", Version: "1.0.0", Signer: k.Name, KeyID: k.KeyID})
			if tc.activate {
				if _, _, err := h.Activate("acme.x@1.0.0"); err != nil {
					t.Fatal(err)
				}
			}
			uses, err := h.RemoveKey(tc.remove, tc.force)
			if kernel.ErrorCode(err) != tc.code || (tc.code == "") != (err == nil) {
				t.Fatalf("RemoveKey: %v (code %q), want code %q", err, kernel.ErrorCode(err), tc.code)
			}
			if !reflect.DeepEqual(uses, tc.uses) {
				t.Errorf("uses %+v, want %+v", uses, tc.uses)
			}
			if _, kept, err := h.Store.Key("acme"); err != nil || kept != tc.kept {
				t.Errorf("key acme trusted: %v (%v), want %v", kept, err, tc.kept)
			}
		})
	}
}

// TestAddAgent: an agent is bound to an endpoint the draft profile has;
// any other is refused before an agent is recorded.
func TestAddAgent(t *testing.T) {
	for _, tc := range []struct {
		endpoint string
		code     kernel.Code
	}{
		{policy.DefaultEndpoint, ""},
		{"nowhere", kernel.CodeNotFound},
	} {
		t.Run(tc.endpoint, func(t *testing.T) {
			h := newHome(t)
			a, err := h.AddAgent("bot", tc.endpoint)
			if kernel.ErrorCode(err) != tc.code || (tc.code == "") != (err == nil) {
				t.Fatalf("AddAgent: %v (code %q), want code %q", err, kernel.ErrorCode(err), tc.code)
			}
			if err == nil && (a.Token == "" || a.ServedOverHTTP) {
				t.Errorf("agent %+v: want a key, and no HTTP transport on the default endpoint", a)
			}
			agents, err := h.Store.Agents()
			if err != nil {
				t.Fatal(err)
			}
			if want := tc.code == ""; (len(agents) == 1) != want {
				t.Errorf("%d agents recorded", len(agents))
			}
		})
	}
}

// TestActivateDeactivate: each step changes the draft's active releases
// as said, and reports the version it replaced.
func TestActivateDeactivate(t *testing.T) {
	h := newHome(t)
	for _, v := range []string{"1.0.0", "1.2.0", "2.0.0-rc.1"} {
		install(t, h, store.Release{Name: "acme.x", Version: v})
	}
	install(t, h, store.Release{Name: "acme.y", Version: "0.1.0"})
	for _, step := range []struct {
		op, ref string
		code    kernel.Code
		prev    string            // Activate: the version it replaced
		active  map[string]string // the draft afterwards
	}{
		{"activate", "acme.x", "", "", map[string]string{"acme.x": "1.2.0"}}, // the highest, not the pre-release
		{"activate", "acme.x@2.0.0-rc.1", "", "1.2.0", map[string]string{"acme.x": "2.0.0-rc.1"}},
		{"activate", "acme.y", "", "", map[string]string{"acme.x": "2.0.0-rc.1", "acme.y": "0.1.0"}},
		{"activate", "acme.x@3.0.0", kernel.CodeNotFound, "", map[string]string{"acme.x": "2.0.0-rc.1", "acme.y": "0.1.0"}},
		{"activate", "acme.z", kernel.CodeNotFound, "", map[string]string{"acme.x": "2.0.0-rc.1", "acme.y": "0.1.0"}},
		{"deactivate", "acme.x", "", "", map[string]string{"acme.y": "0.1.0"}},
		{"deactivate", "acme.x", kernel.CodeNotFound, "", map[string]string{"acme.y": "0.1.0"}},
	} {
		var err error
		var prev string
		if step.op == "activate" {
			_, prev, err = h.Activate(step.ref)
		} else {
			err = h.Deactivate(step.ref)
		}
		if kernel.ErrorCode(err) != step.code || (step.code == "") != (err == nil) {
			t.Fatalf("%s %s: %v (code %q), want code %q", step.op, step.ref, err, kernel.ErrorCode(err), step.code)
		}
		if prev != step.prev {
			t.Errorf("%s %s replaced %q, want %q", step.op, step.ref, prev, step.prev)
		}
		d, err := h.Store.Draft()
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Active; !reflect.DeepEqual(got, step.active) {
			t.Errorf("after %s %s the draft activates %v, want %v", step.op, step.ref, got, step.active)
		}
	}
}

// TestStatus: what a fresh home and a published one report.
func TestStatus(t *testing.T) {
	t.Run("fresh", func(t *testing.T) {
		rep, err := newHome(t).Status()
		if err != nil {
			t.Fatal(err)
		}
		want := &StatusReport{Pending: []string{"first publication"}}
		if !reflect.DeepEqual(rep, want) {
			t.Errorf("status %+v, want %+v", rep, want)
		}
	})
	// A revision published while the draft stayed empty: publishing the
	// draft would take both packages out and bring the default profile
	// back; their copies were never installed here, so their calls are
	// refused as damaged.
	t.Run("published", func(t *testing.T) {
		h := newHome(t)
		_, rev := publish(t, h)
		rep, err := h.Status()
		if err != nil {
			t.Fatal(err)
		}
		var damaged []string
		for _, p := range rep.Damaged {
			damaged = append(damaged, p.Release)
		}
		for _, c := range []struct {
			what      string
			got, want any
		}{
			{"active", rep.Active, rev.ID},
			{"published at", !rev.CreatedAt.IsZero() && rep.PublishedAt.Equal(rev.CreatedAt), true},
			{"tools", rep.Tools, map[string]int{"local": 2, "dev": 2}},
			{"development", rep.Development, []string{"acme.p1@1.0.0"}},
			{"pending", rep.Pending, []string{"deactivate acme.p0@1.0.0", "deactivate acme.p1@1.0.0", "profile changed (every tool gets a new name)"}},
			{"damaged", damaged, []string{"acme.p0@1.0.0", "acme.p1@1.0.0"}},
			{"untrusted", len(rep.Untrusted), 0},
			{"draft error", rep.DraftError, ""},
		} {
			if !reflect.DeepEqual(c.got, c.want) {
				t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
			}
		}
	})
}
