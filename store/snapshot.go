package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"sync"
)

// Snapshot reads: a long-lived server's views read the bbolt file with
// pread, without bbolt's open (file lock, mmap of the whole file, munmap).
// A page of tools/list touches some 40 B+tree pages scattered over the
// file; through a fresh mapping each costs a fault that maps its 15
// neighbours too, and the unmap undoes it all: most of a request, and
// resident memory that grows with the file. pread copies exactly the pages
// a lookup needs.
//
// No lock is taken, so a writer may commit meanwhile; the read is checked
// instead, seqlock-style. bbolt writes a transaction copy-on-write into
// pages free in the state it starts from, and only then its meta page: the
// pages of committed transaction N are rewritten no earlier than by
// transaction N+2, which starts after N+1 is committed. So a view that
// finds N in the meta pages before and after it read a consistent state.
// When the meta moved, or anything read looks wrong (a page the state
// cannot hold), the view runs again through bbolt with its lock. Callers'
// views may therefore run twice; they set their results afresh each time,
// as updates already must.

// SnapshotReads makes this handle's views on a bbolt file read it with
// pread, checked against concurrent commits, instead of opening it (see
// above). For processes that serve many small reads; writes are unchanged.
func (s *Store) SnapshotReads() { s.snapshot.Store(true) }

// errSnapshot marks a snapshot read that cannot be trusted (or an
// operation it does not offer): the view is run again through bbolt.
var errSnapshot = errors.New("snapshot read is not usable")

// snapPages keeps pages between views of one committed state: the branch
// pages every lookup descends through, and leaves with a value over a page
// (a revision's header, an endpoint's meta), which every request's view
// reads. Bounded; emptied when the state changes.
type snapPages struct {
	mu    sync.Mutex
	txid  uint64
	pages map[uint64][]byte
	bytes int
}

const snapPagesBytes = 1 << 20

// readMeta reads bbolt's two meta pages and returns the newest valid one.
func readMeta(f *os.File) (snapMeta, bool) {
	var buf [metaEnd]byte
	m0, ok0 := parseMeta(f, 0, buf[:])
	if !ok0 {
		return snapMeta{}, false
	}
	m1, ok1 := parseMeta(f, int64(m0.pageSize), buf[:])
	switch {
	case ok1 && m1.txid > m0.txid:
		return m1, m1.pageSize == m0.pageSize
	default:
		return m0, true
	}
}

// parseMeta reads and decodes the meta page at off: a meta page whose page
// size bbolt could not have written is not valid either.
func parseMeta(f *os.File, off int64, buf []byte) (snapMeta, bool) {
	if n, err := f.ReadAt(buf, off); n != len(buf) || (err != nil && n != len(buf)) {
		return snapMeta{}, false
	}
	m, ok := decodeMeta(buf)
	return m, ok && m.pageSize >= 1024 && m.pageSize <= 1<<16
}

// snapshotView runs fn on a pread snapshot. ok false: nothing usable was
// read (no file, a commit meanwhile, a page that looked wrong), and fn's
// effects are to be discarded.
func (b boltFile) snapshotView(fn func(tx txn) error) (ok bool, err error) {
	s := b.s
	f, oerr := os.Open(s.path)
	if oerr != nil {
		return false, nil
	}
	defer f.Close()
	m, good := readMeta(f)
	if !good {
		return false, nil
	}
	// A file cut short is bbolt's to report (the damaged-store error).
	if fi, err := f.Stat(); err != nil || fi.Size() < int64(m.hwm)*int64(m.pageSize) {
		return false, nil
	}
	tx := &snapTx{f: f, m: m, cache: &s.snapPages}
	defer tx.release()
	defer func() {
		if r := recover(); r != nil {
			if tx.bad || !tx.still() {
				ok, err = false, nil
				return
			}
			panic(r)
		}
	}()
	err = fn(tx)
	if tx.bad || !tx.still() {
		return false, nil
	}
	return true, err
}

type snapTx struct {
	f     *os.File
	m     snapMeta
	cache *snapPages
	bad   bool
	// badPage is the first page that looked wrong (verifyPages names it).
	badPage uint64
	bufs    [][]byte // leaf pages read, reused once the view ends
	// once: the values read now are read once (a list page's bodies), so
	// their overflow pages are not kept, and are read into onceBuf: such a
	// value is valid only until the next one is read.
	once    bool
	onceBuf []byte
}

func (t *snapTx) transient(on bool) { t.once = on }

// leafBufs recycles the page-sized buffers of leaf pages: what a view
// returns is valid only until it ends, as with bbolt.
var leafBufs sync.Pool

