package store

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/search"
)

// chunkBytes bounds what an IndexWriter buffers before it writes a chunk in
// its own transaction: publish memory does not grow with the revision.
var chunkBytes = 4 << 20

// IndexWriter streams one revision's index into the store. Its methods are
// called in this order: PutCommand and PutBody (also before PutRevision, as
// policy.Stream does); PutRevision once; PutRoute (routes in any order);
// then per endpoint PutEndpoint followed by its tools in their order
// (toolBefore). Records are written in chunks as they come; the
// revision they make exists only once Publish (or AttachIndex) records it.
//
// Declarations and bodies are content-addressed: one that is already in
// the store (from an earlier revision, or earlier in this one) is not
// written again. The refs returned are opaque strings.
//
// Objects are spilled to an unlinked scratch file as they come and written
// at the end in key order: their keys are content hashes, and put as they
// come every chunk would dirty (and read through the map) a page in nearly
// every leaf of the objects bucket.
type IndexWriter struct {
	s   *Store
	gen []byte

	spill     *os.File
	spillBuf  *bufio.Writer
	spillSize int64
	objs      []spilledObject
	refs      []byte // the block the next refs handed out are cut from

	batch      []kv
	batchBytes int
	flushed    bool // the pending marker is written

	hdr      header
	releases []byte
	started  bool

	ep       *EndpointInfo
	page     []pageEntry
	pageSize int
	pageEnds bool   // the page ends before the next listed tool (pageCut)
	lastTool string // name of the last tool put
	lastCmd  string // its command

	// bodyAt is where each body put lies among the spilled objects: a
	// page's object is made of its bodies at the end, and a body a page
	// lists is stored only there. pageTools are the tool records of the
	// page being cut (they name its object, known once it ends);
	// pageBodies where the bodies of every page's object lie, in order.
	bodyAt     map[string]int32
	pageTools  []pageTool
	pageBodies []spillRange

	// With search: where the terms of each tool body lie in the scratch
	// file (encoded bags, by body ref; held there, not in memory, until
	// the tools that need them come) and the current endpoint's index.
	analyze    func(body []byte) (search.Bag, error)
	bags       map[string]spillRange // n < 0: not resolved yet
	bagWin     spillWindow           // the bags are read through it
	unresolved []pendingBody
	searchIx   *search.Builder
	reused     int

	err error
}

type kv struct {
	bucket []byte
	k, v   []byte
	object bool // content-addressed: written only if absent
}

func (s *Store) newIndexWriter() (*IndexWriter, error) {
	gen := make([]byte, genIDLen)
	if _, err := rand.Read(gen); err != nil {
		return nil, s.internal("cannot read random bytes", err)
	}
	return &IndexWriter{s: s, gen: gen, bodyAt: map[string]int32{}}, nil
}

// pageTool is the record of a listed tool, written once its page ends.
type pageTool struct {
	k []byte
	t Tool
}

// spilledObject is an object in the scratch file: its key, where its
// content starts and how long it is. A publish holds one per object until
// its end, so it is kept small.
type spilledObject struct {
	key  [1 + refLen]byte
	mark uint8 // what else the object is: spilledListed…
	n    uint32
	off  int64
}

// Marks of a spilled object. A body that only listed tools have is not
// written: their pages' objects hold it. A page object is not in the
// scratch file: n bodies from off of pageBodies, read as it is written;
// one already stored is not read at all.
const (
	spilledListed   = 1 << iota // a body a page lists
	spilledUnlisted             // a body a tool has that no page lists
	spilledPage                 // a page object, built at the end
	spilledStored               // a page object the store holds already
)

// written says whether the object is to be written.
func (o *spilledObject) written() bool {
	switch {
	case o.mark&spilledPage != 0:
		return o.mark&spilledStored == 0
	case o.mark&spilledListed != 0:
		return o.mark&spilledUnlisted != 0
	}
	return true
}

// spillRange is where some bytes lie in the scratch file.
type spillRange struct {
	off int64
	n   int
}

func (w *IndexWriter) fail(err error) error {
	if w.err == nil {
		w.err = err
	}
	return w.err
}

