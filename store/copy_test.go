//go:build etcd

package store_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
)

// seedForCopy fills s with one of everything a store keeps.
func seedForCopy(t *testing.T, s *store.Store) (token string) {
	t.Helper()
	mustPut(t, s, rel("acme.notes", "1.0.0"), rel("acme.notes", "1.1.0"), rel("acme.site", "2.0.0"))
	if err := s.PutKey(store.Key{Name: "acme", Public: "rukh-ed25519-pub:x", KeyID: "k1", AddedAt: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	publish(t, s, "first", "h1:acme.notes@1.0.0")
	publishIndexed(t, s, 150, 300) // objects and gens across several etcd batches
	if _, err := s.Secret(); err != nil {
		t.Fatal(err)
	}
	m, err := s.AddAgent("ci", "local")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.MintToken("ci", kernel.CredentialOneTime, time.Hour, "notes.add"); err != nil {
		t.Fatal(err)
	}
	var recs []store.AuditRecord
	for i := range 250 {
		recs = append(recs, store.AuditRecord{Time: time.Now().UTC(), Transport: "http", Agent: "ci", Endpoint: "local", Command: fmt.Sprint("c", i), Outcome: "succeeded"})
	}
	if err := s.AppendAudit(recs...); err != nil {
		t.Fatal(err)
	}
	owner, release, err := s.BecomeTaskOwner()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := s.CreateTask(store.Task{ID: store.NewTaskID(), Endpoint: "local", Agent: "ci", Command: "site.build", Tool: "build", TTLMs: 3_600_000, Owner: owner}, 10); err != nil {
		t.Fatal(err)
	}
	return m.Token
}

// sameContent compares what the record readers of a and b return.
func sameContent(t *testing.T, a, b *store.Store, token string) {
	t.Helper()
	type view struct {
		Releases  []store.Release
		Keys      []store.Key
		Revisions []store.Revision
		Active    uint64
		Secret    []byte
		Agents    []store.Agent
		Audit     []store.AuditRecord
		Tasks     []store.Task
		Cred      kernel.Credential
	}
	read := func(s *store.Store) (v view) {
		var err error
		if v.Releases, err = s.Releases(); err != nil {
			t.Fatal(err)
		}
		if v.Keys, err = s.Keys(); err != nil {
			t.Fatal(err)
		}
		if v.Revisions, err = s.Revisions(); err != nil {
			t.Fatal(err)
		}
		if v.Active, err = s.Active(); err != nil {
			t.Fatal(err)
		}
		if v.Secret, err = s.Secret(); err != nil {
			t.Fatal(err)
		}
		if v.Agents, err = s.Agents(); err != nil {
			t.Fatal(err)
		}
		if v.Audit, _, err = s.Audit(store.AuditQuery{}); err != nil {
			t.Fatal(err)
		}
		if v.Tasks, err = s.Tasks(""); err != nil {
			t.Fatal(err)
		}
		if v.Cred, err = s.Authenticate(token); err != nil {
			t.Fatalf("the token minted before the copy: %v", err)
		}
		return v
	}
	va, vb := read(a), read(b)
	if len(va.Releases) != 3 || va.Active != 2 || len(va.Audit) != 250 || len(va.Tasks) != 1 || len(va.Agents) != 1 {
		t.Fatalf("the source is not what was seeded: %d releases, active r%d, %d audit records, %d tasks, %d agents",
			len(va.Releases), va.Active, len(va.Audit), len(va.Tasks), len(va.Agents))
	}
	if !reflect.DeepEqual(va, vb) {
		t.Fatalf("the copy reads differently:\nsource %+v\ncopy   %+v", va, vb)
	}
	// An indexed revision reads the same through its index.
	for _, s := range []*store.Store{a, b} {
		if err := s.ViewRevision(2, func(ix *store.Index) error { return nil }); err != nil {
			t.Fatalf("ViewRevision(2) on %s: %v", s.Path(), err)
		}
	}
}

// TestCopyRoundTrip copies a bbolt home into the backend under test (a
// second bbolt home, or etcd in the suite's etcd pass) and from there into
// a new bbolt home.
func TestCopyRoundTrip(t *testing.T) {
	dir := t.TempDir()
	src := fileStore(t)
	token := seedForCopy(t, src)

	mid := newTestStore(t)
	rep, err := src.CopyTo(mid)
	if err != nil {
		t.Fatalf("into %s: %v", mid.Path(), err)
	}
	if rep.Keys() < 250+150 || rep.Bytes() == 0 || len(rep.Tasks) == 0 {
		t.Fatalf("report: %d keys, %d bytes, %d task buckets", rep.Keys(), rep.Bytes(), len(rep.Tasks))
	}
	vr, err := src.VerifyCopy(mid)
	if err != nil {
		t.Fatalf("verify the first copy: %v", err)
	}
	if vr.Keys != rep.Keys() || vr.SHA256 == "" {
		t.Fatalf("verified %d keys, copied %d", vr.Keys, rep.Keys())
	}
	if err := mid.Check(); err != nil {
		t.Fatal(err)
	}
	sameContent(t, src, mid, token)

	back := store.New(filepath.Join(dir, "back"))
	if _, err := mid.CopyTo(back); err != nil {
		t.Fatalf("back into bbolt: %v", err)
	}
	vr2, err := mid.VerifyCopy(back)
	if err != nil {
		t.Fatalf("verify the copy back: %v", err)
	}
	if vr2.SHA256 != vr.SHA256 {
		t.Fatalf("the round trip changed the content: %s, then %s", vr.SHA256, vr2.SHA256)
	}
	if err := back.Check(); err != nil {
		t.Fatal(err)
	}
	sameContent(t, src, back, token)
	if _, err := src.VerifyCopy(back); err != nil {
		t.Fatalf("the round trip differs from the original: %v", err)
	}

	// Sequences came along: the next audit record numbers after the copied ones.
	if err := back.AppendAudit(store.AuditRecord{Transport: "http", Endpoint: "local", Command: "after", Outcome: "succeeded"}); err != nil {
		t.Fatal(err)
	}
	recs, _, err := back.Audit(store.AuditQuery{})
	if err != nil || len(recs) != 251 || recs[250].Command != "after" {
		t.Fatalf("audit after the copy: %d records, %v", len(recs), err)
	}
	if _, err := src.VerifyCopy(back); err == nil {
		t.Fatal("verify missed the audit record added to the copy")
	}

	// A difference poked into the copy is found, and named.
	for _, poke := range []struct {
		bucket, key string
		value       []byte
		want        string
	}{
		{"releases", "acme.notes@1.0.0", []byte(`{"name":"acme.notes"}`), `bucket releases: key "acme.notes@1.0.0" has another value in the copy`},
		{"keys", "zzz", []byte(`{}`), `bucket keys: key "zzz" is in the copy, not in the source`},
		{"keys", "acme", nil, `bucket keys: key "acme" is in the source, not in the copy`},
	} {
		t.Run(poke.bucket+"/"+poke.key, func(t *testing.T) {
			old, err := store.PeekForTest(mid, poke.bucket, poke.key)
			if err != nil {
				t.Fatal(err)
			}
			if err := store.PokeForTest(mid, poke.bucket, poke.key, poke.value); err != nil {
				t.Fatal(err)
			}
			_, err = src.VerifyCopy(mid)
			wantCode(t, err, kernel.CodeConflict, poke.want)
			restore := old
			if len(old) == 0 {
				restore = nil
			}
			if err := store.PokeForTest(mid, poke.bucket, poke.key, restore); err != nil {
				t.Fatal(err)
			}
			if _, err := src.VerifyCopy(mid); err != nil {
				t.Fatalf("after undoing the poke: %v", err)
			}
		})
	}

	// A task record changed in the copy is found too.
	tasks, err := mid.Tasks("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mid.RequestTaskCancel(tasks[0].ID); err != nil {
		t.Fatal(err)
	}
	_, err = src.VerifyCopy(mid)
	wantCode(t, err, kernel.CodeConflict, "task records: bucket tasks: key")
}

func TestCopyRefusals(t *testing.T) {
	dir := t.TempDir()
	src := fileStore(t)
	mustPut(t, src, rel("acme.notes", "1.0.0"))

	// Not into a store that holds anything: the backend under test, a home.
	dst := newTestStore(t)
	if err := dst.AppendAudit(store.AuditRecord{Transport: "http", Endpoint: "e", Command: "c", Outcome: "succeeded"}); err != nil {
		t.Fatal(err)
	}
	_, err := src.CopyTo(dst)
	wantCode(t, err, kernel.CodeConflict, "the destination is not empty")
	if h := kernel.ErrorHint(err); h == "" {
		t.Fatal("no hint")
	}
	other := store.New(filepath.Join(dir, "other"))
	mustPut(t, other, rel("x", "1.0.0"))
	_, err = src.CopyTo(other)
	wantCode(t, err, kernel.CodeConflict, "rukh.db")
	n, err := store.CountForTest(other, "releases")
	if err != nil || n != 1 {
		t.Fatalf("the refused copy changed the destination: %d releases, %v", n, err)
	}

	// Not into itself.
	_, err = src.CopyTo(store.New(src.Home()))
	wantCode(t, err, kernel.CodeUsage, "into itself")

	// Nothing to copy.
	_, err = store.New(filepath.Join(dir, "none")).CopyTo(store.New(filepath.Join(dir, "none2")))
	wantCode(t, err, kernel.CodeNotFound, "no store to copy")
}
