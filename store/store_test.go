package store_test

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
)

// mustStore returns a store in a fresh home and checks its invariants when
// the test ends, whatever the test did.
func mustStore(t testing.TB) *store.Store {
	t.Helper()
	s := newTestStore(t)
	t.Cleanup(func() {
		if err := s.Check(); err != nil {
			t.Errorf("store invariants after the test: %v", err)
		}
	})
	return s
}

// fileStore is mustStore for tests of what only the bbolt backend has: a
// file, its modes, its lock, its pages.
func fileStore(t testing.TB) *store.Store {
	t.Helper()
	s := store.New(filepath.Join(t.TempDir(), "home"))
	t.Cleanup(func() {
		if err := s.Check(); err != nil {
			t.Errorf("store invariants after the test: %v", err)
		}
	})
	return s
}

// reopen is another handle on the same store, as another process has.
func reopen(t testing.TB, s *store.Store) *store.Store {
	t.Helper()
	if !s.Shared() {
		return store.New(s.Home())
	}
	o, err := store.OpenEtcd(s.Path(), s.Home(), store.EtcdOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

func wantCode(t testing.TB, err error, code kernel.Code, contains string) {
	t.Helper()
	if got := kernel.ErrorCode(err); got != code {
		t.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
	if err != nil && !strings.Contains(err.Error(), contains) {
		t.Fatalf("error %q does not mention %q", err, contains)
	}
}

func rel(name, version string) store.Release {
	return store.Release{Name: name, Version: version, Digest: "h1:" + name + "@" + version,
		Manifest: []byte(`{"name":"` + name + `"}`), Dir: "/releases/" + name}
}

func mustPut(t testing.TB, s *store.Store, rs ...store.Release) {
	t.Helper()
	for _, r := range rs {
		if _, err := s.PutRelease(r); err != nil {
			t.Fatalf("PutRelease(%s@%s): %v", r.Name, r.Version, err)
		}
	}
}

// publish publishes a revision binding the given digests on top of the
// current active one.
func publish(t testing.TB, s *store.Store, binding string, digests ...string) store.Revision {
	t.Helper()
	active, err := s.Active()
	if err != nil {
		t.Fatal(err)
	}
	rev, err := s.Publish(active, func(n uint64, id string, _ *store.IndexWriter) (store.Revision, error) {
		return store.Revision{Releases: digests, Binding: []byte(binding + " " + id)}, nil
	})
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	return rev
}

func TestHomeFor(t *testing.T) {
	mac := "/Users/ann/Library/Application Support/rukh"
	tests := []struct {
		name, goos string
		env        map[string]string
		want       string
		err        bool
	}{
		{"rukh home wins", "linux", map[string]string{"RUKH_HOME": "/srv/rukh", "XDG_DATA_HOME": "/x", "HOME": "/h"}, "/srv/rukh", false},
		{"rukh home wins on macOS", "darwin", map[string]string{"RUKH_HOME": "/srv/rukh", "XDG_DATA_HOME": "/x", "HOME": "/Users/ann"}, "/srv/rukh", false},
		{"xdg data home", "linux", map[string]string{"XDG_DATA_HOME": "/x", "HOME": "/h"}, "/x/rukh", false},
		{"xdg data home on macOS", "darwin", map[string]string{"XDG_DATA_HOME": "/x", "HOME": "/Users/ann"}, "/x/rukh", false},
		{"relative xdg is ignored", "linux", map[string]string{"XDG_DATA_HOME": "rel", "HOME": "/h"}, "/h/.local/share/rukh", false},
		{"relative xdg is ignored on macOS", "darwin", map[string]string{"XDG_DATA_HOME": "rel", "HOME": "/Users/ann"}, mac, false},
		{"linux", "linux", map[string]string{"HOME": "/h"}, "/h/.local/share/rukh", false},
		{"macOS", "darwin", map[string]string{"HOME": "/Users/ann"}, mac, false},
		{"freebsd", "freebsd", map[string]string{"HOME": "/h"}, "/h/.local/share/rukh", false},
		{"openbsd", "openbsd", map[string]string{"HOME": "/h"}, "/h/.local/share/rukh", false},
		{"netbsd", "netbsd", map[string]string{"HOME": "/h"}, "/h/.local/share/rukh", false},
		{"relative HOME", "darwin", map[string]string{"HOME": "Users/ann"}, "", true},
		{"nothing set", "linux", map[string]string{}, "", true},
		{"nothing set on macOS", "darwin", map[string]string{}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := store.HomeFor(tt.goos, func(k string) string { return tt.env[k] })
			if tt.err {
				wantCode(t, err, kernel.CodeInvalid, "RUKH_HOME")
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("HomeFor(%s) = %q, %v; want %q", tt.goos, got, err, tt.want)
			}
		})
	}
}

func TestDefaultHomeIsThisPlatformsRule(t *testing.T) {
	env := func(k string) string { return map[string]string{"HOME": "/h"}[k] }
	want, _ := store.HomeFor(runtime.GOOS, env)
	if got, err := store.DefaultHome(env); err != nil || got != want {
		t.Fatalf("DefaultHome = %q, %v; want %q", got, err, want)
	}
}

func TestParseRevisionID(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want uint64
	}{{"r1", 1}, {"7", 7}, {"r12", 12}, {"r0", 0}, {"0", 0}, {"r", 0}, {"", 0}, {"r01", 0}, {"x3", 0}, {"r-1", 0}} {
		got, err := store.ParseRevisionID(tt.in)
		if got != tt.want || (tt.want == 0) != (err != nil) {
			t.Errorf("ParseRevisionID(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
		if err == nil && store.RevisionID(got) != "r"+strings.TrimPrefix(tt.in, "r") {
			t.Errorf("RevisionID(%d) does not round-trip %q", got, tt.in)
		}
	}
}

func TestReadingMissingStoreCreatesNothing(t *testing.T) {
	s := mustStore(t)
	reads := map[string]func() error{
		"Active":    func() error { n, err := s.Active(); return zero(n, err) },
		"Releases":  func() error { r, err := s.Releases(); return zero(len(r), err) },
		"Keys":      func() error { k, err := s.Keys(); return zero(len(k), err) },
		"Revisions": func() error { r, err := s.Revisions(); return zero(len(r), err) },
		"Draft": func() error {
			d, err := s.Draft()
			if err == nil && (d.Active == nil || len(d.Active) != 0 || d.Profile != nil) {
				return fmt.Errorf("draft = %+v", d)
			}
			return err
		},
		"Check": s.Check,
	}
	for name, read := range reads {
		if err := read(); err != nil {
			t.Errorf("%s on a missing store: %v", name, err)
		}
	}
	notFound := map[string]func() error{
		"Release":         func() error { _, err := s.Release("a", "1.0.0"); return err },
		"ReleaseByDigest": func() error { _, err := s.ReleaseByDigest("h1:x"); return err },
		"ActiveRevision":  func() error { _, err := s.ActiveRevision(); return err },
		"Revision":        func() error { _, err := s.Revision(1); return err },
	}
	for name, read := range notFound {
		if code := kernel.ErrorCode(read()); code != kernel.CodeNotFound {
			t.Errorf("%s on a missing store: code %q, want not_found", name, code)
		}
	}
	if _, err := os.Stat(s.Home()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("reads created the home: %v", err)
	}
}

func zero(n any, err error) error {
	if err == nil && n != 0 && n != uint64(0) {
		return fmt.Errorf("got %v, want nothing", n)
	}
	return err
}

func TestFirstWriteCreatesPrivateFiles(t *testing.T) {
	s := fileStore(t)
	mustPut(t, s, rel("a", "1.0.0"))
	for path, want := range map[string]os.FileMode{s.Home(): 0o700, s.Path(): 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s mode = %v, want %v", path, got, want)
		}
	}
	ents, _ := os.ReadDir(s.Home())
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{store.DBName}) {
		t.Errorf("home holds %v, want only %s", names, store.DBName)
	}
	if s.ReleasesDir() != filepath.Join(s.Home(), "releases") {
		t.Errorf("ReleasesDir = %s", s.ReleasesDir())
	}
}

func TestPutRelease(t *testing.T) {
	s := mustStore(t)
	mustPut(t, s, rel("acme.notes", "1.2.0"))
	tests := []struct {
		name    string
		r       store.Release
		existed bool
		code    kernel.Code
		msg     string
	}{
		{"same digest again", rel("acme.notes", "1.2.0"), true, "", ""},
		{"other digest", store.Release{Name: "acme.notes", Version: "1.2.0", Digest: "h1:other"}, false, kernel.CodeConflict, "already installed with digest"},
		{"digest of another release", store.Release{Name: "acme.notes", Version: "1.3.0", Digest: "h1:acme.notes@1.2.0"}, false, kernel.CodeConflict, "already recorded for release acme.notes@1.2.0"},
		{"new version", rel("acme.notes", "1.3.0"), false, "", ""},
		{"no digest", store.Release{Name: "x", Version: "1.0.0"}, false, kernel.CodeInvalid, "digest"},
		{"no name", store.Release{Version: "1.0.0", Digest: "h1:y"}, false, kernel.CodeInvalid, "name"},
		{"at in name", store.Release{Name: "a@b", Version: "1.0.0", Digest: "h1:z"}, false, kernel.CodeInvalid, "name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			existed, err := s.PutRelease(tt.r)
			wantCode(t, err, tt.code, tt.msg)
			if existed != tt.existed {
				t.Errorf("existed = %v, want %v", existed, tt.existed)
			}
		})
	}
	got, err := s.Release("acme.notes", "1.2.0")
	if err != nil {
		t.Fatal(err)
	}
	want := rel("acme.notes", "1.2.0")
	if got.Digest != want.Digest || !bytes.Equal(got.Manifest, want.Manifest) || got.Dir != want.Dir || got.InstalledAt.IsZero() {
		t.Errorf("Release = %+v", got)
	}
	byDigest, err := s.ReleaseByDigest(want.Digest)
	if err != nil || byDigest.Name != "acme.notes" || byDigest.Version != "1.2.0" {
		t.Errorf("ReleaseByDigest = %+v, %v", byDigest, err)
	}
	_, err = s.Release("acme.notes", "9.9.9")
	wantCode(t, err, kernel.CodeNotFound, "acme.notes@9.9.9 is not installed")
	_, err = s.ReleaseByDigest("h1:nope")
	wantCode(t, err, kernel.CodeNotFound, "h1:nope")
}