func (w *IndexWriter) put(bucket, k, v []byte, object bool) error {
	if w.err != nil {
		return w.err
	}
	w.batch = append(w.batch, kv{bucket, k, v, object})
	w.batchBytes += len(k) + len(v) + 32
	ops, bytes := w.s.be.batch()
	if w.batchBytes >= min(chunkBytes, bytes) || len(w.batch) >= ops {
		return w.flush()
	}
	return nil
}

// flush writes the buffered records in one transaction; the first one
// also marks the generation pending, so prune can remove it if this
// publish never finishes and sweeps no object while it runs, and stamps
// the file with this layout: objects an older rukh cannot read may be
// written from here on, even if this publish never ends.
func (w *IndexWriter) flush() error {
	if w.err != nil {
		return w.err
	}
	if len(w.batch) == 0 && w.flushed {
		return nil
	}
	// In key order, every put appends: a chunk's tool, page, name and
	// search records come interleaved, and put as they came each would
	// move the node's later keys.
	slices.SortStableFunc(w.batch, func(a, b kv) int {
		if c := bytes.Compare(a.bucket, b.bucket); c != 0 {
			return c
		}
		return bytes.Compare(a.k, b.k)
	})
	err := w.s.update(func(tx txn) error {
		if !w.flushed {
			if err := tx.Bucket(bucketPending).Put(w.gen, []byte(now().Format(time.RFC3339Nano))); err != nil {
				return err
			}
			if err := stampSchema(tx); err != nil {
				return err
			}
		}
		for _, e := range w.batch {
			b := tx.Bucket(e.bucket)
			// Appended in key order, pages fill up instead of splitting.
			b.Appending()
			if e.object && b.Get(e.k) != nil {
				continue
			}
			if err := b.Put(e.k, e.v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return w.fail(err)
	}
	w.flushed = true
	w.batch, w.batchBytes = w.batch[:0], 0
	return nil
}

// PutRevision starts the index: the revision id, the profile and the bound
// releases (both opaque).
func (w *IndexWriter) PutRevision(revision string, profile, releases []byte) error {
	if w.started {
		return w.fail(kernel.Errorf(kernel.CodeInternal, "index: PutRevision called twice"))
	}
	w.started = true
	w.hdr = header{Revision: revision, Profile: clone(profile)}
	w.releases = clone(releases)
	return w.err
}

// object spills content as an object of kind and returns its ref.
func (w *IndexWriter) object(kind byte, content []byte) (string, error) {
	var k [1 + refLen]byte
	k[0] = kind
	sum := sha256.Sum256(content)
	copy(k[1:], sum[:])
	err := w.objectAt(k[:], content)
	return w.ref(k[1:]), err
}

// ref is sum as a ref. Refs are cut from shared blocks that are never
// written again: a publish holds one per declaration and body until its
// end, and one allocation per ref made that many more objects for the
// collector to mark.
func (w *IndexWriter) ref(sum []byte) string {
	if cap(w.refs)-len(w.refs) < len(sum) {
		w.refs = make([]byte, 0, max(refBlock, len(sum)))
	}
	start := len(w.refs)
	w.refs = append(w.refs, sum...)
	return unsafe.String(&w.refs[start], len(sum))
}

// refBlock is how many bytes of refs are allocated at once.
const refBlock = 64 << 10

// objectAt spills content as the object of key k.
func (w *IndexWriter) objectAt(k, content []byte) error {
	if uint64(len(content)) > math.MaxUint32 {
		return w.fail(kernel.Errorf(kernel.CodeInvalid, "index: an object of %d bytes is too large to store", len(content)))
	}
	off, err := w.spillBytes(content)
	if err != nil {
		return err
	}
	o := spilledObject{off: off, n: uint32(len(content))}
	copy(o.key[:], k)
	w.objs = append(w.objs, o)
	return nil
}

// spillBytes appends content to the scratch file and returns where it
// starts.
func (w *IndexWriter) spillBytes(content []byte) (int64, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.spill == nil {
		dir := filepath.Join(w.s.home, "tmp")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return 0, w.fail(w.s.internal("cannot make a scratch directory", err))
		}
		f, err := os.CreateTemp(dir, "publish-*")
		if err != nil {
			return 0, w.fail(w.s.internal("cannot make a scratch file", err))
		}
		_ = os.Remove(f.Name()) // unlinked: nothing is left behind by a crash (where the OS allows it)
		w.spill, w.spillBuf = f, bufio.NewWriterSize(f, 256<<10)
	}
	off := w.spillSize
	if _, err := w.spillBuf.Write(content); err != nil {
		return 0, w.fail(w.s.internal("cannot write a scratch file", err))
	}
	w.spillSize += int64(len(content))
	return off, nil
}

// bagWindow is how much of the scratch file is read at once for the term
// bags of the tools, and for the bodies of a list page: they come in
// about the order they were spilled.
const bagWindow = 64 << 10

// spillWindow is a part of the scratch file read into memory.
type spillWindow struct {
	buf []byte
	off int64 // where buf starts in the file
}

// spilledBag reads the encoded bag at r of the scratch file.
func (w *IndexWriter) spilledBag(r spillRange) ([]byte, error) { return w.spilled(&w.bagWin, r) }

// spilled reads r of the scratch file through win: valid until the next
// read through it.
func (w *IndexWriter) spilled(win *spillWindow, r spillRange) ([]byte, error) {
	if w.spillBuf.Buffered() > 0 {
		if err := w.spillBuf.Flush(); err != nil {
			return nil, w.fail(w.s.internal("cannot write a scratch file", err))
		}
		w.bagWin.buf = w.bagWin.buf[:0]
	}
	if r.off < win.off || r.off+int64(r.n) > win.off+int64(len(win.buf)) {
		n := max(bagWindow, r.n)
		if cap(win.buf) < n {
			win.buf = make([]byte, n)
		}
		got, err := w.spill.ReadAt(win.buf[:n], r.off)
		if got < r.n {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return nil, w.fail(w.s.internal("cannot read a scratch file", err))
		}
		win.buf, win.off = win.buf[:got], r.off
	}
	start := r.off - win.off
	return win.buf[start : start+int64(r.n)], nil
}

// putObjects writes the spilled objects in key order, each once.
//
// The objects of each transaction are read from the scratch file on
// another goroutine while the transaction before them commits: a publish
// ends with this, and read and written in turn it left a CPU idle.
func (w *IndexWriter) putObjects() error {
	if w.spill == nil || w.err != nil {
		return w.err
	}
	if err := w.spillBuf.Flush(); err != nil {
		return w.fail(w.s.internal("cannot write a scratch file", err))
	}
	ready, free := make(chan objectChunk), make(chan []byte, 2) // two buffers: one read while one commits
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer close(ready)
		w.readObjects(ready, free, stop)
	}()
	defer func() { close(stop); <-done }()
	for c := range ready {
		if c.err != nil {
			return w.fail(w.s.internal("cannot read a scratch file", c.err))
		}
		for _, e := range c.objs {
			k, v := c.arena[e.at:e.at+1+refLen:e.at+1+refLen], c.arena[e.at+1+refLen:e.at+1+refLen+e.n:e.at+1+refLen+e.n]
			if err := w.put(bucketObjects, k, v, true); err != nil {
				return err
			}
		}
		// Written before the buffer is read into again: a transaction holds
		// what it puts until it commits.
		if err := w.flush(); err != nil {
			return err
		}
		select {
		case free <- c.arena:
		default:
		}
	}
	w.objs = nil
	return w.err
}

// objectChunk is one transaction's objects, read from the scratch file:
// each key and content lie in arena, the key at at and the content after it.
type objectChunk struct {
	arena []byte
	objs  []struct{ at, n int }
	err   error
}

// readObjects sorts the spilled objects by key and sends them, each once,
// in chunks that fit one transaction, reusing the buffers that come back
// on free, until they are all sent or stop is closed.
func (w *IndexWriter) readObjects(ready chan<- objectChunk, free <-chan []byte, stop <-chan struct{}) {
	slices.SortFunc(w.objs, func(a, b spilledObject) int { return bytes.Compare(a.key[:], b.key[:]) })
	ops, limit := w.s.be.batch()
	limit = min(chunkBytes, limit)
	var c objectChunk
	size := 0
	send := func() bool {
		select {
		case ready <- c:
		case <-stop:
			return false
		}
		var buf []byte
		select {
		case buf = <-free:
		default:
		}
		c, size = objectChunk{arena: buf[:0]}, 0
		return true
	}
	for i := range w.objs {
		o := &w.objs[i]
		if i > 0 && o.key == w.objs[i-1].key || !o.written() {
			continue
		}
		n := int(o.n)
		// As put counts a record: the batch ends within this chunk.
		if len(c.objs) > 0 && (size+len(o.key)+n+32 >= limit || len(c.objs)+1 >= ops) {
			if !send() {
				return
			}
		}
		if c.arena == nil {
			c.arena = make([]byte, 0, max(limit+64<<10, len(o.key)+n))
		}
		at := len(c.arena)
		c.arena = append(c.arena, o.key[:]...)
		var err error
		if o.mark&spilledPage != 0 {
			c.arena, err = w.readPage(c.arena, o)
		} else {
			c.arena = slices.Grow(c.arena, n)[:at+len(o.key)+n]
			if _, err = w.spill.ReadAt(c.arena[at+len(o.key):], o.off); err == io.EOF && n == 0 {
				err = nil
			}
		}
		if err != nil {
			c.err = err
			send()
			return
		}
		c.objs = append(c.objs, struct{ at, n int }{at, n})
		size += len(o.key) + n + 32
	}
	if len(c.objs) > 0 {
		send()
	}
}

// readPage appends page object o to buf, its bodies read from the
// scratch file.
func (w *IndexWriter) readPage(buf []byte, o *spilledObject) ([]byte, error) {
	bodies := w.pageBodies[o.off+1:][:w.pageBodies[o.off].n]
	buf = append(buf, byte(len(bodies)))
	end := uint32(0)
	for _, r := range bodies {
		end += uint32(r.n)
		buf = binary.BigEndian.AppendUint32(buf, end)
	}
	for _, r := range bodies {
		at := len(buf)
		buf = slices.Grow(buf, r.n)[:at+r.n]
		if _, err := w.spill.ReadAt(buf[at:], r.off); err != nil && !(err == io.EOF && r.n == 0) {
			return buf, err
		}
	}
	return buf, nil
}

// markStored marks the page objects the store holds already: an
// unchanged page is not read back from the scratch file nor written. Only
// after the first flush: a prune then sweeps none of the objects found
// here before the revision that names them is recorded.
func (w *IndexWriter) markStored() error {
	if !w.flushed {
		return w.fail(kernel.Errorf(kernel.CodeInternal, "index: stored pages looked up before the publish is marked pending"))
	}
	var keys [][]byte
	var at []int
	for i := range w.objs {
		if w.objs[i].mark&spilledPage != 0 {
			keys, at = append(keys, w.objs[i].key[:]), append(at, i)
		}
	}
	// In views of a bounded number each: a lookup maps the file around the
	// page object's first page, and a view keeps what it mapped. Whether
	// each exists is all that is asked: etcd sends keys only.
	for len(keys) > 0 {
		n := min(len(keys), storedBatch)
		_, err := w.s.view(func(tx txn) error {
			o := tx.Bucket(bucketObjects)
			if o == nil {
				return nil
			}
			if t, ok := tx.(transientReader); ok {
				t.transient(true)
				defer t.transient(false)
			}
			for j, ok := range present(o, keys[:n]) {
				if ok {
					w.objs[at[j]].mark |= spilledStored
				}
			}
			return nil
		})
		if err != nil {
			return w.fail(err)
		}
		keys, at = keys[n:], at[n:]
	}
	return nil
}

// storedBatch is how many page objects one view of markStored looks up.
const storedBatch = 256

// presence is a bucket that says which keys it holds without their values
// (etcd: keys only, many per request).
type presence interface{ present(keys [][]byte) []bool }

// present says which of keys b holds.
func present(b bucket, keys [][]byte) []bool {
	if p, ok := b.(presence); ok {
		return p.present(keys)
	}
	out := make([]bool, len(keys))
	for i, k := range keys {
		out[i] = b.Get(k) != nil
	}
	return out
}

// closeSpill drops the scratch file.
func (w *IndexWriter) closeSpill() {
	if w.spill != nil {
		_ = w.spill.Close()
		_ = os.Remove(w.spill.Name())
		w.spill, w.spillBuf, w.objs, w.bodyAt, w.pageBodies = nil, nil, nil, nil, nil
	}
}

// PutCommand stores a declaration record and returns its ref.
func (w *IndexWriter) PutCommand(decl []byte) (string, error) { return w.object(objDecl, decl) }

// PutBody stores a tool body and returns its ref. With search, the body's
// terms are found when a tool first needs them, for all bodies put by then
// at once: stored by an earlier publish, or analysed and stored.
func (w *IndexWriter) PutBody(body []byte) (string, error) {
	var k [1 + refLen]byte
	k[0] = objBody
	sum := sha256.Sum256(body)
	copy(k[1:], sum[:])
	ref := w.ref(sum[:])
	if _, ok := w.bodyAt[ref]; ok {
		return ref, w.err
	}
	if err := w.objectAt(k[:], body); err != nil {
		return ref, err
	}
	w.bodyAt[ref] = int32(len(w.objs) - 1)
	if w.analyze == nil {
		return ref, nil
	}
	if _, ok := w.bags[ref]; !ok {
		w.bags[ref] = spillRange{n: -1}
		w.unresolved = append(w.unresolved, pendingBody{ref, len(w.objs) - 1})
		if len(w.unresolved) >= resolveBatch {
			return ref, w.resolveBags()
		}
	}
	return ref, nil
}

// resolveBatch is how many bodies' terms are found at once while bodies
// are put: found all at the first tool, the analysis's own memory came on
// top of everything a publish holds by then.
const resolveBatch = 8192

// pendingBody is a body whose terms are not known yet: its ref and its
// place among the spilled objects.
type pendingBody struct {
	ref string
	obj int
}

// resolveBags finds the terms of every body put since the last call: one
// read transaction for them all, then the analysis of those no revision
// had.
func (w *IndexWriter) resolveBags() error {
	if len(w.unresolved) == 0 || w.err != nil {
		return w.err
	}
	keys := make([][]byte, len(w.unresolved))
	for i, p := range w.unresolved {
		keys[i] = termsKey(p.ref)
	}
	if _, err := w.s.view(func(tx txn) error {
		o := tx.Bucket(bucketObjects)
		if o == nil {
			return nil
		}
		if pf, ok := o.(prefetcher); ok {
			pf.prefetch(keys)
		}
		for i, p := range w.unresolved {
			if v := o.Get(keys[i]); v != nil {
				if _, err := search.DecodeBag(v); err == nil {
					// Not an object to write: it is stored already.
					off, err := w.spillBytes(v)
					if err != nil {
						return err
					}
					w.bags[p.ref] = spillRange{off, len(v)}
				}
			}
		}
		return nil
	}); err != nil {
		return w.fail(err)
	}
	if err := w.spillBuf.Flush(); err != nil {
		return w.fail(w.s.internal("cannot write a scratch file", err))
	}
	// The bodies to analyse lie in the scratch file in the order they
	// were put: read in windows, analysed on every CPU.
	var todo []int
	for i, p := range w.unresolved {
		if w.bags[p.ref].n >= 0 {
			w.reused++
		} else {
			todo = append(todo, i)
		}
	}
	encs := make([][]byte, len(w.unresolved))
	var window []byte
	for len(todo) > 0 {
		first := w.objs[w.unresolved[todo[0]].obj]
		k, end := 0, first.off
		for k < len(todo) {
			o := w.objs[w.unresolved[todo[k]].obj]
			if k > 0 && o.off+int64(o.n)-first.off > analyseWindow {
				break
			}
			end = max(end, o.off+int64(o.n))
			k++
		}
		window = slices.Grow(window[:0], int(end-first.off))[:end-first.off] // the analysis keeps nothing of it
		if _, err := w.spill.ReadAt(window, first.off); err != nil && !(err == io.EOF && len(window) == 0) {
			return w.fail(w.s.internal("cannot read a scratch file", err))
		}
		if err := analyseAll(todo[:k], func(i int) error {
			o := w.objs[w.unresolved[i].obj]
			bag, err := w.analyze(window[o.off-first.off : o.off-first.off+int64(o.n)])
			encs[i] = bag.Encode()
			return err
		}); err != nil {
			return w.fail(kernel.Errorf(kernel.CodeInternal, "cannot index a tool body for search").Wrap(err))
		}
		// Spilled as each window is done: all of them at once are tens of
		// MiB at the point of a publish that holds the most.
		for _, i := range todo[:k] {
			if err := w.objectAt(keys[i], encs[i]); err != nil {
				return err
			}
			o := w.objs[len(w.objs)-1]
			w.bags[w.unresolved[i].ref] = spillRange{o.off, int(o.n)}
			encs[i] = nil
		}
		todo = todo[k:]
	}
	w.unresolved = w.unresolved[:0]
	return nil
}

// analyseWindow bounds the scratch file read at once for analysis.
const analyseWindow = 1 << 20

// analyseAll runs fn for each of idx on every CPU; the first error wins.
func analyseAll(idx []int, fn func(i int) error) error {
	workers := min(runtime.GOMAXPROCS(0), len(idx))
	next := atomic.Int64{}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for wk := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				j := int(next.Add(1)) - 1
				if j >= len(idx) || errs[wk] != nil {
					return
				}
				errs[wk] = fn(idx[j])
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// prefetcher is a bucket that can read many keys at once (etcd: a few
// requests instead of one per key) before they are got.
type prefetcher interface{ prefetch(keys [][]byte) }

// IndexSearch makes the writer index every endpoint's tools for search:
// analyze gives a tool body's terms (the command id's are added per tool).
// Called before the first PutBody.
func (w *IndexWriter) IndexSearch(analyze func(body []byte) (search.Bag, error)) {
	w.analyze, w.bags = analyze, map[string]spillRange{}
}

// ReusedTerms is how many tool bodies' terms came from earlier publishes.
func (w *IndexWriter) ReusedTerms() int { return w.reused }

// PutRoute stores one CLI route. line is what a group's --help shows for it.
func (w *IndexWriter) PutRoute(words []string, kind, command, decl, line string) error {
	if err := validWords(words); err != nil {
		return w.fail(kernel.Errorf(kernel.CodeInvalid, "%v", err))
	}
	if _, ok := routeKinds[kind]; !ok {
		return w.fail(kernel.Errorf(kernel.CodeInternal, "index: unknown route kind %q", kind))
	}
	r := Route{Kind: kind, Command: command, Decl: decl, Line: line}
	return w.put(bucketGens, routeKey(w.gen, words), r.encode(), false)
}

// PutEndpoint starts an endpoint; its tools follow. meta is opaque.
func (w *IndexWriter) PutEndpoint(endpoint string, meta []byte) error {
	if err := w.endEndpoint(); err != nil {
		return err
	}
	for _, e := range w.hdr.Endpoints {
		if e.Name == endpoint {
			return w.fail(kernel.Errorf(kernel.CodeInternal, "index: endpoint %q twice", endpoint))
		}
	}
	w.hdr.Endpoints = append(w.hdr.Endpoints, EndpointInfo{Name: endpoint, Meta: clone(meta)})
	w.ep = &w.hdr.Endpoints[len(w.hdr.Endpoints)-1]
	w.lastTool, w.lastCmd = "", ""
	if w.analyze != nil {
		w.searchIx = search.NewBuilder()
	}
	return w.err
}

// PutTool stores one tool of the current endpoint. Tools come in the
// endpoint's tool order (toolBefore), which is also the list pages'
// order; wireSize is the size of the whole tool object on the wire, which
// decides where a list page ends. A tool not listed is left out of the
// list pages but is one of the endpoint's tools all the same (found by
// name, and by search).
func (w *IndexWriter) PutTool(name, command, release, decl, body, security string, wireSize int, listed bool) error {
	if w.ep == nil {
		return w.fail(kernel.Errorf(kernel.CodeInternal, "index: PutTool before PutEndpoint"))
	}
	if w.ep.Tools > 0 && (name == w.lastTool || !toolBefore(w.lastTool, w.lastCmd, name, command)) {
		return w.fail(kernel.Errorf(kernel.CodeInternal, "index: tool %q out of order or repeated", name))
	}
	w.lastTool, w.lastCmd = name, command
	at, ok := w.bodyAt[body]
	if !ok {
		return w.fail(kernel.Errorf(kernel.CodeInternal, "index: tool %q: its body was not put", name))
	}
	if listed {
		if len(w.page) > 0 && (w.pageEnds || len(w.page) == PageTools || w.pageSize+wireSize+1 > PageBytes) {
			if err := w.endPage(); err != nil {
				return err
			}
		}
		w.page = append(w.page, pageEntry{name: name, body: body})
		w.pageSize += wireSize + 1
		w.pageEnds = len(w.page) >= pageMinTools && pageCut(command)
		w.objs[at].mark |= spilledListed
	} else {
		w.objs[at].mark |= spilledUnlisted
	}
	doc := w.ep.Tools
	w.ep.Tools++
	if w.searchIx != nil {
		at, ok := w.bags[body]
		if ok && at.n < 0 {
			if err := w.resolveBags(); err != nil {
				return err
			}
			at = w.bags[body]
		}
		if !ok {
			return w.fail(kernel.Errorf(kernel.CodeInternal, "index: tool %q: its body was not put", name))
		}
		enc, err := w.spilledBag(at)
		if err != nil {
			return err
		}
		if err := w.searchIx.AddEncoded(enc, search.CommandBag(command)); err != nil {
			return w.fail(kernel.Errorf(kernel.CodeInternal, "index: tool %q", name).Wrap(err))
		}
		if err := w.put(bucketGens, genKey(w.gen, tagName, []byte(w.ep.Name), []byte{0}, docKey(doc)), []byte(name), false); err != nil {
			return err
		}
	}
	t := Tool{Command: command, Release: release, Decl: decl, Body: body, Security: security}
	k := genKey(w.gen, tagTool, []byte(w.ep.Name), []byte{0}, []byte(name))
	if listed {
		// Written once its page ends: the record names the page's object.
		w.pageTools = append(w.pageTools, pageTool{k, t})
		return w.err
	}
	return w.put(bucketGens, k, t.encode(), false)
}

// docKey is a tool number as a key: 4 bytes, big-endian.
func docKey(doc int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(doc)) }

// endSearch writes the current endpoint's search postings, one record per
// term.
func (w *IndexWriter) endSearch() error {
	if w.searchIx == nil || w.err != nil {
		return w.err
	}
	ep := w.ep.Name
	err := w.searchIx.Postings(func(term string, block []byte) error {
		return w.put(bucketGens, genKey(w.gen, tagSearch, []byte(ep), []byte{0}, []byte(term)), clone(block), false)
	})
	w.searchIx = nil
	if err != nil {
		return w.fail(err)
	}
	w.ep.Search = true
	return nil
}

// endPage writes the page's record and its tools' records, and spills its
// object as the place of its bodies, read from the scratch file as it is
// written: the object's ref is the hash of their refs.
func (w *IndexWriter) endPage() error {
	w.pageEnds = false
	if len(w.page) == 0 {
		return w.err
	}
	sum := pageRef(w.page)
	o := spilledObject{mark: spilledPage, off: int64(len(w.pageBodies))}
	o.key[0] = objPage
	copy(o.key[1:], sum[:])
	w.pageBodies = append(w.pageBodies, spillRange{n: len(w.page)})
	size := pageObjectHead(len(w.page))
	for _, e := range w.page {
		b := w.objs[w.bodyAt[e.body]]
		w.pageBodies = append(w.pageBodies, spillRange{b.off, int(b.n)})
		size += int(b.n)
	}
	if uint64(size) > math.MaxUint32 {
		return w.fail(kernel.Errorf(kernel.CodeInvalid, "index: a list page of %d bytes is too large to store", size))
	}
	o.n = uint32(size)
	w.objs = append(w.objs, o)
	ref := w.ref(sum[:])
	for i := range w.pageTools {
		pt := &w.pageTools[i]
		pt.t.page, pt.t.slot = ref, i
		if err := w.put(bucketGens, pt.k, pt.t.encode(), false); err != nil {
			return err
		}
	}
	clear(w.pageTools)
	w.pageTools = w.pageTools[:0]
	k := genKey(w.gen, tagPage, []byte(w.ep.Name), []byte{0}, itob(uint64(w.ep.Pages)))
	w.ep.Pages++
	v := encodePage(w.page, ref)
	w.page, w.pageSize = w.page[:0], 0
	return w.put(bucketGens, k, v, false)
}

func (w *IndexWriter) endEndpoint() error {
	if w.ep == nil {
		return w.err
	}
	err := w.endPage()
	if err == nil {
		err = w.endSearch()
	}
	w.ep = nil
	return err
}

// finish writes the header and the last chunk. The generation is complete
// but still unreferenced.
func (w *IndexWriter) finish() error {
	if !w.started {
		return w.fail(kernel.Errorf(kernel.CodeInternal, "index: no PutRevision"))
	}
	if err := w.endEndpoint(); err != nil {
		return err
	}
	ref, err := w.object(objReleases, w.releases)
	if err != nil {
		return err
	}
	w.hdr.Releases = ref
	// Marked pending first: from then on no prune sweeps what markStored
	// finds stored.
	err = w.flush()
	if err == nil {
		err = w.markStored()
	}
	if err == nil && afterStoredLookup != nil {
		afterStoredLookup()
	}
	if err == nil {
		err = w.putObjects()
	}
	w.closeSpill()
	if err != nil {
		return err
	}
	if err := w.put(bucketGens, genKey(w.gen, tagHeader), w.hdr.encode(), false); err != nil {
		return err
	}
	return w.flush()
}

// afterStoredLookup, set by tests, runs where a prune in another process
// could: after markStored, before the objects are written.
var afterStoredLookup func()

// discard removes what the writer wrote, after a failed or refused publish.
// Objects stay: other revisions may share them, and prune sweeps the rest.
func (w *IndexWriter) discard() {
	w.closeSpill()
	if !w.flushed {
		return
	}
	_ = w.s.deletePrefix(bucketGens, w.gen, func(tx txn) error { return tx.Bucket(bucketPending).Delete(w.gen) })
}

// commitIndex is the last step inside the final transaction: the generation
// is no longer pending, and the file is stamped with this layout (as the
// first flush did) so an older rukh refuses it instead of misreading it.
func (w *IndexWriter) commitIndex(tx txn) error {
	if err := tx.Bucket(bucketPending).Delete(w.gen); err != nil {
		return err
	}
	if tx.Bucket(bucketGens).Get(genKey(w.gen, tagHeader)) == nil {
		return w.s.internal("the revision index was not written completely", nil)
	}
	return stampSchema(tx)
}

// stampSchema stamps the file with this layout, if it is not already.
func stampSchema(tx txn) error {
	meta, v := tx.Bucket(bucketMeta), strconv.Itoa(SchemaVersion)
	if string(meta.Get(keySchema)) == v {
		return nil
	}
	return meta.Put(keySchema, []byte(v))
}

func (w *IndexWriter) genHex() string { return hex.EncodeToString(w.gen) }

func parseGen(s string) ([]byte, error) {
	g, err := hex.DecodeString(s)
	if err != nil || len(g) != genIDLen {
		return nil, fmt.Errorf("bad index id %q", s)
	}
	return g, nil
}

// AttachIndex gives revision n, stored in the schema-1 layout, its index:
// fill writes it, and one transaction records it and drops the old blob.
// If another process attached one meanwhile, that one is kept.
func (s *Store) AttachIndex(n uint64, fill func(w *IndexWriter) error) error {
	w, err := s.newIndexWriter()
	if err != nil {
		return err
	}
	if err := fill(w); err != nil {
		w.discard()
		return err
	}
	if err := w.finish(); err != nil {
		w.discard()
		return err
	}
	kept := false
	err = s.update(func(tx txn) error {
		raw := tx.Bucket(bucketRevisions).Get(itob(n))
		if raw == nil {
			return revisionNotFound(n)
		}
		var rec revisionRec
		if err := s.decode("revision "+RevisionID(n), raw, &rec); err != nil {
			return err
		}
		if rec.Index != "" {
			kept = true
			return nil
		}
		rec.Index = w.genHex()
		rec.BindingSize, rec.BindingSum = 0, ""
		if err := w.commitIndex(tx); err != nil {
			return err
		}
		if err := tx.Bucket(bucketBindings).Delete(itob(n)); err != nil {
			return err
		}
		return tx.Bucket(bucketRevisions).Put(itob(n), encode(rec))
	})
	if err != nil || kept {
		w.discard()
	}
	return err
}

func genOf(rec *revisionRec) ([]byte, error) { return parseGen(rec.Index) }
