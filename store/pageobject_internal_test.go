package store

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fillNames writes a revision of one endpoint listing a tool per name,
// each body made of its name and tag.
func fillNames(w *IndexWriter, id string, names []string, tag string) error {
	if err := w.PutRevision(id, []byte(`{}`), []byte(`[]`)); err != nil {
		return err
	}
	decl, err := w.PutCommand([]byte("cmd"))
	if err != nil {
		return err
	}
	bodies := make([]string, len(names))
	for i, n := range names {
		if bodies[i], err = w.PutBody([]byte(n + " " + tag + strings.Repeat(".", 300))); err != nil {
			return err
		}
	}
	if err := w.PutEndpoint("local", nil); err != nil {
		return err
	}
	for i, n := range names {
		if err := w.PutTool(n+"__"+id, n, "p@1.0.0", decl, bodies[i], "", 330, true); err != nil {
			return err
		}
	}
	return nil
}

func publishNames(t *testing.T, s *Store, names []string, tag string) {
	t.Helper()
	active, err := s.Active()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Publish(active, func(_ uint64, id string, w *IndexWriter) (Revision, error) {
		return Revision{Note: "test"}, fillNames(w, id, names, tag)
	}); err != nil {
		t.Fatal(err)
	}
}

func toolNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("t%04d", i+1)
	}
	return names
}

// TestPruneDuringPublishKeepsFoundPages: a page object a publish found
// stored, and so does not write, is not swept by a prune that runs before
// the publish ends, though no kept revision names it yet.
func TestPruneDuringPublishKeepsFoundPages(t *testing.T) {
	s := New(filepath.Join(t.TempDir(), "home"))
	defer s.Close()
	names := toolNames(200)
	publishNames(t, s, names, "")                               // r1
	publishNames(t, s, append([]string{"t0000"}, names...), "") // r2: its first page is not r1's
	var pruned Pruned
	var perr error
	afterStoredLookup = func() { pruned, perr = s.PruneRevisions(1) }
	defer func() { afterStoredLookup = nil }()
	publishNames(t, s, names, "") // r3: r1's pages again
	afterStoredLookup = nil
	if perr != nil || !slices.Equal(pruned.Revisions, []string{"r1"}) {
		t.Fatalf("prune during the publish: %+v, %v", pruned, perr)
	}
	if pruned.Swept {
		t.Errorf("the prune swept objects while a publish was pending: %+v", pruned)
	}
	if err := s.Check(); err != nil {
		t.Fatalf("after a prune during a publish: %v", err)
	}
}

// TestUnfinishedPublishStampsLayout: a publish that writes page objects
// and never commits leaves a file stamped with this layout, so an older
// rukh refuses it rather than calling those objects damaged.
func TestUnfinishedPublishStampsLayout(t *testing.T) {
	s := New(filepath.Join(t.TempDir(), "home"))
	defer s.Close()
	publishNames(t, s, toolNames(100), "")
	if err := s.update(func(tx txn) error { return tx.Bucket(bucketMeta).Put(keySchema, []byte("2")) }); err != nil {
		t.Fatal(err)
	}
	count := func() (n int, schema string) {
		if _, err := s.view(func(tx txn) error {
			schema = string(tx.Bucket(bucketMeta).Get(keySchema))
			return tx.Bucket(bucketObjects).ForEach(func(k, _ []byte) error {
				if k[0] == objPage {
					n++
				}
				return nil
			})
		}); err != nil {
			t.Fatal(err)
		}
		return n, schema
	}
	before, _ := count()
	w, err := s.newIndexWriter()
	if err != nil {
		t.Fatal(err)
	}
	if err := fillNames(w, "r2", toolNames(100), "new"); err != nil {
		t.Fatal(err)
	}
	if err := w.finish(); err != nil {
		t.Fatal(err)
	}
	w.discard() // never recorded: refused, or the process ended here
	after, schema := count()
	if after <= before || schema != fmt.Sprint(SchemaVersion) {
		t.Errorf("page objects %d -> %d, schema %q; want more, stamped %d", before, after, schema, SchemaVersion)
	}
}

// TestPageObjectTable: one body of a page object is found through its
// table alone, whatever the bytes of the others; a table that does not
// fit the object is refused, not read out of bounds.
func TestPageObjectTable(t *testing.T) {
	bodies := [][]byte{[]byte("first"), {}, []byte("third body"), bytes.Repeat([]byte("x"), 1000)}
	obj := encodePageObject(bodies)
	garbled := slices.Clone(obj)
	for i := pageObjectHead(len(bodies)); i < len(garbled)-1000; i++ {
		garbled[i] = 0xff // every byte of the first three bodies
	}
	if b, ok := pageBody(garbled, 3); !ok || !bytes.Equal(b, bodies[3]) {
		t.Errorf("slot 3 among garbled bodies: %.20q, %v", b, ok)
	}
	for i, want := range bodies {
		if b, ok := pageBody(obj, i); !ok || !bytes.Equal(b, want) {
			t.Errorf("slot %d: %.20q, %v", i, b, ok)
		}
	}
	if _, ok := pageBody(obj, len(bodies)); ok {
		t.Error("a slot past the last read")
	}
	if sum, ok := pageObjectRef(obj); !ok || sum != pageRef(entriesOf(bodies)) {
		t.Errorf("ref %x, %v", sum, ok)
	}
	damaged := map[string][]byte{
		"empty":         {},
		"count over 32": append([]byte{33}, make([]byte, 4*33)...),
		"table short":   obj[:pageObjectHead(len(bodies))-1],
		"bodies short":  obj[:len(obj)-1],
		"bodies long":   append(slices.Clone(obj), 0),
		"ends go back":  func() []byte { o := slices.Clone(obj); o[1+4*2+3]--; o[1+4*1+3] += 100; return o }(),
	}
	for name, o := range damaged {
		if _, ok := pageObjectRef(o); ok {
			t.Errorf("%s: its ref was computed", name)
		}
		if ok, _ := pageBodies(o, len(bodies), func(int, []byte) error { return nil }); ok {
			t.Errorf("%s: its bodies were read", name)
		}
		for i := range 40 {
			pageBody(o, i) // no panic
		}
	}
}

func entriesOf(bodies [][]byte) []pageEntry {
	out := make([]pageEntry, len(bodies))
	for i, b := range bodies {
		out[i].body = string(objectKey(objBody, b)[1:])
	}
	return out
}
