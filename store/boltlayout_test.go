package store

import (
	"os"
	"testing"

	"golang.org/x/mod/modfile"
)

// TestBoltVersionChecked fails when go.mod names another bbolt than the
// version the store's own reader of bbolt pages was last checked against.
// go.mod is read because a test binary records no module versions.
func TestBoltVersionChecked(t *testing.T) {
	data, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.ParseLax("go.mod", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	version := ""
	for _, r := range f.Require {
		if r.Mod.Path == "go.etcd.io/bbolt" {
			version = r.Mod.Version
		}
	}
	for _, r := range f.Replace {
		if r.Old.Path == "go.etcd.io/bbolt" {
			version = r.New.Version // empty for a directory, which is never checked
		}
	}
	if version != checkedBoltVersion {
		t.Fatalf("go.mod names bbolt %q; the store's reader of bbolt pages was checked against %s. Check it against the new bbolt, then set checkedBoltVersion (store/boltlayout.go):\n"+
			"- the meta page layout (offsets, magic, version, checksum): TestStampChangesWithEveryCommit, TestDamagedStoreFile, TestStoreFileLengthCheck;\n"+
			"- the page header and the branch, leaf, bucket and freelist pages: TestSnapshotReadsSeeWhatBboltSees, TestSnapshotKeepsLargeValues, TestCheckFindsDamagedPages;\n"+
			"- the page-reuse order snapshot reads rest on (a committed transaction's pages are rewritten no earlier than two transactions later; store/snapshot.go): "+
			"read bbolt's freelist and commit code, and run TestSnapshotReadsSeeWhatBboltSees and TestSnapshotReadsFallBackAfterACommit",
			version, checkedBoltVersion)
	}
}
