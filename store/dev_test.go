package store_test

import (
	"testing"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
)

func devRel(name, digest string) store.Release {
	return store.Release{Name: name, Digest: digest, Manifest: []byte(`{"name":"` + name + `"}`)}
}

func TestPutDevReleaseReplacesInPlace(t *testing.T) {
	s := mustStore(t)
	prev, err := s.PutDevRelease(devRel("acme.notes", "h1:one"))
	if err != nil || prev != nil {
		t.Fatalf("first PutDevRelease = %v, %v; want nil, nil", prev, err)
	}
	r, err := s.Release("acme.notes", store.DevVersion)
	if err != nil || !r.Development || r.Digest != "h1:one" || r.Signer != "" || r.AllowUnsigned {
		t.Fatalf("Release(acme.notes@dev) = %+v, %v", r, err)
	}
	if r.Ref() != "dev:h1:one" || !store.IsDevRef(r.Ref()) {
		t.Fatalf("Ref() = %q", r.Ref())
	}

	// the same digest again changes nothing; another digest replaces it
	if prev, err = s.PutDevRelease(devRel("acme.notes", "h1:one")); err != nil || prev == nil || prev.Digest != "h1:one" {
		t.Fatalf("same digest: %v, %v", prev, err)
	}
	if prev, err = s.PutDevRelease(devRel("acme.notes", "h1:two")); err != nil || prev == nil || prev.Digest != "h1:one" {
		t.Fatalf("replace: %v, %v", prev, err)
	}
	rels, err := s.ReleasesOf("acme.notes")
	if err != nil || len(rels) != 1 || rels[0].Digest != "h1:two" {
		t.Fatalf("ReleasesOf after replace = %+v, %v", rels, err)
	}
	// the old digest left the index (Check in mustStore's cleanup agrees)
	if raw, _ := store.PeekForTest(s, "digests", "dev:h1:one"); len(raw) != 0 {
		t.Fatalf("old dev digest still indexed: %q", raw)
	}
}

func TestDevReleaseAndInstalledReleaseShareContent(t *testing.T) {
	s := mustStore(t)
	mustPut(t, s, store.Release{Name: "acme.notes", Version: "1.0.0", Digest: "h1:same", Manifest: []byte(`{}`)})
	if _, err := s.PutDevRelease(devRel("acme.notes", "h1:same")); err != nil {
		t.Fatalf("dev copy of installed content: %v", err)
	}
	// a revision binding the dev copy keeps it, not the installed release
	publish(t, s, "b", "dev:h1:same")
	if err := s.DeleteRelease("acme.notes", "1.0.0"); err != nil {
		t.Fatalf("uninstall the release the active revision does not bind: %v", err)
	}
	err := s.DeleteRelease("acme.notes", store.DevVersion)
	wantCode(t, err, kernel.CodeConflict, "bound by the active revision")
	publish(t, s, "c")
	if err := s.DeleteRelease("acme.notes", store.DevVersion); err != nil {
		t.Fatal(err)
	}
}

func TestPutReleaseRefusesDevelopment(t *testing.T) {
	s := mustStore(t)
	_, err := s.PutRelease(store.Release{Name: "a", Version: store.DevVersion, Digest: "h1:x"})
	wantCode(t, err, kernel.CodeInvalid, "PutDevRelease")
	_, err = s.PutDevRelease(store.Release{Name: "a", Digest: "h1:x", Signer: "k"})
	wantCode(t, err, kernel.CodeInvalid, "never signed")
}

// A release record written before development releases existed has no
// "development" member and reads as an installed release.
func TestOldReleaseRecordIsNotDevelopment(t *testing.T) {
	s := mustStore(t)
	mustPut(t, s, rel("old", "1.0.0"))
	raw := []byte(`{"name":"old","version":"1.0.0","digest":"h1:old@1.0.0","installedAt":"2025-01-01T00:00:00Z"}`)
	if err := store.PokeForTest(s, "releases", "old@1.0.0", raw); err != nil {
		t.Fatal(err)
	}
	r, err := s.Release("old", "1.0.0")
	if err != nil || r.Development || r.Ref() != "h1:old@1.0.0" {
		t.Fatalf("old record = %+v, %v", r, err)
	}
}

func TestCheckFindsDevVersionMismatch(t *testing.T) {
	s := store.New(t.TempDir())
	if _, err := s.PutDevRelease(devRel("a", "h1:x")); err != nil {
		t.Fatal(err)
	}
	raw := []byte(`{"name":"a","version":"dev","digest":"h1:x","installedAt":"2025-01-01T00:00:00Z"}`)
	if err := store.PokeForTest(s, "releases", "a@dev", raw); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.Check(), kernel.CodeInternal, "development false")
}