func (t *snapTx) buf(n int) []byte {
	if n == t.m.pageSize {
		if b, ok := leafBufs.Get().(*[]byte); ok && len(*b) == n {
			t.bufs = append(t.bufs, *b)
			return *b
		}
		b := make([]byte, n)
		t.bufs = append(t.bufs, b)
		return b
	}
	return make([]byte, n)
}

func (t *snapTx) release() {
	for _, b := range t.bufs {
		leafBufs.Put(&b)
	}
	t.bufs = nil
	if b := t.onceBuf; b != nil {
		onceBufs.Put(&b)
		t.onceBuf = nil
	}
}

// onceBufs recycles the buffers of values read once: a walk reads one
// per page, each in its own view.
var onceBufs sync.Pool

// overflow is a buffer of n bytes for a page and its overflow.
func (t *snapTx) overflow(n uint64) []byte {
	if !t.once {
		return make([]byte, n)
	}
	if t.onceBuf == nil {
		if b, ok := onceBufs.Get().(*[]byte); ok {
			t.onceBuf = *b
		}
	}
	if uint64(cap(t.onceBuf)) < n {
		t.onceBuf = make([]byte, n)
	}
	return t.onceBuf[:n]
}

// still reports whether the state read is still the newest committed one.
func (t *snapTx) still() bool {
	m, ok := readMeta(t.f)
	return ok && m.txid == t.m.txid
}

func (t *snapTx) fail() { t.bad = true }

func (t *snapTx) failAt(id uint64) {
	if !t.bad {
		t.badPage = id
	}
	t.fail()
}

// page reads page id with its overflow pages; nil (and the view marked
// bad) when it cannot be a page of this state.
func (t *snapTx) page(id uint64) []byte {
	if t.bad {
		return nil
	}
	if id < 2 || id >= t.m.hwm {
		t.failAt(id)
		return nil
	}
	c := t.cache
	c.mu.Lock()
	if c.txid != t.m.txid {
		c.txid, c.pages, c.bytes = t.m.txid, nil, 0
	}
	p, hit := c.pages[id]
	c.mu.Unlock()
	if hit {
		return p
	}
	ps := t.m.pageSize
	p = t.buf(ps)
	if n, _ := t.f.ReadAt(p, int64(id)*int64(ps)); n != ps {
		t.failAt(id)
		return nil
	}
	ne := binary.NativeEndian
	if ne.Uint64(p) != id {
		t.failAt(id)
		return nil
	}
	if over := uint64(ne.Uint32(p[12:])); over > 0 {
		if id+over >= t.m.hwm {
			t.failAt(id)
			return nil
		}
		// A branch page is kept for other views: never in the buffer of
		// values read once, which the next one overwrites.
		var full []byte
		if ne.Uint16(p[8:]) == pageBranch {
			full = make([]byte, (over+1)*uint64(ps))
		} else {
			full = t.overflow((over + 1) * uint64(ps))
		}
		copy(full, p)
		if n, _ := t.f.ReadAt(full[ps:], int64(id+1)*int64(ps)); n != len(full)-ps {
			t.failAt(id)
			return nil
		}
		p = full
	}
	if !t.checkPage(p) {
		t.failAt(id)
		return nil
	}
	if ne.Uint16(p[8:]) == pageBranch || (len(p) > ps && !t.once) {
		// Kept until the state changes, first come first kept: every lookup
		// passes the upper levels first, and every view reads the revision's
		// header first, so they are what stays. A page of one size is a
		// recycled buffer: it is copied; an overflow page is its own.
		c.mu.Lock()
		if c.txid == t.m.txid && c.bytes+len(p) <= snapPagesBytes {
			if len(p) == ps {
				p = bytes.Clone(p)
			}
			if c.pages == nil {
				c.pages = map[uint64][]byte{}
			}
			c.pages[id] = p
			c.bytes += len(p)
		}
		c.mu.Unlock()
	}
	return p
}

// checkPage checks that every element of a branch or leaf page lies inside
// it, so reading one never goes out of bounds.
func (t *snapTx) checkPage(p []byte) bool {
	ne := binary.NativeEndian
	flags, n := ne.Uint16(p[8:]), int(ne.Uint16(p[10:]))
	if flags != pageBranch && flags != pageLeaf {
		return false
	}
	if pageHeader+n*pageElem > len(p) {
		return false
	}
	for i := range n {
		e := pageHeader + i*pageElem
		var pos, size uint64
		if flags == pageBranch {
			pos, size = uint64(ne.Uint32(p[e:])), uint64(ne.Uint32(p[e+4:]))
		} else {
			pos, size = uint64(ne.Uint32(p[e+4:])), uint64(ne.Uint32(p[e+8:]))+uint64(ne.Uint32(p[e+12:]))
		}
		if uint64(e)+pos+size > uint64(len(p)) {
			return false
		}
	}
	return true
}

