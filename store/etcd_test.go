package store_test

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rukh-dev/rukh/store"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
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

// freePort returns a loopback address nobody listens on.
func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// startEtcd runs one single-node etcd for the whole test process.
func startEtcd(dir string) (string, error) {
	client, err := freePort()
	if err != nil {
		return "", err
	}
	peer, err := freePort()
	if err != nil {
		return "", err
	}
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cu, _ := url.Parse("http://" + client)
	pu, _ := url.Parse("http://" + peer)
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = cfg.Name + "=" + pu.String()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return "", err
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(20 * time.Second):
		e.Close()
		return "", fmt.Errorf("etcd did not become ready")
	}
	return client, nil
}

// newTestStore is a store in a fresh home: a bbolt file, or a fresh
// prefix of the test etcd.
func newTestStore(t testing.TB) *store.Store {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	if !onEtcd() {
		return store.New(home)
	}
	etcdOnce.Do(func() {
		dir, err := os.MkdirTemp("", "rukh-etcd-")
		if err != nil {
			etcdErr = err
			return
		}
		etcdURL, etcdErr = startEtcd(dir)
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
