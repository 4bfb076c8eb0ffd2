//go:build etcd

package store

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The etcd backend keeps a store under one key prefix of an etcd cluster,
// so that several machines share it:
//
//	PREFIX/m/BUCKET       the bucket's marker: its 8-byte sequence
//	PREFIX/b/BUCKET/KEY   one record
//	PREFIX/h/KIND/ID/…    holds, on the process's lease (etcdholds.go)
//
// A transaction reads one snapshot (the etcd revision at which it read
// the markers) and buffers its writes. It commits with one etcd Txn that
// compares, for every bucket it read, that the bucket's marker was not
// rewritten since the snapshot, and rewrites the marker of every bucket it
// wrote: serializable per bucket. A commit that loses a race runs the
// transaction again on a fresh snapshot.
type etcdStore struct {
	cli     *clientv3.Client
	prefix  string // ends in "/"
	url     string
	timeout time.Duration

	tasksOnce sync.Once
	tasks     *Store // the task records, under PREFIX/tasks/

	leaseOnce sync.Once
	lease     clientv3.LeaseID
	leaseErr  error
}

const etcdBuilt = true

// etcdTimeout bounds one etcd request: an unreachable cluster is reported
// quickly, and a server answers 503 instead of hanging.
const etcdTimeout = 2 * time.Second

// etcd's default request limits (--max-txn-ops, --max-request-bytes); a
// batch keeps well inside them.
const (
	etcdMaxOps     = 128
	etcdBatchOps   = 96
	etcdBatchBytes = 1 << 20
	etcdRetries    = 64
)

// parseEtcdURL reads etcd[s]://HOST:PORT[,HOST:PORT…]/PREFIX[?ca=…&cert=…&key=…].
func parseEtcdURL(spec string, o EtcdOptions) (endpoints []string, prefix string, tlsOn bool, _ EtcdOptions, err error) {
	bad := func(why string) error {
		return kernel.Errorf(kernel.CodeInvalid, "invalid store URL %q: %s", spec, why).
			WithHint("write it as etcd://HOST:PORT[,HOST:PORT…]/PREFIX, for example etcd://127.0.0.1:2379/rukh")
	}
	scheme, rest, _ := strings.Cut(spec, "://")
	tlsOn = scheme == "etcds"
	hosts, path, _ := strings.Cut(rest, "/")
	path, query, _ := strings.Cut(path, "?")
	if hosts == "" {
		return nil, "", false, o, bad("no host")
	}
	for _, h := range strings.Split(hosts, ",") {
		if h == "" || strings.ContainsAny(h, " @") {
			return nil, "", false, o, bad(fmt.Sprintf("bad host %q", h))
		}
		endpoints = append(endpoints, h)
	}
	path = strings.Trim(path, "/")
	if path == "" {
		return nil, "", false, o, bad("no key prefix (the part after the hosts, such as /rukh)")
	}
	q, qerr := url.ParseQuery(query)
	if qerr != nil {
		return nil, "", false, o, bad(qerr.Error())
	}
	for k := range q {
		switch k {
		case "ca":
			o.CA = q.Get(k)
		case "cert":
			o.Cert = q.Get(k)
		case "key":
			o.Key = q.Get(k)
		default:
			return nil, "", false, o, bad(fmt.Sprintf("unknown option %q (known: ca, cert, key)", k))
		}
	}
	if o.CA != "" || o.Cert != "" {
		tlsOn = true
	}
	if (o.Cert == "") != (o.Key == "") {
		return nil, "", false, o, bad("a client certificate needs both cert and key")
	}
	return endpoints, path + "/", tlsOn, o, nil
}

