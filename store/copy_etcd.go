//go:build etcd

package store

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// contents counts every key under the prefix: records, holds, task records.
func (e *etcdStore) contents() (found, clear string, err error) {
	ctx, cancel := e.ctx()
	defer cancel()
	r, err := e.cli.Get(ctx, e.prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return "", "", e.unavailable(err)
	}
	if r.Count > 0 {
		found = fmt.Sprintf("%d keys under %s", r.Count, e.prefix)
	}
	return found, "copy into a new prefix (etcd://HOST:PORT/NEWPREFIX), or, if what is there is a copy to redo, delete it with 'etcdctl del --prefix " + e.prefix + "'", nil
}

// overlaps: one prefix inside the other, on the same endpoints.
func (e *etcdStore) overlaps(o backend) bool {
	f, ok := o.(*etcdStore)
	return ok && slices.Equal(e.cli.Endpoints(), f.cli.Endpoints()) &&
		(strings.HasPrefix(e.prefix, f.prefix) || strings.HasPrefix(f.prefix, e.prefix))
}

// SetSequence sets the bucket's sequence, as bbolt's does (a copy keeps it).
func (b *etcdBucket) SetSequence(n uint64) error {
	if !b.t.write {
		return errors.New("read-only transaction")
	}
	b.t.touch(b, true)
	b.seq = n
	return nil
}
