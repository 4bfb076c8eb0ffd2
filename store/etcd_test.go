package store_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rukh-dev/rukh/localetcd"
	"github.com/rukh-dev/rukh/store"
)

// The store tests are one suite run against both backends: by default on
// bbolt, and with storeEnv=etcd on an etcd server started in this process.
// TestSuiteOnEtcd runs the suite again that way, so one `go test` covers
// both. Tests of what only a file has (crash recovery, file modes, locks,
// stamps of bbolt pages) build their store with store.New and stay bbolt's.
const storeEnv = "RUKH_TEST_STORE"

func onEtcd() bool { return os.Getenv(storeEnv) == "etcd" }

var (
	etcdOnce sync.Once
	etcdURL  string
	etcdErr  error
	etcdN    atomic.Int64
)

// newTestStore is a store in a fresh home: a bbolt file, or a fresh
// prefix of the test etcd.
func newTestStore(t testing.TB) *store.Store {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	if !onEtcd() {
		return store.New(home)
	}
	return newEtcdStore(t, home)
}

// newEtcdStore is a store in a fresh prefix of the test etcd, started in
// this process on first use, whichever backend the suite runs on.
func newEtcdStore(t testing.TB, home string) *store.Store {
	t.Helper()
	etcdOnce.Do(func() {
		dir, err := os.MkdirTemp("", "rukh-etcd-")
		if err != nil {
			etcdErr = err
			return
		}
		var srv *localetcd.Server
		if srv, etcdErr = localetcd.Start(dir, ""); etcdErr == nil {
			etcdURL = srv.Addr
		}
	})
	if etcdErr != nil {
		t.Fatalf("starting etcd: %v", etcdErr)
	}
	prefix := fmt.Sprintf("t%d-%s", etcdN.Add(1), strings.NewReplacer("/", "-", " ", "-").Replace(t.Name()))
	s, err := store.OpenEtcd("etcd://"+etcdURL+"/"+prefix, home, store.EtcdOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestSuiteOnEtcd runs every test of this package that uses mustStore
// again, on etcd.
func TestSuiteOnEtcd(t *testing.T) {
	if onEtcd() {
		return
	}
	if testing.Short() {
		t.Skip("the etcd pass of the store suite is not run with -short")
	}
	cmd := exec.Command(os.Args[0], "-test.count=1", "-test.run="+os.Getenv("RUKH_TEST_ETCD_RUN"))
	cmd.Env = append(os.Environ(), storeEnv+"=etcd")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the store suite on etcd failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