// OpenEtcd returns a store kept in etcd under the URL's prefix; home is
// this machine's local directory for package copies, holds and scratch.
func OpenEtcd(spec, home string, o EtcdOptions) (*Store, error) {
	endpoints, prefix, tlsOn, o, err := parseEtcdURL(spec, o)
	if err != nil {
		return nil, err
	}
	cfg := clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: o.DialTimeout,
		Logger:      zap.NewNop(),
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = 5 * time.Second
	}
	if tlsOn {
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		if o.CA != "" {
			pem, err := os.ReadFile(o.CA)
			if err != nil {
				return nil, kernel.Errorf(kernel.CodeInvalid, "cannot read the etcd CA file").Wrap(err)
			}
			tc.RootCAs = x509.NewCertPool()
			if !tc.RootCAs.AppendCertsFromPEM(pem) {
				return nil, kernel.Errorf(kernel.CodeInvalid, "the etcd CA file %s holds no PEM certificate", o.CA)
			}
		}
		if o.Cert != "" {
			c, err := tls.LoadX509KeyPair(o.Cert, o.Key)
			if err != nil {
				return nil, kernel.Errorf(kernel.CodeInvalid, "cannot load the etcd client certificate").Wrap(err)
			}
			tc.Certificates = []tls.Certificate{c}
		}
		cfg.TLS = tc
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, kernel.Errorf(kernel.CodeUnavailable, "%s", "cannot reach the etcd store "+redactURL(spec)).Wrap(err).
			WithHint("check that etcd runs at that address and that the URL and TLS options are right")
	}
	s := New(home)
	s.path = redactURL(spec)
	s.be = &etcdStore{cli: cli, prefix: prefix, url: s.path, timeout: etcdTimeout}
	return s, nil
}

// redactURL drops the query (file paths of keys) from messages.
func redactURL(spec string) string {
	u, _, _ := strings.Cut(spec, "?")
	return u
}

func (e *etcdStore) where() string                 { return e.url }
func (e *etcdStore) batch() (ops, bytes int)       { return etcdBatchOps, etcdBatchBytes }
func (e *etcdStore) close() error                  { return e.cli.Close() }
func (e *etcdStore) markers() string               { return e.prefix + "m/" }
func (e *etcdStore) marker(b []byte) string        { return e.prefix + "m/" + string(b) }
func (e *etcdStore) records(b []byte) string       { return e.prefix + "b/" + string(b) + "/" }
func (e *etcdStore) key(b []byte, k []byte) string { return e.records(b) + string(k) }

func (e *etcdStore) taskStore(s *Store) *Store {
	e.tasksOnce.Do(func() {
		e.tasks = &Store{home: s.home, path: e.url + "/tasks", Timeout: s.Timeout, be: e.sub("tasks")}
	})
	return e.tasks
}

// sub is the store under a further prefix (the task records).
func (e *etcdStore) sub(name string) *etcdStore {
	return &etcdStore{cli: e.cli, prefix: e.prefix + name + "/", url: e.url + "/" + name, timeout: e.timeout}
}

func (e *etcdStore) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), e.timeout)
}

// unavailable is the error for an etcd that did not answer.
func (e *etcdStore) unavailable(err error) error {
	tooLarge := status.Code(err) == codes.ResourceExhausted // the client's own bound on a message
	switch rpctypes.Error(err) {
	case rpctypes.ErrRequestTooLarge, rpctypes.ErrTooManyOps:
		tooLarge = true
	}
	if tooLarge {
		return kernel.Errorf(kernel.CodeUnsupported, "the etcd cluster refused a write as too large").AtPath(e.url).Wrap(err).
			WithHint("raise etcd's --max-request-bytes / --max-txn-ops, or keep packages and revisions smaller")
	}
	if errors.Is(err, rpctypes.ErrCompacted) || errors.Is(err, rpctypes.ErrFutureRev) {
		return kernel.Errorf(kernel.CodeUnavailable, "the etcd store moved on during a read; run the command again").
			AtPath(e.url).
			Wrap(err)
	}
	return kernel.Errorf(kernel.CodeUnavailable, "the etcd store is unavailable").AtPath(e.url).Wrap(err).
		WithHint("check that the etcd cluster is up and reachable from this machine, then retry")
}

func (e *etcdStore) exists() (bool, error) {
	ctx, cancel := e.ctx()
	defer cancel()
	r, err := e.cli.Get(ctx, e.marker(bucketMeta), clientv3.WithCountOnly())
	if err != nil {
		return false, e.unavailable(err)
	}
	return r.Count > 0, nil
}