func TestReleaseFieldsRoundTrip(t *testing.T) {
	s := mustStore(t)
	at := time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC)
	in := store.Release{Name: "p", Version: "2.0.0", Digest: "h1:abc=", Manifest: []byte("{\"a\":\"\xe2\x82\xac\"}"),
		Dir: "/d", Signer: "acme", KeyID: "k1", AllowUnsigned: true, InstalledAt: at}
	mustPut(t, s, in)
	out, err := s.Release("p", "2.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if out.Name != in.Name || out.Version != in.Version || out.Digest != in.Digest || !bytes.Equal(out.Manifest, in.Manifest) ||
		out.Dir != in.Dir || out.Signer != in.Signer || out.KeyID != in.KeyID || out.AllowUnsigned != in.AllowUnsigned || !out.InstalledAt.Equal(at) {
		t.Errorf("round trip:\n got %+v\nwant %+v", out, in)
	}
}

func TestReleasesOrder(t *testing.T) {
	s := mustStore(t)
	mustPut(t, s, rel("b", "1.10.0"), rel("b", "1.9.0"), rel("a", "2.0.0"), rel("b", "1.2.0"),
		rel("b", "1.2.0-rc.1"), rel("a", "10.0.0"), rel("a.x", "1.0.0"))
	rs, err := s.Releases()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		got = append(got, r.Name+"@"+r.Version)
	}
	want := []string{"a@2.0.0", "a@10.0.0", "a.x@1.0.0", "b@1.2.0-rc.1", "b@1.2.0", "b@1.9.0", "b@1.10.0"}
	if !slices.Equal(got, want) {
		t.Errorf("Releases order\n got %v\nwant %v", got, want)
	}
}

