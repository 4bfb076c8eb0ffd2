package store_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rukh-dev/rukh/store"
)

// The store tests are one suite run against both backends: by default on
// bbolt, and with storeEnv=etcd on an etcd server started in this process.
// TestSuiteOnEtcd runs the suite again that way, so one `go test` covers
// both. Tests of what only a file has (crash recovery, file modes, locks,
// stamps of bbolt pages) build their store with store.New and stay bbolt's.
const storeEnv = "RUKH_TEST_STORE"

func onEtcd() bool { return os.Getenv(storeEnv) == "etcd" }

// newTestStore is a store in a fresh home: a bbolt file, or a fresh
// prefix of the test etcd.
func newTestStore(t testing.TB) *store.Store {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	if onEtcd() {
		return etcdTestStore(t, home)
	}
	return store.New(home)
}

// otherHandle is a second handle on s's store, as another process has
// (on etcd: another replica, with its own client and lease).
func otherHandle(t testing.TB, s *store.Store) *store.Store {
	t.Helper()
	if !onEtcd() {
		return store.New(s.Home())
	}
	o, err := store.OpenEtcd(s.Path(), filepath.Join(t.TempDir(), "other"), store.EtcdOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}