// begin reads every bucket marker: the snapshot revision and the buckets.
func (e *etcdStore) begin(ctx context.Context, write bool) (*etcdTx, error) {
	rctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	r, err := e.cli.Get(rctx, e.markers(), clientv3.WithPrefix())
	if err != nil {
		return nil, e.unavailable(err)
	}
	t := &etcdTx{e: e, ctx: ctx, rev: r.Header.Revision, write: write,
		buckets: map[string]*etcdBucket{}}
	for _, kv := range r.Kvs {
		name := strings.TrimPrefix(string(kv.Key), e.markers())
		seq, _ := btoi(kv.Value)
		t.buckets[name] = &etcdBucket{t: t, name: []byte(name), seq: seq, exists: true}
	}
	return t, nil
}

func (e *etcdStore) view(fn func(tx txn) error) (bool, error) {
	t, err := e.begin(context.Background(), false)
	if err != nil {
		return false, err
	}
	if b := t.buckets[string(bucketMeta)]; b == nil {
		return false, nil
	}
	err = fn(t)
	if t.err != nil { // a failed read: fn's own error may be its consequence
		return true, t.err
	}
	return true, err
}

func (e *etcdStore) update(fn func(tx txn) error) error {
	for attempt := 0; ; attempt++ {
		ctx, cancel := context.WithCancel(context.Background())
		t, err := e.begin(ctx, true)
		if err == nil {
			err = fn(t)
			if t.err != nil {
				err = t.err
			}
			if err == nil {
				var ok bool
				ok, err = t.commit()
				if err == nil && !ok {
					cancel()
					if attempt == etcdRetries {
						return kernel.Errorf(kernel.CodeUnavailable, "the etcd store is too busy: a write lost the race to other writers too often").
							AtPath(e.url)
					}
					time.Sleep(time.Duration(rand.IntN(1+min(attempt, 10)*2)) * time.Millisecond)
					continue
				}
			}
		}
		cancel()
		return err
	}
}

type etcdWrite struct {
	v   []byte
	del bool
}

// etcdTx is one transaction: a snapshot, reads cached, writes buffered.
type etcdTx struct {
	e     *etcdStore
	ctx   context.Context
	rev   int64
	write bool
	err   error // the first failed read; the transaction fails with it

	buckets map[string]*etcdBucket
	read    map[string]bool      // buckets read
	wrote   map[string]bool      // buckets written
	writes  map[string]etcdWrite // full key → buffered write
	cache   map[string][]byte    // full key → value at rev (nil: absent)
}

func (t *etcdTx) fail(err error) {
	if t.err == nil {
		t.err = t.e.unavailable(err)
	}
}

func (t *etcdTx) Bucket(name []byte) bucket {
	if b := t.buckets[string(name)]; b != nil && b.exists {
		return b
	}
	return nil
}

func (t *etcdTx) CreateBucketIfNotExists(name []byte) (bucket, error) {
	if b := t.buckets[string(name)]; b != nil && b.exists {
		return b, nil
	}
	if !t.write {
		return nil, errors.New("read-only transaction")
	}
	b := &etcdBucket{t: t, name: append([]byte(nil), name...), exists: true}
	t.buckets[string(name)] = b
	t.touch(b, true) // a concurrent creation must conflict
	return b, nil
}