func TestDeleteRelease(t *testing.T) {
	tests := []struct {
		name     string
		activate bool // in the draft
		bind     bool // by the active revision
		oldBind  bool // by an older revision only
		code     kernel.Code
		msg      string
	}{
		{"unused", false, false, false, "", ""},
		{"activated in the draft", true, false, false, kernel.CodeConflict, "still in use: activated in the draft"},
		{"bound by the active revision", false, true, false, kernel.CodeConflict, "still in use: bound by the active revision r1"},
		{"both", true, true, false, kernel.CodeConflict, "bound by the active revision r1 and activated in the draft"},
		{"bound only by an older revision", false, false, true, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustStore(t)
			r := rel("acme.notes", "1.0.0")
			mustPut(t, s, r, rel("other", "1.0.0"))
			if tt.activate {
				if err := s.UpdateDraft(func(d *store.Draft) error { d.Active[r.Name] = r.Version; return nil }); err != nil {
					t.Fatal(err)
				}
			}
			if tt.bind || tt.oldBind {
				publish(t, s, "with", r.Digest)
			}
			if tt.oldBind {
				publish(t, s, "without", "h1:other@1.0.0")
			}
			err := s.DeleteRelease(r.Name, r.Version)
			wantCode(t, err, tt.code, tt.msg)
			_, getErr := s.Release(r.Name, r.Version)
			if deleted := kernel.ErrorCode(getErr) == kernel.CodeNotFound; deleted != (err == nil) {
				t.Fatalf("after DeleteRelease (%v) the release lookup says %v", err, getErr)
			}
			if err == nil {
				if _, err := s.ReleaseByDigest(r.Digest); kernel.ErrorCode(err) != kernel.CodeNotFound {
					t.Errorf("digest index still finds the deleted release: %v", err)
				}
			}
			if tt.code == kernel.CodeConflict && kernel.ErrorHint(err) == "" {
				t.Error("a refusal should carry a hint")
			}
		})
	}
	t.Run("not installed", func(t *testing.T) {
		s := mustStore(t)
		wantCode(t, s.DeleteRelease("x", "1.0.0"), kernel.CodeNotFound, "x@1.0.0")
	})
}

func TestKeys(t *testing.T) {
	s := mustStore(t)
	acme := store.Key{Name: "acme", Public: "rukh-ed25519-pub:AAAA", KeyID: "id-a"}
	if err := s.PutKey(acme); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		k    store.Key
		code kernel.Code
		msg  string
	}{
		{"identical again", acme, "", ""},
		{"same name, other key", store.Key{Name: "acme", Public: "rukh-ed25519-pub:BBBB", KeyID: "id-b"}, kernel.CodeConflict, `key name "acme" already trusts another key`},
		{"same key, other name", store.Key{Name: "acme2", Public: acme.Public, KeyID: acme.KeyID}, kernel.CodeConflict, `already trusted as "acme"`},
		{"same key id, other name", store.Key{Name: "acme3", Public: "rukh-ed25519-pub:CCCC", KeyID: acme.KeyID}, kernel.CodeConflict, `already trusted as "acme"`},
		{"another", store.Key{Name: "beta", Public: "rukh-ed25519-pub:DDDD", KeyID: "id-d"}, "", ""},
		{"another first by name", store.Key{Name: "aaa", Public: "rukh-ed25519-pub:EEEE", KeyID: "id-e"}, "", ""},
		{"no public", store.Key{Name: "x"}, kernel.CodeInvalid, "public"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantCode(t, s.PutKey(tt.k), tt.code, tt.msg) })
	}
	names := func() (out []string) {
		ks, err := s.Keys()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range ks {
			if k.AddedAt.IsZero() {
				t.Errorf("key %s has no AddedAt", k.Name)
			}
			out = append(out, k.Name)
		}
		return out
	}
	if got := names(); !slices.Equal(got, []string{"aaa", "acme", "beta"}) {
		t.Errorf("Keys = %v", got)
	}
	if err := s.DeleteKey("acme"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.DeleteKey("acme"), kernel.CodeNotFound, `"acme"`)
	if got := names(); !slices.Equal(got, []string{"aaa", "beta"}) {
		t.Errorf("Keys after delete = %v", got)
	}
	// Freed name and key may be trusted again, under another name.
	if err := s.PutKey(store.Key{Name: "acme-new", Public: acme.Public, KeyID: acme.KeyID}); err != nil {
		t.Errorf("re-trusting a removed key: %v", err)
	}
}

