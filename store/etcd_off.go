//go:build !etcd

package store

import "github.com/rukh-dev/rukh/kernel"

const etcdBuilt = false

// OpenEtcd reports that this binary was built without the etcd backend:
// linking its client would slow every rukh process's start
// (docs/scale-out.md).
func OpenEtcd(spec, home string, o EtcdOptions) (*Store, error) {
	return nil, kernel.Errorf(kernel.CodeUnsupported, "this rukh was built without the etcd store").
		WithHint("build rukh with 'go build -tags etcd' for a shared store (docs/scale-out.md)")
}