func (t *etcdTx) ForEach(fn func(name []byte, b bucket) error) error {
	names := make([]string, 0, len(t.buckets))
	for n, b := range t.buckets {
		if b.exists {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		if err := fn([]byte(n), t.buckets[n]); err != nil {
			return err
		}
	}
	return nil
}

func (t *etcdTx) touch(b *etcdBucket, write bool) {
	if t.read == nil {
		t.read, t.wrote, t.writes, t.cache = map[string]bool{}, map[string]bool{}, map[string]etcdWrite{}, map[string][]byte{}
	}
	t.read[string(b.name)] = true
	if write {
		t.wrote[string(b.name)] = true
	}
}

func (t *etcdTx) get(key string) []byte {
	if w, ok := t.writes[key]; ok {
		if w.del {
			return nil
		}
		return w.v
	}
	if v, ok := t.cache[key]; ok {
		return v
	}
	if t.err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(t.ctx, t.e.timeout)
	defer cancel()
	r, err := t.e.cli.Get(ctx, key, clientv3.WithRev(t.rev))
	if err != nil {
		t.fail(err)
		return nil
	}
	var v []byte
	if len(r.Kvs) > 0 {
		v = r.Kvs[0].Value
	}
	t.cache[key] = v
	return v
}

// commit writes the buffered writes if no bucket read changed since the
// snapshot; false means it lost a race.
func (t *etcdTx) commit() (bool, error) {
	if len(t.wrote) == 0 {
		return true, nil
	}
	var cmps []clientv3.Cmp
	for name := range t.read {
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(t.e.marker([]byte(name))), "<", t.rev+1))
	}
	ops := make([]clientv3.Op, 0, len(t.writes)+len(t.wrote))
	for k, w := range t.writes {
		if w.del {
			ops = append(ops, clientv3.OpDelete(k))
		} else {
			ops = append(ops, clientv3.OpPut(k, string(w.v)))
		}
	}
	for name := range t.wrote {
		ops = append(ops, clientv3.OpPut(t.e.marker([]byte(name)), string(itob(t.buckets[name].seq))))
	}
	if len(ops) > etcdMaxOps || len(cmps) > etcdMaxOps {
		return false, kernel.Errorf(kernel.CodeUnsupported, "one change needs %d etcd operations, over etcd's default limit of %d", len(ops), etcdMaxOps).
			AtPath(t.e.url).
			WithHint("raise etcd's --max-txn-ops, or do the change in smaller steps")
	}
	ctx, cancel := context.WithTimeout(t.ctx, t.e.timeout)
	defer cancel()
	r, err := t.e.cli.Txn(ctx).If(cmps...).Then(ops...).Commit()
	if err != nil {
		return false, t.e.unavailable(err)
	}
	return r.Succeeded, nil
}

// etcdBucket is a bucket seen through one transaction.
type etcdBucket struct {
	t      *etcdTx
	name   []byte
	seq    uint64
	exists bool
}

func (b *etcdBucket) Get(k []byte) []byte {
	b.t.touch(b, false)
	return b.t.get(b.t.e.key(b.name, k))
}

// present says which keys the bucket holds, many per request and keys
// only: a page object can be a MiB, and its presence is all a publish
// asks. The answers are not cached as values.
func (b *etcdBucket) present(keys [][]byte) []bool {
	b.t.touch(b, false)
	out := make([]bool, len(keys))
	var batch []string
	var at []int
	flush := func() {
		b.t.getMany(batch, true, func(i int, _ []byte, ok bool) { out[at[i]] = ok })
		batch, at = batch[:0], at[:0]
	}
	for i, k := range keys {
		key := b.t.e.key(b.name, k)
		if w, ok := b.t.writes[key]; ok {
			out[i] = !w.del
			continue
		}
		if v, ok := b.t.cache[key]; ok {
			out[i] = v != nil
			continue
		}
		if batch, at = append(batch, key), append(at, i); len(batch) == etcdMaxOps {
			flush()
		}
	}
	flush()
	return out
}

// prefetch reads keys into the transaction's cache, many per request.
func (b *etcdBucket) prefetch(keys [][]byte) {
	b.t.touch(b, false)
	var batch []string
	flush := func() {
		b.t.getMany(batch, false, func(i int, v []byte, _ bool) { b.t.cache[batch[i]] = v })
		batch = batch[:0]
	}
	for _, k := range keys {
		key := b.t.e.key(b.name, k)
		if _, ok := b.t.writes[key]; ok {
			continue
		}
		if _, ok := b.t.cache[key]; ok {
			continue
		}
		if batch = append(batch, key); len(batch) == etcdMaxOps {
			flush()
		}
	}
	flush()
}

// getMany reads keys (at most etcdMaxOps) at the transaction's revision
// in one request and calls got with each one's index, its value (none
// with keysOnly) and whether it is there. A failed request fails the
// transaction and calls got for none.
func (t *etcdTx) getMany(keys []string, keysOnly bool, got func(i int, v []byte, ok bool)) {
	if len(keys) == 0 || t.err != nil {
		return
	}
	opts := []clientv3.OpOption{clientv3.WithRev(t.rev)}
	if keysOnly {
		opts = append(opts, clientv3.WithKeysOnly())
	}
	ops := make([]clientv3.Op, len(keys))
	for i, k := range keys {
		ops[i] = clientv3.OpGet(k, opts...)
	}
	ctx, cancel := context.WithTimeout(t.ctx, t.e.timeout)
	defer cancel()
	r, err := t.e.cli.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		t.fail(err)
		return
	}
	for i, resp := range r.Responses {
		if rr := resp.GetResponseRange(); rr != nil && len(rr.Kvs) > 0 {
			got(i, rr.Kvs[0].Value, true)
		} else {
			got(i, nil, false)
		}
	}
}

