//go:build etcd

package store

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// On etcd, what several machines must agree on is kept there too: holds
// of revisions and of task owners are keys on this process's lease, so
// they end with the process (its lease expires holdTTL after it stops
// renewing), whichever machine it ran on. Holds of package copies stay
// file locks: each machine has its own copies.

// holdTTL is how long the holds of a process that died without releasing
// them outlive it.
const holdTTL = 10

func (e *etcdStore) holdPrefix(kind, id string) string {
	return e.prefix + "h/" + kind + "/" + id + "/"
}

// processLease is this process's lease, kept alive until the client closes.
func (e *etcdStore) processLease() (clientv3.LeaseID, error) {
	e.leaseOnce.Do(func() {
		ctx, cancel := e.ctx()
		defer cancel()
		g, err := e.cli.Grant(ctx, holdTTL)
		if err != nil {
			e.leaseErr = e.unavailable(err)
			return
		}
		ka, err := e.cli.KeepAlive(context.Background(), g.ID)
		if err != nil {
			e.leaseErr = e.unavailable(err)
			return
		}
		go func() {
			for range ka { // drain: the client renews while someone listens
			}
		}()
		e.lease = g.ID
	})
	return e.lease, e.leaseErr
}

func (e *etcdStore) hold(kind, id string) (func(), error) {
	lease, err := e.processLease()
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	key := e.holdPrefix(kind, id) + fmt.Sprintf("%x-%d-%d", int64(lease), os.Getpid(), time.Now().UnixNano())
	ctx, cancel := e.ctx()
	defer cancel()
	if _, err := e.cli.Put(ctx, key, host+" "+strconv.Itoa(os.Getpid())+" "+commandLine(os.Args), clientv3.WithLease(lease)); err != nil {
		return nil, e.unavailable(err)
	}
	return func() {
		ctx, cancel := e.ctx()
		defer cancel()
		_, _ = e.cli.Delete(ctx, key) // failing, the lease ends it
	}, nil
}

// holders lists who holds kind/id; empty when nobody does.
func (e *etcdStore) holders(kind, id string) ([]Holder, error) {
	ctx, cancel := e.ctx()
	defer cancel()
	r, err := e.cli.Get(ctx, e.holdPrefix(kind, id), clientv3.WithPrefix())
	if err != nil {
		return nil, e.unavailable(err)
	}
	var out []Holder
	for _, kv := range r.Kvs {
		f := strings.SplitN(string(kv.Value), " ", 3)
		h := Holder{}
		if len(f) == 3 {
			h.PID, _ = strconv.Atoi(f[1])
			h.Command = strings.TrimSpace(f[2] + " on " + f[0])
		}
		out = append(out, h)
	}
	return out, nil
}

func (e *etcdStore) tryRemoveHeld(kind, id string, remove func() error) error {
	hs, err := e.holders(kind, id)
	if err != nil {
		return err
	}
	if len(hs) > 0 {
		in := &InUseError{Kind: kind, ID: id, Holders: hs}
		return kernel.Errorf(kernel.CodeConflict, "%s", in.Error()).Wrap(in)
	}
	return remove()
}

// watch signals ch on every change of the active pointer. A watch that
// fails (compaction, a lost connection) signals too, so the caller
// re-reads, and starts again.
func (e *etcdStore) watch(ctx context.Context, ch chan<- struct{}) {
	key := e.key(bucketMeta, keyActive)
	for ctx.Err() == nil {
		wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		// The first response says the watch is in place: a publish between
		// the caller's last read and then is read there, not missed.
		for r := range e.cli.Watch(wctx, key, clientv3.WithCreatedNotify()) {
			signal(ch)
			if r.Err() != nil {
				break
			}
		}
		cancel()
		signal(ch)
		select {
		case <-ctx.Done():
		case <-time.After(retryInterval):
		}
	}
}

// stamp is the newest change to any bucket but the audit log's: caches of
// what was read stay valid while calls append audit records.
func (e *etcdStore) stamp() (Stamp, bool) {
	ctx, cancel := e.ctx()
	defer cancel()
	r, err := e.cli.Get(ctx, e.markers(), clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil || len(r.Kvs) == 0 {
		return Stamp{}, false
	}
	var st Stamp
	for _, kv := range r.Kvs {
		if string(kv.Key) == e.marker(bucketAudit) {
			continue
		}
		st.txid = max(st.txid, uint64(kv.ModRevision))
	}
	return st, true
}
