package serve

import (
	"bytes"
	"cmp"
	"slices"
	"sync"
	"weak"

	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
)

// catalogCache keeps what the last requests of a serving process read of
// the active revision (its header, the list pages and the tools they
// asked for) and answers the next requests from it while the store file's
// stamp is the one taken before that read: then a request costs one
// unlocked read of the file's meta pages instead of a store open. A
// revision never changes once published, so what is kept of it stays
// true; the stamp only tells whether it is still the active one. Bounded:
// one revision, cachePageBytes of page bodies, cacheAheadBytes of pages
// read ahead, cacheTools tools.
type catalogCache struct {
	h        *home.Home
	reads    storeReads
	endpoint string

	mu    sync.Mutex
	stamp store.Stamp
	rev   *cachedRev // nil: nothing trusted
}

const (
	cachePageBytes  = 256 << 10
	cacheAheadBytes = 256 << 10
	cacheTools      = 64
)

// cachedRev is what is kept of one revision (n 0: nothing was published).
type cachedRev struct {
	endpoint  string // the launch endpoint
	n         uint64
	revision  string
	ep        store.EndpointInfo
	has       bool
	endpoints []string
	profile   []byte

	launchOnce sync.Once
	launch     *policy.Launch

	mu        sync.Mutex
	pages     map[int]*cachedPage
	loading   map[int]*pageLoad // pages asked for and not read yet
	queue     []*pageLoad       // of those, the ones no read has taken
	reading   bool              // a pageReader runs
	readers   sync.WaitGroup    // the pageReaders that run
	pageBytes int

	// ahead holds the pages read ahead that pages had no room for, each
	// until a request takes it or a newer one needs its room.
	ahead      map[int]*cachedPage
	aheadBytes int
	// recent are the pages read that neither pages nor ahead kept, for as
	// long as anything else holds them: agents walking at once ask for
	// the same pages within moments, and a page that a response is still
	// being written from (or the collector has not freed) is answered
	// from memory, shared, instead of read again. It keeps nothing alive.
	recent      map[int]weak.Pointer[cachedPage]
	recentSweep int // len(recent) at which its freed entries are dropped
	tools       map[string]*mcpcore.Resolved
	digest      *[32]byte
}

// cachedPage is one list page as tools/list writes its tools: each
// tool's object (policy.AppendToolWire), comma-separated, so a response
// is written from these bytes. Never changed once read: responses being
// written share it.
type cachedPage struct {
	wire  []byte
	tools []pageTool
}

// pageTool is where one tool of a page's wire ends, and its name's length
// (the name comes right after the object's opening).
type pageTool struct {
	end, nameLen int32
}

// size is what the page holds.
func (p *cachedPage) size() int { return len(p.wire) + 8*len(p.tools) }

// pageLoad is one page that concurrent requests for it wait for.
type pageLoad struct {
	i       int
	ahead   bool // asked for by no request yet: read ahead of a walk
	claimed bool // a request waits for it after all (under rev.mu)
	done    chan struct{}
	page    *cachedPage
	err     error
}

// One store read reads at most batchPages queued pages before it ends
// (letting a waiting writer in). Through a mapping of the file, every page
// a read touches maps its neighbours too (the kernel's fault-around), so a
// page and its bodies keep far more resident than their size while the read
// lasts, and the peak of many agents walking grows with the pages per read
// (docs/performance.md). Memory is the bound that matters here.
const batchPages = 1

// storeReads bounds the store opens of a process's requests at once: every
// catalogue cache of the process shares one. Each open maps the store file
// anew, and the pages a request touches count once per mapping in the
// resident set, so with no bound many agents walking a large catalogue at
// once multiply it (docs/performance.md). Opens are CPU work on the
// caller's thread, so more at once than newStoreReads allows buys no
// throughput on small machines either.
type storeReads chan struct{}

func newStoreReads() storeReads { return make(storeReads, 2) }

// bounded runs read, one of at most cap(r) at once.
func (r storeReads) bounded(read func() error) error {
	r <- struct{}{}
	defer func() { <-r }()
	return read()
}

func newCachedRev(ix *store.Index, endpoint string) *cachedRev {
	r := &cachedRev{endpoint: endpoint, n: ix.Number(), revision: ix.Revision(), profile: ix.Profile(),
		pages: map[int]*cachedPage{}, tools: map[string]*mcpcore.Resolved{}}
	r.ep, r.has = ix.Endpoint(endpoint)
	for _, e := range ix.Endpoints() {
		r.endpoints = append(r.endpoints, e.Name)
	}
	return r
}