func (b *etcdBucket) Put(k, v []byte) error {
	if !b.t.write {
		return errors.New("read-only transaction")
	}
	if len(k) == 0 {
		return errors.New("key required")
	}
	b.t.touch(b, true)
	b.t.writes[b.t.e.key(b.name, k)] = etcdWrite{v: append([]byte(nil), v...)}
	return nil
}

func (b *etcdBucket) Delete(k []byte) error {
	if !b.t.write {
		return errors.New("read-only transaction")
	}
	b.t.touch(b, true)
	b.t.writes[b.t.e.key(b.name, k)] = etcdWrite{del: true}
	return nil
}

func (b *etcdBucket) NextSequence() (uint64, error) {
	if !b.t.write {
		return 0, errors.New("read-only transaction")
	}
	b.t.touch(b, true)
	b.seq++
	return b.seq, nil
}

func (b *etcdBucket) Sequence() uint64 {
	b.t.touch(b, false)
	return b.seq
}

func (b *etcdBucket) Appending() {}

func (b *etcdBucket) Cursor() cursor {
	b.t.touch(b, false)
	return &etcdCursor{b: b}
}

func (b *etcdBucket) ForEach(fn func(k, v []byte) error) error {
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return b.t.err
}

func (b *etcdBucket) Stats() bucketStats {
	var st bucketStats
	_ = b.ForEach(func(k, v []byte) error {
		st.KeyN++
		st.Bytes += len(k) + len(v)
		return nil
	})
	return st
}

// pending lists the bucket's buffered writes in key order (bucket-relative keys).
func (b *etcdBucket) pending() []string {
	pre := b.t.e.records(b.name)
	var ks []string
	for k := range b.t.writes {
		if strings.HasPrefix(k, pre) {
			ks = append(ks, k[len(pre):])
		}
	}
	sort.Strings(ks)
	return ks
}

// etcdCursor merges the snapshot, read a page at a time, with the
// transaction's buffered writes.
type etcdCursor struct {
	b   *etcdBucket
	key []byte // where the cursor is; nil: nowhere
	val []byte

	// The last page of snapshot entries: ascending from lo (inclusive), or
	// descending from hi (exclusive, "" for the end). more: the page stops
	// before the bucket does.
	page []kvPair
	desc bool
	lo   string
	hi   string
	more bool
}

type kvPair struct{ k, v []byte }

const etcdPage = 256

// above is whether a sorts after b, with "" as the end of the bucket.
func above(a, b string) bool { return b != "" && (a == "" || a > b) }

// snapAsc returns the first snapshot entry at or after lo.
func (c *etcdCursor) snapAsc(lo string) (kvPair, bool) {
	for {
		if c.page != nil && !c.desc && lo >= c.lo {
			for _, p := range c.page {
				if string(p.k) >= lo {
					return p, true
				}
			}
			if !c.more {
				return kvPair{}, false
			}
			lo = max(lo, string(c.page[len(c.page)-1].k)+"\x00")
		}
		if !c.fetch(lo, false) {
			return kvPair{}, false
		}
	}
}

// snapDesc returns the last snapshot entry before hi ("" for the end).
func (c *etcdCursor) snapDesc(hi string) (kvPair, bool) {
	for {
		if c.page != nil && c.desc && !above(hi, c.hi) {
			for _, p := range c.page {
				if hi == "" || string(p.k) < hi {
					return p, true
				}
			}
			if !c.more {
				return kvPair{}, false
			}
			hi = string(c.page[len(c.page)-1].k)
		}
		if !c.fetch(hi, true) {
			return kvPair{}, false
		}
	}
}

