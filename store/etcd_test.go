//go:build etcd

package store_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/localetcd"
	"github.com/rukh-dev/rukh/store"
)

var (
	etcdOnce sync.Once
	etcdURL  string
	etcdErr  error
	etcdN    atomic.Int64
)

// etcdTestStore is a store under a fresh prefix of one etcd server, started
// in this process for all the tests.
func etcdTestStore(t testing.TB, home string) *store.Store {
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

// A write over etcd's request limit is refused as too large, not as an
// unreachable store, and leaves nothing behind.
func TestEtcdRefusesTooLarge(t *testing.T) {
	s := etcdTestStore(t, t.TempDir())
	mustPut(t, s, rel("a", "1.0.0"))
	for _, n := range []int{1600 << 10, 2 << 20} { // over the server's limit; over the client's
		err := store.PokeForTest(s, "keys", "big", make([]byte, n))
		wantCode(t, err, kernel.CodeUnsupported, "refused a write as too large")
	}
	if v, err := store.PeekForTest(s, "keys", "big"); err != nil || len(v) != 0 {
		t.Errorf("after the refusal: %d bytes, %v", len(v), err)
	}
	if err := s.Check(); err != nil {
		t.Error(err)
	}
}

// endLease ends s's process lease, as etcd does once a killed replica
// stops renewing it: every hold of that process is gone at once.
func endLease(t testing.TB, s *store.Store) {
	t.Helper()
	if err := store.EndLeaseForTest(s); err != nil {
		t.Fatal(err)
	}
}
