//go:build !etcd

package store_test

import (
	"testing"

	"github.com/rukh-dev/rukh/store"
)

func etcdTestStore(t testing.TB, home string) *store.Store {
	t.Fatalf("%s=etcd needs a test binary built with -tags etcd", storeEnv)
	return nil
}

func endLease(t testing.TB, s *store.Store) {
	t.Fatalf("%s=etcd needs a test binary built with -tags etcd", storeEnv)
}