// node is a page (or an inline bucket's page) being read.
type node []byte

func (p node) count() int     { return int(binary.NativeEndian.Uint16(p[10:])) }
func (p node) isBranch() bool { return binary.NativeEndian.Uint16(p[8:]) == pageBranch }

func (p node) key(i int) []byte {
	ne := binary.NativeEndian
	e := pageHeader + i*pageElem
	if p.isBranch() {
		pos, ks := int(ne.Uint32(p[e:])), int(ne.Uint32(p[e+4:]))
		return p[e+pos : e+pos+ks : e+pos+ks]
	}
	pos, ks := int(ne.Uint32(p[e+4:])), int(ne.Uint32(p[e+8:]))
	return p[e+pos : e+pos+ks : e+pos+ks]
}

func (p node) child(i int) uint64 {
	return binary.NativeEndian.Uint64(p[pageHeader+i*pageElem+8:])
}

// value is a leaf element's value and whether it is a nested bucket.
func (p node) value(i int) ([]byte, bool) {
	ne := binary.NativeEndian
	e := pageHeader + i*pageElem
	flags, pos, ks, vs := ne.Uint32(p[e:]), int(ne.Uint32(p[e+4:])), int(ne.Uint32(p[e+8:])), int(ne.Uint32(p[e+12:]))
	start := e + pos + ks
	return p[start : start+vs : start+vs], flags&leafIsBuckt != 0
}