// TestUntrustedReleases: every trust change lists the installed releases
// whose key is no longer trusted; unsigned releases are never listed.
func TestUntrustedReleases(t *testing.T) {
	s := mustStore(t)
	acme := store.Key{Name: "acme", Public: "rukh-ed25519-pub:AAAA", KeyID: "id-a"}
	beta := store.Key{Name: "beta", Public: "rukh-ed25519-pub:BBBB", KeyID: "id-b"}
	for _, k := range []store.Key{acme, beta} {
		if err := s.PutKey(k); err != nil {
			t.Fatal(err)
		}
	}
	signed := func(r store.Release, k store.Key) store.Release { r.Signer, r.KeyID = k.Name, k.KeyID; return r }
	a1, b1, u1 := signed(rel("a", "1.0.0"), acme), signed(rel("b", "1.0.0"), beta), rel("u", "1.0.0")
	u1.AllowUnsigned = true
	mustPut(t, s, a1, b1, u1)
	untrusted := func() []string {
		t.Helper()
		m, err := s.UntrustedReleases()
		if err != nil {
			t.Fatal(err)
		}
		return slices.Sorted(maps.Keys(m))
	}
	steps := []struct {
		name string
		do   func() error
		want []string
	}{
		{"all trusted", func() error { return nil }, nil},
		{"remove acme", func() error { return s.DeleteKey("acme") }, []string{a1.Ref()}},
		{"remove beta", func() error { return s.DeleteKey("beta") }, []string{a1.Ref(), b1.Ref()}},
		{"acme again, under another name", func() error {
			return s.PutKey(store.Key{Name: "acme-new", Public: acme.Public, KeyID: acme.KeyID})
		}, []string{b1.Ref()}},
		{"another key named beta", func() error {
			return s.PutKey(store.Key{Name: "beta", Public: "rukh-ed25519-pub:CCCC", KeyID: "id-c"})
		}, []string{b1.Ref()}},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := untrusted(); !slices.Equal(got, st.want) {
			t.Errorf("%s: untrusted = %v, want %v", st.name, got, st.want)
		}
	}
}

// TestPublishListsUntrusted: a home whose key was removed before the list
// of untrusted releases existed gets the list with its next publish.
func TestPublishListsUntrusted(t *testing.T) {
	s := mustStore(t)
	acme := store.Key{Name: "acme", Public: "rukh-ed25519-pub:AAAA", KeyID: "id-a"}
	if err := s.PutKey(acme); err != nil {
		t.Fatal(err)
	}
	a1 := rel("a", "1.0.0")
	a1.Signer, a1.KeyID = acme.Name, acme.KeyID
	mustPut(t, s, a1)
	if err := s.DeleteKey("acme"); err != nil {
		t.Fatal(err)
	}
	if err := store.ForgetUntrustedForTest(s); err != nil {
		t.Fatal(err)
	}
	publish(t, s, "b")
	m, err := s.UntrustedReleases()
	if err != nil {
		t.Fatal(err)
	}
	if !m[a1.Ref()] || len(m) != 1 {
		t.Errorf("untrusted after a publish = %v, want only %s", m, a1.Ref())
	}
}