// fetch reads one page from bound; false when nothing is there.
func (c *etcdCursor) fetch(bound string, desc bool) bool {
	t := c.b.t
	if t.err != nil {
		return false
	}
	pre := t.e.records(c.b.name)
	end := clientv3.GetPrefixRangeEnd(pre)
	ctx, cancel := context.WithTimeout(t.ctx, t.e.timeout)
	defer cancel()
	var r *clientv3.GetResponse
	var err error
	if !desc {
		r, err = t.e.cli.Get(ctx, pre+bound, clientv3.WithRange(end), clientv3.WithRev(t.rev), clientv3.WithLimit(etcdPage))
	} else {
		if bound != "" {
			end = pre + bound
		}
		r, err = t.e.cli.Get(ctx, pre, clientv3.WithRange(end), clientv3.WithRev(t.rev),
			clientv3.WithLimit(etcdPage), clientv3.WithSort(clientv3.SortByKey, clientv3.SortDescend))
	}
	if err != nil {
		t.fail(err)
		return false
	}
	c.page, c.desc, c.more = c.page[:0], desc, r.More
	if desc {
		c.hi = bound
	} else {
		c.lo = bound
	}
	for _, kv := range r.Kvs {
		c.page = append(c.page, kvPair{kv.Key[len(pre):], kv.Value})
	}
	if len(c.page) == 0 {
		c.page = nil
		return false
	}
	return true
}

// move places the cursor on the first visible key after (or before) from.
func (c *etcdCursor) move(from string, inclusive, desc bool) ([]byte, []byte) {
	t := c.b.t
	pend := c.b.pending()
	// The nearest buffered put in the direction of travel.
	var bufKey string
	bufOK := false
	if !desc {
		i := sort.SearchStrings(pend, from)
		for ; i < len(pend); i++ {
			if pend[i] == from && !inclusive {
				continue
			}
			if !t.writes[t.e.key(c.b.name, []byte(pend[i]))].del {
				bufKey, bufOK = pend[i], true
				break
			}
		}
	} else {
		i := sort.SearchStrings(pend, from) - 1
		if from == "" {
			i = len(pend) - 1
		}
		for ; i >= 0; i-- {
			if !t.writes[t.e.key(c.b.name, []byte(pend[i]))].del {
				bufKey, bufOK = pend[i], true
				break
			}
		}
	}
	// The nearest snapshot key not deleted or overwritten by the buffer.
	var snapKey string
	var snapVal []byte
	snapOK := false
	lo, hi := from, from
	if !inclusive {
		lo = from + "\x00"
	}
	for {
		var p kvPair
		var ok bool
		if desc {
			p, ok = c.snapDesc(hi)
		} else {
			p, ok = c.snapAsc(lo)
		}
		if !ok {
			break
		}
		k := string(p.k)
		if _, buffered := t.writes[t.e.key(c.b.name, p.k)]; !buffered {
			snapKey, snapVal, snapOK = k, p.v, true
			break
		}
		lo, hi = k+"\x00", k
	}
	var k string
	var v []byte
	switch {
	case bufOK && (!snapOK || (!desc && bufKey < snapKey) || (desc && bufKey > snapKey)):
		k, v = bufKey, t.writes[t.e.key(c.b.name, []byte(bufKey))].v
	case snapOK:
		k, v = snapKey, snapVal
	default:
		c.key, c.val = nil, nil
		return nil, nil
	}
	c.key, c.val = []byte(k), v
	return c.key, v
}

func (c *etcdCursor) First() ([]byte, []byte) { return c.move("", true, false) }
func (c *etcdCursor) Last() ([]byte, []byte)  { return c.move("", false, true) }
func (c *etcdCursor) Seek(k []byte) ([]byte, []byte) {
	return c.move(string(k), true, false)
}

func (c *etcdCursor) Next() ([]byte, []byte) {
	if c.key == nil {
		return nil, nil
	}
	return c.move(string(c.key), false, false)
}

func (c *etcdCursor) Prev() ([]byte, []byte) {
	if c.key == nil {
		return nil, nil
	}
	if len(c.key) == 0 {
		c.key, c.val = nil, nil
		return nil, nil
	}
	return c.move(string(c.key), false, true)
}

func (c *etcdCursor) Delete() error {
	if c.key == nil {
		return errors.New("cursor is not on a key")
	}
	return c.b.Delete(c.key)
}