// search returns the index of the first key ≥ k.
func (p node) search(k []byte) int {
	lo, hi := 0, p.count()
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if bytes.Compare(p.key(mid), k) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

func (t *snapTx) root() *snapBucket { return &snapBucket{t: t, root: t.m.root} }

func (t *snapTx) Bucket(name []byte) bucket {
	if b := t.root().bucket(name); b != nil {
		return b
	}
	return nil
}

func (t *snapTx) CreateBucketIfNotExists([]byte) (bucket, error) { return nil, errSnapshot }

func (t *snapTx) ForEach(fn func(name []byte, b bucket) error) error {
	root := t.root()
	c := root.cursor()
	for k, _, isB := c.first(); k != nil; k, _, isB = c.next() {
		if !isB {
			continue
		}
		if b := root.bucket(k); b != nil {
			if err := fn(k, b); err != nil {
				return err
			}
		}
	}
	return nil
}

// snapBucket is a bucket of a snapshot: a root page, or an inline page.
type snapBucket struct {
	t      *snapTx
	root   uint64
	inline node
	seq    uint64
}

func (b *snapBucket) bucket(name []byte) *snapBucket {
	v, isB, found := b.get(name)
	if !found || !isB || len(v) < bucketHdr {
		return nil
	}
	ne := binary.NativeEndian
	nb := &snapBucket{t: b.t, root: ne.Uint64(v), seq: ne.Uint64(v[8:])}
	if nb.root == 0 {
		in := node(v[bucketHdr:])
		if len(in) < pageHeader || !b.t.checkPage(in) {
			b.t.fail()
			return nil
		}
		nb.inline = in
	}
	return nb
}

func (b *snapBucket) rootNode() node {
	if b.inline != nil {
		return b.inline
	}
	return b.t.page(b.root)
}

func (b *snapBucket) get(k []byte) (v []byte, isBucket, found bool) {
	c := b.cursor()
	ck, cv, isB := c.seek(k)
	if ck == nil || !bytes.Equal(ck, k) {
		return nil, false, false
	}
	return cv, isB, true
}

func (b *snapBucket) Get(k []byte) []byte {
	v, isB, found := b.get(k)
	if !found || isB {
		return nil
	}
	return v
}

func (b *snapBucket) Put(k, v []byte) error         { return errSnapshot }
func (b *snapBucket) Delete(k []byte) error         { return errSnapshot }
func (b *snapBucket) NextSequence() (uint64, error) { return 0, errSnapshot }
func (b *snapBucket) Sequence() uint64              { return b.seq }
func (b *snapBucket) Appending()                    {}
func (b *snapBucket) Cursor() cursor                { return &snapCursorAPI{c: b.cursor()} }
func (b *snapBucket) Stats() bucketStats            { b.t.fail(); panic(errSnapshot) }
func (b *snapBucket) ForEach(fn func(k, v []byte) error) error {
	c := b.cursor()
	for k, v, isB := c.first(); k != nil; k, v, isB = c.next() {
		if isB {
			v = nil
		}
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

func (b *snapBucket) cursor() *snapCursor {
	c := &snapCursor{b: b}
	c.stack = c.room[:0]
	return c
}

// snapCursor walks a bucket's B+tree: a stack from the root to a leaf.
type snapCursor struct {
	b     *snapBucket
	stack []snapRef
	room  [6]snapRef
}

type snapRef struct {
	n node
	i int
}

func (c *snapCursor) node(id uint64) node {
	p := c.b.t.page(id)
	if p == nil {
		return nil
	}
	return node(p)
}

// down descends from the node on top of the stack to a leaf, along the
// first children (d > 0) or the last (d < 0).
func (c *snapCursor) down(d int) bool {
	for {
		r := c.stack[len(c.stack)-1]
		if !r.n.isBranch() {
			return true
		}
		if len(c.stack) > 64 {
			c.b.t.fail()
			return false
		}
		n := c.node(r.n.child(r.i))
		if n == nil {
			return false
		}
		i := 0
		if d < 0 {
			i = n.count() - 1
		}
		c.stack = append(c.stack, snapRef{n, i})
	}
}

func (c *snapCursor) cur() ([]byte, []byte, bool) {
	if len(c.stack) == 0 || c.b.t.bad {
		return nil, nil, false
	}
	r := c.stack[len(c.stack)-1]
	if r.i < 0 || r.i >= r.n.count() {
		return nil, nil, false
	}
	v, isB := r.n.value(r.i)
	return r.n.key(r.i), v, isB
}

// end goes to the first (d > 0) or the last (d < 0) key.
func (c *snapCursor) end(d int) ([]byte, []byte, bool) {
	c.stack = c.stack[:0]
	n := c.b.rootNode()
	if n == nil {
		return nil, nil, false
	}
	i := 0
	if d < 0 {
		i = n.count() - 1
	}
	if n.isBranch() && n.count() == 0 {
		c.b.t.fail()
		return nil, nil, false
	}
	c.stack = append(c.stack, snapRef{n, i})
	if !c.down(d) {
		return nil, nil, false
	}
	if k, v, isB := c.cur(); k != nil {
		return k, v, isB
	}
	return c.move(d) // an empty leaf
}

func (c *snapCursor) first() ([]byte, []byte, bool) { return c.end(1) }
func (c *snapCursor) last() ([]byte, []byte, bool)  { return c.end(-1) }

// move steps by d (±1), climbing and descending across pages.
func (c *snapCursor) move(d int) ([]byte, []byte, bool) {
	for !c.b.t.bad {
		i := len(c.stack) - 1
		for i >= 0 && (c.stack[i].i+d < 0 || c.stack[i].i+d >= c.stack[i].n.count()) {
			i--
		}
		if i < 0 {
			// past either end the cursor stays where it was, as bbolt's does
			return nil, nil, false
		}
		c.stack[i].i += d
		c.stack = c.stack[:i+1]
		if !c.down(d) {
			return nil, nil, false
		}
		if k, v, isB := c.cur(); k != nil {
			return k, v, isB
		}
	}
	return nil, nil, false
}

func (c *snapCursor) next() ([]byte, []byte, bool) { return c.move(1) }
func (c *snapCursor) prev() ([]byte, []byte, bool) { return c.move(-1) }

func (c *snapCursor) seek(k []byte) ([]byte, []byte, bool) {
	c.stack = c.stack[:0]
	n := c.b.rootNode()
	for n != nil {
		if !n.isBranch() {
			i := n.search(k)
			c.stack = append(c.stack, snapRef{n, i})
			if i >= n.count() {
				return c.next()
			}
			return c.cur()
		}
		if n.count() == 0 || len(c.stack) > 64 {
			c.b.t.fail()
			return nil, nil, false
		}
		// the last child whose first key is ≤ k
		i := n.search(k)
		if i >= n.count() || !bytes.Equal(n.key(i), k) {
			i--
		}
		i = max(i, 0)
		c.stack = append(c.stack, snapRef{n, i})
		n = c.node(n.child(i))
	}
	return nil, nil, false
}

// snapCursorAPI is the cursor interface: nested buckets come as (k, nil),
// as bbolt gives them.
type snapCursorAPI struct{ c *snapCursor }

func kvOf(k, v []byte, isB bool) ([]byte, []byte) {
	if isB {
		return k, nil
	}
	return k, v
}

func (a *snapCursorAPI) First() ([]byte, []byte)        { return kvOf(a.c.first()) }
func (a *snapCursorAPI) Last() ([]byte, []byte)         { return kvOf(a.c.last()) }
func (a *snapCursorAPI) Next() ([]byte, []byte)         { return kvOf(a.c.next()) }
func (a *snapCursorAPI) Prev() ([]byte, []byte)         { return kvOf(a.c.prev()) }
func (a *snapCursorAPI) Seek(k []byte) ([]byte, []byte) { return kvOf(a.c.seek(k)) }
func (a *snapCursorAPI) Delete() error                  { return errSnapshot }