// TestUntrustedListKept: once listed, a publish does not rebuild the list
// of untrusted releases (it reads every release record); a removal drops
// its release from it instead.
func TestUntrustedListKept(t *testing.T) {
	s := mustStore(t)
	acme := store.Key{Name: "acme", Public: "rukh-ed25519-pub:AAAA", KeyID: "id-a"}
	if err := s.PutKey(acme); err != nil {
		t.Fatal(err)
	}
	a1, b1 := rel("a", "1.0.0"), rel("b", "1.0.0")
	a1.Signer, a1.KeyID = acme.Name, acme.KeyID
	b1.Signer, b1.KeyID = acme.Name, acme.KeyID
	mustPut(t, s, a1, b1)
	if err := s.DeleteKey("acme"); err != nil {
		t.Fatal(err)
	}
	untrusted := func() map[string]bool {
		t.Helper()
		m, err := s.UntrustedReleases()
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m := untrusted(); !m[a1.Ref()] || !m[b1.Ref()] || len(m) != 2 {
		t.Fatalf("untrusted after the key's removal = %v, want %s and %s", m, a1.Ref(), b1.Ref())
	}
	if err := s.DeleteRelease("a", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if m := untrusted(); m[a1.Ref()] || !m[b1.Ref()] || len(m) != 1 {
		t.Errorf("untrusted after a's removal = %v, want only %s", m, b1.Ref())
	}
	publish(t, s, "x")
	if m := untrusted(); !m[b1.Ref()] || len(m) != 1 {
		t.Errorf("untrusted after a publish = %v, want only %s", m, b1.Ref())
	}
	if err := s.DeleteRelease("b", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if m := untrusted(); len(m) != 0 {
		t.Errorf("untrusted after every untrusted release was removed = %v, want none", m)
	}
}

func TestUpdateDraft(t *testing.T) {
	s := mustStore(t)
	mustPut(t, s, rel("a", "1.0.0"), rel("a", "2.0.0"), rel("b", "1.0.0"))
	boom := errors.New("boom")
	steps := []struct {
		name    string
		fn      func(*store.Draft) error
		code    kernel.Code
		active  map[string]string
		profile string
	}{
		{"activate two", func(d *store.Draft) error { d.Active["a"] = "1.0.0"; d.Active["b"] = "1.0.0"; return nil }, "",
			map[string]string{"a": "1.0.0", "b": "1.0.0"}, ""},
		{"set profile", func(d *store.Draft) error { d.Profile = []byte(`{"endpoints":{}}`); return nil }, "",
			map[string]string{"a": "1.0.0", "b": "1.0.0"}, `{"endpoints":{}}`},
		{"switch version", func(d *store.Draft) error { d.Active["a"] = "2.0.0"; return nil }, "",
			map[string]string{"a": "2.0.0", "b": "1.0.0"}, `{"endpoints":{}}`},
		{"callback error rolls back", func(d *store.Draft) error { d.Active = nil; d.Profile = nil; return boom }, kernel.CodeInternal,
			map[string]string{"a": "2.0.0", "b": "1.0.0"}, `{"endpoints":{}}`},
		{"kernel error passes through", func(d *store.Draft) error { return kernel.Errorf(kernel.CodeInvalid, "bad profile") }, kernel.CodeInvalid,
			map[string]string{"a": "2.0.0", "b": "1.0.0"}, `{"endpoints":{}}`},
		{"not installed", func(d *store.Draft) error { d.Active["a"] = "3.0.0"; d.Profile = nil; return nil }, kernel.CodeNotFound,
			map[string]string{"a": "2.0.0", "b": "1.0.0"}, `{"endpoints":{}}`},
		{"deactivate and default profile", func(d *store.Draft) error { delete(d.Active, "b"); d.Profile = nil; return nil }, "",
			map[string]string{"a": "2.0.0"}, ""},
	}
	var lastChanged time.Time
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			err := s.UpdateDraft(st.fn)
			if kernel.ErrorCode(err) != st.code {
				t.Fatalf("UpdateDraft: %v, want code %q", err, st.code)
			}
			if st.code == kernel.CodeInternal && !errors.Is(err, boom) {
				t.Errorf("callback error %v does not wrap boom", err)
			}
			d, err := s.Draft()
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Active) != len(st.active) {
				t.Errorf("Active = %v, want %v", d.Active, st.active)
			}
			for k, v := range st.active {
				if d.Active[k] != v {
					t.Errorf("Active = %v, want %v", d.Active, st.active)
				}
			}
			if string(d.Profile) != st.profile || (st.profile == "") != (d.Profile == nil) {
				t.Errorf("Profile = %q, want %q", d.Profile, st.profile)
			}
			if st.code == "" && !d.Changed.After(lastChanged) {
				t.Errorf("Changed %v did not move past %v", d.Changed, lastChanged)
			}
			if st.code != "" && !d.Changed.Equal(lastChanged) {
				t.Errorf("a failed update moved Changed to %v", d.Changed)
			}
			lastChanged = d.Changed
		})
	}
}