// prime is serve-mcp's start: in one store read it fixes the launch binding
// of the endpoint (as Launch does, refusing an endpoint the published
// profile does not name; nil when nothing is published) and keeps the
// revision with that binding and its first list page, so the profile is
// decoded once and the first requests need no store open.
func (c *catalogCache) prime() (*policy.Launch, error) {
	st, stamped := c.h.Store.Stamp()
	var l *policy.Launch
	var rev *cachedRev
	published, err := c.h.ViewActive(func(ix *store.Index) error {
		r := newCachedRev(ix, c.endpoint)
		var err error
		if l, err = policy.LaunchOf(r.profile, c.endpoint); err != nil {
			return err
		}
		if l == nil {
			return noEndpoint(ix, c.endpoint)
		}
		r.launchOnce.Do(func() { r.launch = l })
		if r.has && r.ep.Pages > 0 {
			// a failure here is the first request's to report
			_ = (&cachedCatalog{cache: c, rev: r, ix: ix}).Page(0, func(string, []byte) error { return nil })
		}
		rev = r
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !published {
		rev = &cachedRev{}
	}
	if stamped {
		c.mu.Lock()
		c.stamp, c.rev = st, rev
		c.mu.Unlock()
	}
	return l, nil
}

// settle waits until no page of the kept revision is being read, ahead of
// requests or for them: tests count the records a request reads.
func (c *catalogCache) settle() {
	c.mu.Lock()
	r := c.rev
	c.mu.Unlock()
	if r != nil {
		r.readers.Wait()
	}
}

// view is mcpcore.Config.View over the cache.
func (c *catalogCache) view(n uint64, fn func(uint64, mcpcore.Catalog) error) error {
	st, stamped := c.h.Store.Stamp()
	c.mu.Lock()
	rev := c.rev
	switch {
	case !stamped || !c.h.Store.Unchanged(c.stamp, st):
		rev = nil
	case c.stamp != st:
		c.stamp = st // only our own audit records were added since
	}
	c.mu.Unlock()
	if rev != nil && (n == 0 || n == rev.n) {
		if rev.n == 0 {
			return fn(0, nil)
		}
		return fn(rev.n, &cachedCatalog{cache: c, rev: rev, at: st, stamped: true})
	}

	// Read the store, keeping what is read when it is the active revision.
	keep := func(r *cachedRev) {
		if stamped {
			// A concurrent read may have kept a newer one: then the next
			// request finds the stamp changed and reads again.
			c.mu.Lock()
			c.stamp, c.rev = st, r
			c.mu.Unlock()
		}
	}
	if n != 0 {
		return c.reads.bounded(func() error {
			return c.h.Store.ViewRevision(n, func(ix *store.Index) error {
				return fn(ix.Number(), &cachedCatalog{cache: c, rev: newCachedRev(ix, c.endpoint), ix: ix})
			})
		})
	}
	var kept *cachedRev
	var published bool
	err := c.reads.bounded(func() (err error) {
		published, err = c.h.ViewActive(func(ix *store.Index) error {
			kept = newCachedRev(ix, c.endpoint)
			cc := &cachedCatalog{cache: c, rev: kept, ix: ix}
			err := fn(ix.Number(), cc)
			cc.ix = nil
			return err
		})
		return err
	})
	switch {
	case err != nil:
		return err
	case !published:
		keep(&cachedRev{})
		return fn(0, nil)
	}
	keep(kept)
	return nil
}

// peek is mcpcore.Config.Peek over the cache: the kept revision while the
// store is unchanged, through a catalog that never reads the store.
func (c *catalogCache) peek(fn func(uint64, mcpcore.Catalog) error) (bool, error) {
	st, stamped := c.h.Store.Stamp()
	c.mu.Lock()
	rev := c.rev
	kept := stamped && rev != nil && c.h.Store.Unchanged(c.stamp, st)
	if kept {
		c.stamp = st // only our own audit records were added since, if anything
	}
	c.mu.Unlock()
	switch {
	case !kept:
		return false, nil
	case rev.n == 0:
		return true, fn(0, nil)
	}
	return true, fn(rev.n, &cachedCatalog{cache: c, rev: rev, peek: true, at: st, stamped: true})
}

// cachedCatalog is mcpcore.Catalog over a cachedRev. What the cache does
// not hold it reads from ix (during the read that made it) or from the
// store, and keeps within the bounds.
type cachedCatalog struct {
	cache *catalogCache
	rev   *cachedRev
	ix    *store.Index
	peek  bool // reads nothing: what is not kept is mcpcore.ErrNotCached
	// at is the stamp the kept revision was found current at (stamped):
	// a call resolved here is pinned against the store as of that stamp,
	// so its pin need not take another (ReadAt).
	at      store.Stamp
	stamped bool
}

// ReadAt is mcpcore.ReadAtCatalog's: a *store.Stamp, or nil when this
// catalog was read from the store (the pin then takes a stamp of its own).
func (c *cachedCatalog) ReadAt() any {
	if !c.stamped {
		return nil
	}
	return &c.at
}

func (c *cachedCatalog) read(fn func(ix *store.Index) error) error {
	if c.ix != nil {
		return fn(c.ix)
	}
	if c.peek {
		return mcpcore.ErrNotCached
	}
	return c.cache.reads.bounded(func() error { return c.cache.h.Store.ViewRevision(c.rev.n, fn) })
}

func (c *cachedCatalog) HasEndpoint() bool   { return c.rev.has }
func (c *cachedCatalog) Pages() int          { return c.rev.ep.Pages }
func (c *cachedCatalog) Revision() string    { return c.rev.revision }
func (c *cachedCatalog) Endpoints() []string { return c.rev.endpoints }

func (c *cachedCatalog) Launch() *policy.Launch {
	r := c.rev
	r.launchOnce.Do(func() {
		if l, err := policy.LaunchOf(r.profile, r.endpoint); err == nil {
			r.launch = l
		}
	})
	return r.launch
}

func (c *cachedCatalog) Template() policy.Template {
	m, err := policy.DecodeEndpointMeta(c.rev.ep.Meta)
	if err != nil {
		return policy.UnreadableTemplate(err)
	}
	return m.Template
}

func (c *cachedCatalog) Page(i int, fn func(name string, body []byte) error) error {
	page, err := c.page(i)
	if err != nil {
		return err
	}
	var body []byte
	start := 0
	for _, t := range page.tools {
		obj := page.wire[start:t.end]
		name := obj[len(wirePrefix) : len(wirePrefix)+int(t.nameLen)]
		body = append(append(body[:0], '{'), obj[len(wirePrefix)+int(t.nameLen)+2:]...)
		if err := fn(string(name), body); err != nil {
			return err
		}
		start = int(t.end) + 1
	}
	return nil
}

// wirePrefix is how policy.AppendToolWire starts a tool's object, before
// its name.
const wirePrefix = `{"name":"`

// PageWire is mcpcore.PageWirer: page i's tools as tools/list writes
// them, the bytes the cache holds.
func (c *cachedCatalog) PageWire(i int) ([]byte, error) {
	page, err := c.page(i)
	if err != nil {
		return nil, err
	}
	return page.wire, nil
}

// page finds page i: kept, read ahead, being read, or read now.
func (c *cachedCatalog) page(i int) (*cachedPage, error) {
	r := c.rev
	r.mu.Lock()
	page, ok := r.pages[i]
	if p, ahead := r.ahead[i]; !ok && ahead {
		page, ok = p, true
		delete(r.ahead, i)
		r.aheadBytes -= p.size()
	}
	if !ok {
		page = r.recentLocked(i)
		ok = page != nil
	}
	if !ok && c.peek {
		r.mu.Unlock()
		return nil, mcpcore.ErrNotCached
	}
	var load *pageLoad
	if c.ix == nil {
		// Inside a store read (c.ix) the page is read there: waiting for
		// the reader then would hold a permit it may need.
		load = r.loading[i]
		if load != nil {
			load.claimed = true
		}
	}
	if !ok && load == nil && c.ix == nil {
		// Queued for one reader: the pages that concurrent requests ask
		// for are read in one store open (one mapping of the file, not one
		// per request), and a page asked for twice is read once.
		load = c.queueLocked(i, false)
	}
	if c.ix == nil && i+1 < r.ep.Pages {
		// A client that asked for page i asks for the next one as soon as
		// it has read this answer: reading it meanwhile takes the store
		// read out of that request's time.
		c.readAheadLocked(i + 1)
	}
	r.mu.Unlock()
	switch {
	case ok:
		return page, nil
	case load != nil:
		<-load.done
		return load.page, load.err
	default: // during the read that made the catalogue
		return c.readPage(i)
	}
}

// queueLocked queues page i for the reader, starting one if none runs.
// r.mu is held.
func (c *cachedCatalog) queueLocked(i int, ahead bool) *pageLoad {
	r := c.rev
	load := &pageLoad{i: i, ahead: ahead, done: make(chan struct{})}
	if r.loading == nil {
		r.loading = map[int]*pageLoad{}
	}
	r.loading[i] = load
	r.queue = append(r.queue, load)
	if !r.reading {
		r.reading = true
		r.readers.Add(1)
		go c.readPages()
	}
	return load
}

// readAheadLocked queues page i unless it is kept, read ahead already, or
// being read. r.mu is held.
func (c *cachedCatalog) readAheadLocked(i int) {
	r := c.rev
	_, kept := r.pages[i]
	_, ahead := r.ahead[i]
	if kept || ahead || r.loading[i] != nil || r.recentLocked(i) != nil {
		return
	}
	c.queueLocked(i, true)
}

// recentLocked is page i while something still holds it, or nil. r.mu is
// held.
func (r *cachedRev) recentLocked(i int) *cachedPage {
	w, ok := r.recent[i]
	if !ok {
		return nil
	}
	p := w.Value()
	if p == nil {
		delete(r.recent, i)
	}
	return p
}

// rememberLocked notes page i as read, without keeping it; the entries of
// freed pages are dropped as the map grows. r.mu is held.
func (r *cachedRev) rememberLocked(i int, page *cachedPage) {
	if r.recent == nil {
		r.recent = map[int]weak.Pointer[cachedPage]{}
	}
	r.recent[i] = weak.Make(page)
	if len(r.recent) < r.recentSweep {
		return
	}
	for j, w := range r.recent {
		if w.Value() == nil {
			delete(r.recent, j)
		}
	}
	r.recentSweep = max(64, 2*len(r.recent))
}

// keepAheadLocked keeps page i, read ahead, within cacheAheadBytes: pages
// read ahead earlier for walks that stopped make room, so a page read
// ahead is never read only to be dropped. r.mu is held.
func (r *cachedRev) keepAheadLocked(i int, page *cachedPage) {
	size := page.size()
	if size > cacheAheadBytes {
		return
	}
	for j, p := range r.ahead {
		if r.aheadBytes+size <= cacheAheadBytes {
			break
		}
		delete(r.ahead, j)
		r.aheadBytes -= p.size()
	}
	if r.ahead == nil {
		r.ahead = map[int]*cachedPage{}
	}
	r.ahead[i] = page
	r.aheadBytes += size
}

// takeLocked takes the next batch off the queue: the pages requests wait
// for first, in the order asked, then those read ahead. r.mu is held.
func (r *cachedRev) takeLocked() []*pageLoad {
	slices.SortStableFunc(r.queue, func(a, b *pageLoad) int {
		return cmp.Compare(b2i(a.ahead && !a.claimed), b2i(b.ahead && !b.claimed))
	})
	n := min(batchPages, len(r.queue))
	batch := append([]*pageLoad(nil), r.queue[:n]...)
	clear(r.queue[:n]) // the array must not keep the loads' pages alive
	r.queue = r.queue[n:]
	return batch
}

// readPages reads the queued pages until none is left, batchPages to a
// store read. A store read may run its view twice (a snapshot read that a
// commit raced is read again through bbolt), so what a view read is handed
// to the waiting requests and kept only once the read has returned.
func (c *cachedCatalog) readPages() {
	r := c.rev
	defer r.readers.Done()
	for {
		r.mu.Lock()
		batch := r.takeLocked()
		if len(batch) == 0 {
			r.reading = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		pages := make([]*cachedPage, len(batch))
		errs := make([]error, len(batch))
		err := c.read(func(ix *store.Index) error {
			for j, load := range batch {
				pages[j], errs[j] = c.pageOf(ix, load.i)
			}
			return nil
		})
		for j, load := range batch {
			load.page, load.err = pages[j], errs[j]
			if err != nil {
				load.page, load.err = nil, err
			}
			kept := load.err == nil && c.keepPage(load.i, load.page)
			r.mu.Lock()
			if !kept && load.err == nil && load.ahead && !load.claimed {
				r.keepAheadLocked(load.i, load.page)
			}
			delete(r.loading, load.i)
			r.mu.Unlock()
			close(load.done)
		}
	}
}

// readPage reads page i and keeps it within the bounds.
func (c *cachedCatalog) readPage(i int) (*cachedPage, error) {
	var page *cachedPage
	err := c.read(func(ix *store.Index) error {
		var err error
		page, err = c.pageOf(ix, i)
		return err
	})
	if err != nil {
		return nil, err
	}
	c.keepPage(i, page)
	return page, nil
}

// pageOf reads page i from ix, in the form tools/list writes. It is
// built in a scratch buffer and kept in one allocation of its size: a
// page is held whole while it is kept or written.
func (c *cachedCatalog) pageOf(ix *store.Index, i int) (*cachedPage, error) {
	scratch, _ := pageScratch.Get().(*[]byte)
	if scratch == nil {
		scratch = new([]byte)
	}
	defer pageScratch.Put(scratch)
	wire := (*scratch)[:0]
	tools := make([]pageTool, 0, store.PageTools)
	err := ix.Page(c.rev.ep.Name, i, func(name string, body []byte) error {
		if err := policy.CheckToolBody(name, body); err != nil {
			return err
		}
		if len(wire) > 0 {
			wire = append(wire, ',')
		}
		wire = policy.AppendToolWire(wire, name, body)
		tools = append(tools, pageTool{end: int32(len(wire)), nameLen: int32(len(name))})
		return nil
	})
	*scratch = wire
	if err != nil {
		return nil, err
	}
	return &cachedPage{wire: bytes.Clone(wire), tools: tools}, nil
}

// pageScratch holds the buffers pages are built in.
var pageScratch sync.Pool

// keepPage keeps page i when the bounds allow, and says whether it is kept.
func (c *cachedCatalog) keepPage(i int, page *cachedPage) bool {
	size := page.size()
	r := c.rev
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, again := r.pages[i]; again {
		return true
	}
	if r.pageBytes+size > cachePageBytes {
		r.rememberLocked(i, page)
		return false
	}
	r.pages[i] = page
	r.pageBytes += size
	return true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (c *cachedCatalog) Resolve(name string) (*mcpcore.Resolved, error) {
	r := c.rev
	r.mu.Lock()
	res, ok := r.tools[name]
	r.mu.Unlock()
	if ok {
		return res, nil
	}
	err := c.read(func(ix *store.Index) error {
		sc := &storeCatalog{h: c.cache.h, ix: ix, endpoint: r.endpoint, ep: r.ep, has: r.has}
		var err error
		res, err = sc.Resolve(name)
		return err
	})
	if err != nil || res == nil {
		return nil, err // unknown names are not kept: clients choose them
	}
	r.mu.Lock()
	if len(r.tools) >= cacheTools {
		clear(r.tools)
	}
	r.tools[name] = res
	r.mu.Unlock()
	return res, nil
}

func (c *cachedCatalog) Digest() ([32]byte, error) {
	r := c.rev
	r.mu.Lock()
	d := r.digest
	r.mu.Unlock()
	if d != nil {
		return *d, nil
	}
	var sum [32]byte
	err := c.read(func(ix *store.Index) error {
		var err error
		sum, err = mcpcore.DigestPages(&storeCatalog{h: c.cache.h, ix: ix, endpoint: r.endpoint, ep: r.ep, has: r.has})
		return err
	})
	if err != nil {
		return sum, err
	}
	r.mu.Lock()
	r.digest = &sum
	r.mu.Unlock()
	return sum, nil
}

// Discovery is the endpoint's discovery as the cached profile has it.
func (c *cachedCatalog) Discovery() *policy.Discovery {
	if l := c.Launch(); l != nil && c.rev.has {
		return l.Discovery
	}
	return nil
}

// Tool reads one tool object from the store (two records); nothing is
// kept: describe is one request per tool an agent picked, not a walk.
func (c *cachedCatalog) Tool(name string) (obj []byte, ok bool, err error) {
	r := c.rev
	err = c.read(func(ix *store.Index) error {
		obj, ok, err = (&storeCatalog{h: c.cache.h, ix: ix, endpoint: r.endpoint, ep: r.ep, has: r.has}).Tool(name)
		return err
	})
	return obj, ok, err
}

// Search ranks the endpoint's tools from the revision's search records,
// as storeCatalog does: a bounded read per search, nothing kept.
func (c *cachedCatalog) Search(query string, limit int) (hits []mcpcore.SearchHit, err error) {
	r := c.rev
	err = c.read(func(ix *store.Index) error {
		hits, err = (&storeCatalog{h: c.cache.h, ix: ix, endpoint: r.endpoint, ep: r.ep, has: r.has}).Search(query, limit)
		return err
	})
	return hits, err
}