func TestPublish(t *testing.T) {
	s := mustStore(t)
	a, b := rel("a", "1.0.0"), rel("b", "1.0.0")
	mustPut(t, s, a, b)

	var sawN uint64
	var sawID string
	r1, err := s.Publish(0, func(n uint64, id string, _ *store.IndexWriter) (store.Revision, error) {
		sawN, sawID = n, id
		// build may read the store: it runs outside the write transaction.
		if _, err := s.Release("a", "1.0.0"); err != nil {
			return store.Revision{}, err
		}
		return store.Revision{Releases: []string{a.Digest}, Binding: []byte("binding of " + id), Note: "first",
			Number: 99, ID: "bogus", Parent: 42}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if sawN != 1 || sawID != "r1" || r1.Number != 1 || r1.ID != "r1" || r1.Parent != 0 || r1.CreatedAt.IsZero() {
		t.Fatalf("first publish: build saw %d %q, got %+v", sawN, sawID, r1)
	}

	t.Run("stale expectActive", func(t *testing.T) {
		called := false
		_, err := s.Publish(0, func(uint64, string, *store.IndexWriter) (store.Revision, error) {
			called = true
			return store.Revision{}, nil
		})
		wantCode(t, err, kernel.CodeConflict, "the active revision changed while publishing")
		if called {
			t.Error("build ran although the active revision was already stale")
		}
	})
	t.Run("another publish during build", func(t *testing.T) {
		_, err := s.Publish(1, func(n uint64, id string, _ *store.IndexWriter) (store.Revision, error) {
			publish(t, reopen(t, s), "sneaky") // becomes r2, as another machine publishes
			return store.Revision{Binding: []byte("late " + id)}, nil
		})
		wantCode(t, err, kernel.CodeConflict, "the active revision changed while publishing")
		if n, _ := s.Active(); n != 2 {
			t.Errorf("active = %d, want the sneaky r2", n)
		}
	})
	t.Run("build error", func(t *testing.T) {
		_, err := s.Publish(2, func(uint64, string, *store.IndexWriter) (store.Revision, error) {
			return store.Revision{}, kernel.Errorf(kernel.CodeInvalid, "route collision")
		})
		wantCode(t, err, kernel.CodeInvalid, "route collision")
	})
	t.Run("digest not installed", func(t *testing.T) {
		_, err := s.Publish(2, func(uint64, string, *store.IndexWriter) (store.Revision, error) {
			return store.Revision{Releases: []string{"h1:ghost"}}, nil
		})
		wantCode(t, err, kernel.CodeNotFound, "h1:ghost")
	})
	t.Run("rollback of a future revision", func(t *testing.T) {
		_, err := s.Publish(2, func(n uint64, _ string, _ *store.IndexWriter) (store.Revision, error) {
			return store.Revision{RollbackOf: n}, nil
		})
		wantCode(t, err, kernel.CodeNotFound, "revision r3 does not exist")
	})
	if n, _ := s.Active(); n != 2 {
		t.Fatalf("failed publishes moved the active pointer to %d", n)
	}

	r3, err := s.Publish(2, func(n uint64, id string, _ *store.IndexWriter) (store.Revision, error) {
		old, err := s.Revision(1)
		if err != nil {
			return store.Revision{}, err
		}
		return store.Revision{RollbackOf: 1, Releases: old.Releases, Binding: old.Binding, Note: "rollback"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if r3.Number != 3 || r3.Parent != 2 || r3.RollbackOf != 1 {
		t.Fatalf("rollback revision = %+v", r3)
	}
	active, err := s.ActiveRevision()
	if err != nil {
		t.Fatal(err)
	}
	if active.ID != "r3" || string(active.Binding) != "binding of r1" || !slices.Equal(active.Releases, []string{a.Digest}) || active.Note != "rollback" {
		t.Errorf("ActiveRevision = %+v", active)
	}
	// Revisions are immutable: r1 still reads as it was published.
	got1, err := s.Revision(1)
	if err != nil || got1.Note != "first" || string(got1.Binding) != "binding of r1" || !got1.CreatedAt.Equal(r1.CreatedAt) {
		t.Errorf("Revision(1) = %+v, %v", got1, err)
	}
	_, err = s.Revision(4)
	wantCode(t, err, kernel.CodeNotFound, "revision r4 does not exist")
}

func TestRevisionsOrder(t *testing.T) {
	s := mustStore(t)
	// Enough revisions that byte order of decimal text would differ (r10 < r2).
	for i := range 12 {
		publish(t, s, strings.Repeat("x", i*100))
	}
	revs, err := s.Revisions()
	if err != nil {
		t.Fatal(err)
	}
	if len(revs) != 12 {
		t.Fatalf("%d revisions, want 12", len(revs))
	}
	for i, r := range revs {
		n := uint64(i + 1)
		if r.Number != n || r.ID != store.RevisionID(n) || r.Parent != n-1 || r.Binding != nil {
			t.Errorf("revision %d = %+v", i, r)
		}
		if i > 0 && r.CreatedAt.Before(revs[i-1].CreatedAt) {
			t.Errorf("revision %s created before its parent", r.ID)
		}
	}
	full, err := s.Revision(11)
	if err != nil || string(full.Binding) != strings.Repeat("x", 1000)+" r11" {
		t.Errorf("Revision(11) binding = %.20q…, %v", full.Binding, err)
	}
}

func TestSecret(t *testing.T) {
	s := mustStore(t)
	first, err := s.Secret()
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 32 || bytes.Equal(first, make([]byte, 32)) {
		t.Fatalf("secret = %x", first)
	}
	again, err := reopen(t, s).Secret()
	if err != nil || !bytes.Equal(again, first) {
		t.Fatalf("second Secret = %x, %v; want %x", again, err, first)
	}
	other, err := newTestStore(t).Secret()
	if err != nil || bytes.Equal(other, first) {
		t.Fatalf("two homes share a secret (%v)", err)
	}
	// Reading the secret later takes only a shared lock: it works while
	// another reader holds the file.
	first[0] ^= 0xff // the caller's copy is its own
	if s3, _ := s.Secret(); s3[0] == first[0] {
		t.Error("Secret returned memory shared with an earlier caller")
	}
}

func TestConcurrentReadersAndOneWriter(t *testing.T) {
	s := mustStore(t)
	mustPut(t, s, rel("a", "1.0.0"))
	const revisions = 25
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	stop := make(chan struct{})
	for r := range 8 {
		wg.Go(func() {
			var last uint64
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				n, err := s.Active()
				if err != nil {
					errs <- fmt.Errorf("reader %d: %w", r, err)
					return
				}
				if n < last {
					errs <- fmt.Errorf("reader %d saw the active revision go back from %d to %d", r, last, n)
					return
				}
				last = n
				if n > 0 && i%5 == 0 {
					rev, err := s.ActiveRevision()
					if err != nil || rev.Number < n || !strings.HasSuffix(string(rev.Binding), " "+rev.ID) {
						errs <- fmt.Errorf("reader %d: ActiveRevision = %+v, %v", r, rev.ID, err)
						return
					}
				}
			}
		})
	}
	var writer sync.WaitGroup
	writer.Go(func() {
		defer close(stop)
		for range revisions {
			active, err := s.Active()
			if err != nil {
				errs <- err
				return
			}
			_, err = s.Publish(active, func(n uint64, id string, _ *store.IndexWriter) (store.Revision, error) {
				return store.Revision{Releases: []string{"h1:a@1.0.0"}, Binding: []byte("b " + id)}, nil
			})
			if err != nil {
				errs <- fmt.Errorf("writer: %w", err)
				return
			}
		}
	})
	writer.Wait()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n, _ := s.Active(); n != revisions {
		t.Errorf("active = %d, want %d", n, revisions)
	}
}

func TestHeldStoreIsUnavailable(t *testing.T) {
	s := fileStore(t)
	publish(t, s, "x")
	release, err := store.HoldForTest(s)
	if err != nil {
		t.Fatal(err)
	}
	s.Timeout = 300 * time.Millisecond
	ops := map[string]func() error{
		"read":  func() error { _, err := s.Active(); return err },
		"write": func() error { _, err := s.PutRelease(rel("a", "1.0.0")); return err },
	}
	for name, op := range ops {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			err := op()
			elapsed := time.Since(start)
			wantCode(t, err, kernel.CodeUnavailable, "the store is busy (another rukh holds it)")
			if kernel.ErrorHint(err) == "" {
				t.Error("no hint")
			}
			// under the default timeout, which a timeout not applied takes
			if elapsed < 200*time.Millisecond || elapsed > store.DefaultTimeout*3/4 {
				t.Errorf("gave up after %v with a 300ms timeout", elapsed)
			}
		})
	}
	release()
	if n, err := s.Active(); err != nil || n != 1 {
		t.Fatalf("after release: Active = %d, %v", n, err)
	}
}

func TestStoreCallInsideUpdateDraftTimesOut(t *testing.T) {
	s := fileStore(t)
	s.Timeout = 200 * time.Millisecond
	done := make(chan error, 1)
	go func() {
		done <- s.UpdateDraft(func(d *store.Draft) error {
			_, err := s.Active() // waits for the transaction it is inside of
			return err
		})
	}()
	select {
	case err := <-done:
		wantCode(t, err, kernel.CodeUnavailable, "busy")
	case <-time.After(5 * time.Second):
		t.Fatal("a store call inside UpdateDraft deadlocked")
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	s := store.New(t.TempDir())
	publish(t, s, "x")
	if err := store.PokeForTest(s, "meta", "schema", []byte("4")); err != nil {
		t.Fatal(err)
	}
	for name, op := range map[string]func() error{
		"read":  func() error { _, err := s.Active(); return err },
		"write": func() error { return s.UpdateDraft(func(*store.Draft) error { return nil }) },
		"check": s.Check,
	} {
		err := op()
		wantCode(t, err, kernel.CodeUnsupported, "schema version 4, newer than this rukh supports (3)")
		if kernel.ErrorHint(err) == "" {
			t.Errorf("%s: no hint", name)
		}
	}
}

func TestDamagedFile(t *testing.T) {
	s := store.New(t.TempDir())
	if err := os.WriteFile(s.Path(), bytes.Repeat([]byte("not bbolt "), 2000), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := s.Active()
	wantCode(t, err, kernel.CodeInternal, "damaged")
}

// TestCheckFindsBrokenInvariants breaks one invariant at a time behind the
// store's back and expects Check to name it.
func TestCheckFindsBrokenInvariants(t *testing.T) {
	r1 := store.RevisionKeyForTest(1)
	tests := []struct {
		name   string
		bucket string
		key    string
		value  func(t *testing.T, s *store.Store) []byte // nil result deletes
		msg    string
	}{
		{"release key mismatch", "releases", "a@9.0.0", func(t *testing.T, s *store.Store) []byte {
			v, _ := store.PeekForTest(s, "releases", "a@1.0.0")
			return v
		}, "release key a@9.0.0 holds a@1.0.0"},
		{"digest index missing", "digests", "h1:a@1.0.0", nil, "digest index for h1:a@1.0.0"},
		{"dangling digest index", "digests", "h1:zzz", func(*testing.T, *store.Store) []byte { return []byte("zzz@1") }, "digest index entry h1:zzz"},
		// a gap itself is legal (prune), a binding left without its revision is not
		{"revision gap", "revisions", r1, nil, "2 bindings for 1 revisions"},
		{"binding changed", "bindings", r1, func(*testing.T, *store.Store) []byte { return []byte("tampered") }, "binding does not match"},
		{"binding lost", "bindings", store.RevisionKeyForTest(2), nil, "revision r2 has no binding"},
		{"active missing", "meta", "active", nil, "no active pointer"},
		{"active not newest", "meta", "active", func(*testing.T, *store.Store) []byte { return []byte(r1) }, "is not the newest revision r2"},
		{"active dangling", "meta", "active", func(*testing.T, *store.Store) []byte { return []byte(store.RevisionKeyForTest(7)) }, "active pointer r7 names no revision"},
		{"active bound release gone", "releases", "b@1.0.0", func(t *testing.T, s *store.Store) []byte {
			if err := store.PokeForTest(s, "digests", "h1:b@1.0.0", nil); err != nil {
				t.Fatal(err)
			}
			return nil
		}, "active revision r2 binds digest h1:b@1.0.0, which has no release"},
		{"short secret", "meta", "secret", func(*testing.T, *store.Store) []byte { return []byte("short") }, "secret has 5 bytes"},
		{"draft activates missing", "meta", "draft", func(*testing.T, *store.Store) []byte { return []byte(`{"active":{"zz":"1.0.0"}}`) }, "draft activates zz@1.0.0"},
		{"bad revision id", "revisions", r1, func(t *testing.T, s *store.Store) []byte {
			v, _ := store.PeekForTest(s, "revisions", r1)
			return bytes.Replace(v, []byte(`"id":"r1"`), []byte(`"id":"r9"`), 1)
		}, `records id "r9"`},
		{"duplicate public key", "keys", "k2", func(t *testing.T, s *store.Store) []byte {
			v, _ := store.PeekForTest(s, "keys", "k1")
			return bytes.Replace(v, []byte(`"name":"k1"`), []byte(`"name":"k2"`), 1)
		}, "hold the same public key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := store.New(t.TempDir())
			mustPut(t, s, rel("a", "1.0.0"), rel("b", "1.0.0"))
			if err := s.PutKey(store.Key{Name: "k1", Public: "rukh-ed25519-pub:K1"}); err != nil {
				t.Fatal(err)
			}
			if err := s.UpdateDraft(func(d *store.Draft) error { d.Active["a"] = "1.0.0"; return nil }); err != nil {
				t.Fatal(err)
			}
			publish(t, s, "one", "h1:a@1.0.0")
			publish(t, s, "two", "h1:b@1.0.0")
			if _, err := s.Secret(); err != nil {
				t.Fatal(err)
			}
			if err := s.Check(); err != nil {
				t.Fatalf("healthy store: %v", err)
			}
			var v []byte
			if tt.value != nil {
				v = tt.value(t, s)
			}
			if err := store.PokeForTest(s, tt.bucket, tt.key, v); err != nil {
				t.Fatal(err)
			}
			wantCode(t, s.Check(), kernel.CodeInternal, tt.msg)
		})
	}
}

func BenchmarkActive(b *testing.B) {
	s := mustStore(b)
	for range 5 {
		publish(b, s, strings.Repeat("b", 4096))
	}
	b.ReportAllocs()
	for b.Loop() {
		if n, err := s.Active(); err != nil || n != 5 {
			b.Fatal(n, err)
		}
	}
}

func TestEmptyBinding(t *testing.T) {
	s := mustStore(t)
	rev, err := s.Publish(0, func(uint64, string, *store.IndexWriter) (store.Revision, error) {
		return store.Revision{Note: "policy only"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.ActiveRevision()
	if err != nil || got.ID != rev.ID || len(got.Binding) != 0 || got.Note != "policy only" {
		t.Fatalf("ActiveRevision = %+v, %v", got, err)
	}
}

func TestReleasesOf(t *testing.T) {
	s := mustStore(t)
	mustPut(t, s, rel("a", "1.10.0"), rel("a", "1.9.0"), rel("ab", "1.0.0"), rel("a.b", "2.0.0"), rel("b", "0.1.0"))
	tests := []struct {
		name string
		want []string
	}{
		{"a", []string{"1.9.0", "1.10.0"}}, // not ab@ or a.b@: the prefix is "a@"
		{"ab", []string{"1.0.0"}},
		{"a.b", []string{"2.0.0"}},
		{"c", nil},
		{"", nil},
	}
	for _, tt := range tests {
		got, err := s.ReleasesOf(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		var versions []string
		for _, r := range got {
			if r.Name != tt.name {
				t.Errorf("ReleasesOf(%q) returned %s@%s", tt.name, r.Name, r.Version)
			}
			versions = append(versions, r.Version)
		}
		if fmt.Sprint(versions) != fmt.Sprint(tt.want) {
			t.Errorf("ReleasesOf(%q) = %v, want %v", tt.name, versions, tt.want)
		}
	}
}

func TestReadBinding(t *testing.T) {
	s := mustStore(t)
	mustPut(t, s, rel("a", "1.0.0"))
	rev := publish(t, s, "payload", "h1:a@1.0.0")
	var got string
	if err := s.ReadBinding(rev.Number, func(b []byte) error { got = string(b); return nil }); err != nil {
		t.Fatal(err)
	}
	if got != "payload "+rev.ID {
		t.Errorf("binding = %q", got)
	}
	if err := s.ReadBinding(rev.Number+1, func([]byte) error { t.Error("fn called"); return nil }); kernel.ErrorCode(err) != kernel.CodeNotFound {
		t.Errorf("missing revision: %v", err)
	}
	boom := errors.New("boom")
	if err := s.ReadBinding(rev.Number, func([]byte) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("fn error = %v", err)
	}
}
