package store

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/search"
)

// Index reads one indexed revision inside one read-only transaction. It is
// valid only during the ViewRevision or ViewActive callback that received
// it, which must not call the store. Every method reads the few records it
// names, never the whole revision, except those that walk (Routes, Tools).
type Index struct {
	s      *Store
	tx     txn
	n      uint64
	gen    []byte
	hdr    *header
	gens   bucket
	object bucket

	// the page object read last, valid for the view
	lastPage string
	lastObj  []byte
}

func (ix *Index) get(b bucket, k []byte) []byte {
	ix.s.reads.n.Add(1)
	return b.Get(k)
}

func (ix *Index) broken(what string) error {
	return ix.s.internal("revision "+RevisionID(ix.n)+": "+what+" is unreadable", nil)
}

func notIndexed(n uint64) error {
	return kernel.Errorf(kernel.CodeUnsupported, "%s", "revision "+RevisionID(n)+" is stored in the schema-1 layout").
		Wrap(ErrNotIndexed)
}

func (s *Store) openIndex(tx txn, n uint64) (*Index, error) {
	gens, object := tx.Bucket(bucketGens), tx.Bucket(bucketObjects)
	// A revision's generation never changes once it has one, so a handle
	// that read it once skips the record. Prune marks a removed revision's
	// generation pending in the transaction that removes the record, then
	// deletes its header: either way the long way reports it missing.
	if v, ok := s.revGens.Load(n); ok && gens != nil && object != nil && !pendingGen(tx, v.([]byte)) {
		gen := v.([]byte)
		ix := &Index{s: s, tx: tx, n: n, gen: gen, gens: gens, object: object}
		if h, ok := s.header(n, gen, ix.get(gens, genKey(gen, tagHeader))); ok {
			ix.hdr = h
			return ix, nil
		}
	}
	s.reads.n.Add(1)
	raw := tx.Bucket(bucketRevisions).Get(itob(n))
	if raw == nil {
		return nil, revisionNotFound(n)
	}
	id, index, err := revisionIndex(raw)
	if err != nil {
		// Not the shape this code writes: the full decoder says why.
		var rec struct {
			ID    string `json:"id"`
			Index string `json:"index"`
		}
		if err := s.decode("revision "+RevisionID(n), raw, &rec); err != nil {
			return nil, err
		}
		id, index = rec.ID, rec.Index
	}
	if index == "" {
		return nil, notIndexed(n)
	}
	gen, err := parseGen(index)
	if err != nil {
		return nil, s.internal("revision "+id, err)
	}
	s.revGens.Store(n, gen)
	ix := &Index{s: s, tx: tx, n: n, gen: gen, gens: gens, object: object}
	if ix.gens == nil || ix.object == nil {
		return nil, ix.broken("index")
	}
	h, ok := s.header(n, gen, ix.get(ix.gens, genKey(gen, tagHeader)))
	if !ok {
		return nil, ix.broken("index header")
	}
	ix.hdr = h
	return ix, nil
}

// sharedHeader is one revision's decoded header, shared by every open of
// it through one handle: raw is the record it was decoded from (its
// profile and metadata are slices of raw), and an open uses it only when
// the record it reads is the same, byte for byte.
type sharedHeader struct {
	n   uint64
	gen []byte
	raw []byte
	hdr *header
}

// sharedHeaders is how many revisions' headers a handle keeps decoded,
// each of at most sharedHeaderBytes: a larger one (an endpoint's metadata
// lists every command it withholds) is decoded at every open instead of
// held for the life of the handle.
const (
	sharedHeaders     = 4
	sharedHeaderBytes = 1 << 20
)

// header decodes raw, revision n's header record in generation gen, or
// returns the decoding it shares from an earlier open of the same record.
// What it returns is never modified. A record that does not decode is
// never kept: each open reports it.
func (s *Store) header(n uint64, gen, raw []byte) (*header, bool) {
	slot := &s.hdrs[n%sharedHeaders]
	if e := slot.Load(); e != nil && e.n == n && bytes.Equal(e.gen, gen) && bytes.Equal(e.raw, raw) {
		return e.hdr, true
	}
	if len(raw) > sharedHeaderBytes {
		return decodeHeader(raw)
	}
	own := clone(raw)
	h, ok := decodeHeaderWith(own, func(b []byte) []byte { return b })
	if !ok {
		return nil, false
	}
	slot.Store(&sharedHeader{n: n, gen: clone(gen), raw: own, hdr: h})
	return h, true
}

func pendingGen(tx txn, gen []byte) bool {
	p := tx.Bucket(bucketPending)
	return p == nil || p.Get(gen) != nil
}

// revisionIndex reads only the id and index members of a revision record,
// stopping once it has both: they come before the releases list (one name
// per bound release) in records written since (revisionRec), which is then
// never read; older records have the list skipped, not decoded.
func revisionIndex(raw []byte) (id, index string, err error) {
	d := jsontext.NewDecoder(bytes.NewReader(raw))
	if t, err := d.ReadToken(); err != nil || t.Kind() != '{' {
		return "", "", errors.Join(errors.New("a revision record is not an object"), err)
	}
	var haveID, haveIndex bool
	for !haveID || !haveIndex {
		if d.PeekKind() == '}' {
			break
		}
		tok, err := d.ReadToken()
		if err != nil {
			return "", "", err
		}
		name := tok.String()
		var dst *string
		switch name {
		case "id":
			dst, haveID = &id, true
		case "index":
			dst, haveIndex = &index, true
		default:
			if err := d.SkipValue(); err != nil {
				return "", "", err
			}
			continue
		}
		v, err := d.ReadToken()
		if err != nil {
			return "", "", err
		}
		if v.Kind() != '"' {
			return "", "", errors.New("revision member " + name + " is not a string")
		}
		*dst = v.String()
	}
	return id, index, nil
}

// ViewRevision calls fn with revision n's index. A revision in the schema-1
// layout is a CodeUnsupported error wrapping ErrNotIndexed.
func (s *Store) ViewRevision(n uint64, fn func(ix *Index) error) error {
	found := false
	_, err := s.view(func(tx txn) error {
		ix, err := s.openIndex(tx, n)
		if err != nil {
			return err
		}
		found = true
		return fn(ix)
	})
	if err == nil && !found {
		err = revisionNotFound(n)
	}
	return err
}

// ViewActive calls fn with the active revision's index, in the same
// transaction that reads the active pointer. It reports false, without
// calling fn, when nothing is published.
func (s *Store) ViewActive(fn func(ix *Index) error) (bool, error) {
	published := false
	_, err := s.view(func(tx txn) error {
		s.reads.n.Add(1)
		n := activeNumber(tx)
		if n == 0 {
			return nil
		}
		published = true
		ix, err := s.openIndex(tx, n)
		if err != nil {
			return err
		}
		return fn(ix)
	})
	return published, err
}

// Number is the revision number.
func (ix *Index) Number() uint64 { return ix.n }

// Revision is the revision id ("r7").
func (ix *Index) Revision() string { return ix.hdr.Revision }

// Profile is the revision's profile (opaque). It may be shared with other
// opens of the revision: the caller must not modify it.
func (ix *Index) Profile() []byte { return ix.hdr.Profile }

// Endpoints lists the revision's endpoints in publish order (shared, like
// Profile: not to be modified).
func (ix *Index) Endpoints() []EndpointInfo { return ix.hdr.Endpoints }

// Endpoint finds one endpoint.
func (ix *Index) Endpoint(name string) (EndpointInfo, bool) {
	for _, e := range ix.hdr.Endpoints {
		if e.Name == name {
			return e, true
		}
	}
	return EndpointInfo{}, false
}

// Releases returns the bound releases record (opaque).
func (ix *Index) Releases() ([]byte, error) {
	v := ix.get(ix.object, append([]byte{objReleases}, ix.hdr.Releases...))
	if v == nil {
		return nil, ix.broken("releases")
	}
	return clone(v), nil
}

// Route finds the route of exactly these words.
func (ix *Index) Route(words []string) (Route, bool, error) {
	if validWords(words) != nil {
		return Route{}, false, nil
	}
	v := ix.get(ix.gens, routeKey(ix.gen, words))
	if v == nil {
		return Route{}, false, nil
	}
	r, ok := decodeRoute(append([]string(nil), words...), v)
	if !ok {
		return Route{}, false, ix.broken("route " + strings.Join(words, " "))
	}
	return r, true, nil
}

// Children calls fn for each route exactly one word below prefix, in word
// order; an empty prefix gives the top-level routes. It reads only them.
func (ix *Index) Children(prefix []string, fn func(Route) error) error {
	k := routeKey(ix.gen, prefix)
	if len(prefix) == 0 {
		k = genKey(ix.gen, tagRoute, []byte{1})
	} else {
		k[len(ix.gen)+1]++ // one word deeper
		k = append(k, 0)
	}
	return ix.walk(k, func(key, v []byte) error {
		r, ok := decodeRoute(routeWords(key, len(ix.gen)), v)
		if !ok {
			return ix.broken("route")
		}
		return fn(r)
	})
}

// Routes calls fn for every route, shorter paths first.
func (ix *Index) Routes(fn func(Route) error) error {
	return ix.walk(genKey(ix.gen, tagRoute), func(key, v []byte) error {
		r, ok := decodeRoute(routeWords(key, len(ix.gen)), v)
		if !ok {
			return ix.broken("route")
		}
		return fn(r)
	})
}

// Cursor is where a bounded walk (RoutesFrom, ToolsFrom) stopped, for a
// later one, in another read of the same revision, to go on from; the
// zero Cursor is the start, and Done reports the end.
type Cursor struct {
	key  []byte
	done bool
}

// Done reports whether the walk has nothing left.
func (c Cursor) Done() bool { return c.done }

// RoutesFrom is Routes from c on, at most n of them: it returns where the
// next call goes on. A long walk in several reads keeps little of the
// store file mapped at once.
func (ix *Index) RoutesFrom(c Cursor, n int, fn func(Route) error) (Cursor, error) {
	return ix.walkFrom(genKey(ix.gen, tagRoute), c, n, func(key, v []byte) error {
		r, ok := decodeRoute(routeWords(key, len(ix.gen)), v)
		if !ok {
			return ix.broken("route")
		}
		return fn(r)
	})
}

// ToolsFrom is Tools from c on, at most n of them (RoutesFrom).
func (ix *Index) ToolsFrom(endpoint string, c Cursor, n int, fn func(Tool) error) (Cursor, error) {
	p := endpointPrefix(ix.gen, tagTool, endpoint)
	return ix.walkFrom(p, c, n, func(k, v []byte) error {
		name := string(k[len(p):])
		t, ok := decodeTool(name, v)
		if !ok {
			return ix.broken("tool " + name)
		}
		return fn(t)
	})
}

// walkFrom is walk from c on (a key under prefix), at most n records.
func (ix *Index) walkFrom(prefix []byte, c Cursor, n int, fn func(k, v []byte) error) (Cursor, error) {
	if c.done {
		return c, nil
	}
	start := prefix
	if c.key != nil {
		start = c.key
	}
	cur := ix.gens.Cursor()
	k, v := cur.Seek(start)
	for i := 0; k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
		if i == n {
			return Cursor{key: clone(k)}, nil
		}
		i++
		ix.s.reads.n.Add(1)
		if err := fn(k, v); err != nil {
			return c, err
		}
	}
	return Cursor{done: true}, nil
}

func (ix *Index) walk(prefix []byte, fn func(k, v []byte) error) error {
	c := ix.gens.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		ix.s.reads.n.Add(1)
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

// Decl returns a declaration record by ref (a copy).
func (ix *Index) Decl(ref string) ([]byte, error) {
	v := ix.get(ix.object, append([]byte{objDecl}, ref...))
	if v == nil {
		return nil, ix.broken("a declaration")
	}
	return clone(v), nil
}

// Body returns a tool's body (a copy): from its page's object if a page
// lists it, else its own object.
func (ix *Index) Body(t Tool) ([]byte, error) {
	if t.page == "" {
		v := ix.get(ix.object, append([]byte{objBody}, t.Body...))
		if v == nil {
			return nil, ix.broken("a tool body")
		}
		return clone(v), nil
	}
	obj, err := ix.pageObject(t.page)
	if err != nil {
		return nil, err
	}
	body, ok := pageBody(obj, t.slot)
	if !ok {
		return nil, ix.broken("tool " + t.Name + "'s body")
	}
	return clone(body), nil
}

// BodySum is the SHA-256 of the tool body that ref names, known without
// reading the body: bodies are stored under the hash of their content,
// which the store's check verifies. False: ref is not such a hash.
func (ix *Index) BodySum(ref string) ([sha256.Size]byte, bool) {
	var sum [sha256.Size]byte
	if len(ref) != refLen {
		return sum, false
	}
	copy(sum[:], ref)
	return sum, true
}

// Tool finds one tool of an endpoint by its exact name.
func (ix *Index) Tool(endpoint, name string) (Tool, bool, error) {
	v := ix.get(ix.gens, genKey(ix.gen, tagTool, []byte(endpoint), []byte{0}, []byte(name)))
	if v == nil {
		return Tool{}, false, nil
	}
	t, ok := decodeTool(name, v)
	if !ok {
		return Tool{}, false, ix.broken("tool " + name)
	}
	return t, true, nil
}

// Tools calls fn for every tool of an endpoint, by name.
func (ix *Index) Tools(endpoint string, fn func(Tool) error) error {
	p := endpointPrefix(ix.gen, tagTool, endpoint)
	return ix.walk(p, func(k, v []byte) error {
		name := string(k[len(p):])
		t, ok := decodeTool(name, v)
		if !ok {
			return ix.broken("tool " + name)
		}
		return fn(t)
	})
}

// Page calls fn for each tool of list page i of an endpoint, in order,
// with its name and body. body is the store's memory: valid only during fn.
// A page is its record and its bodies' object; a page written before those
// objects reads each body.
func (ix *Index) Page(endpoint string, i int, fn func(name string, body []byte) error) error {
	entries, bodies, err := ix.pageRecord(endpoint, i)
	if err != nil {
		return err
	}
	if bodies != "" {
		obj, err := ix.pageObject(bodies)
		if err != nil {
			return err
		}
		ok, err := pageBodies(obj, len(entries), func(j int, body []byte) error { return fn(entries[j].name, body) })
		if !ok {
			return ix.broken("tool page")
		}
		return err
	}
	for _, e := range entries {
		body := ix.get(ix.object, append([]byte{objBody}, e.body...))
		if body == nil {
			return ix.broken("a tool body")
		}
		if err := fn(e.name, body); err != nil {
			return err
		}
	}
	return nil
}

func (ix *Index) pageRecord(endpoint string, i int) ([]pageEntry, string, error) {
	v := ix.get(ix.gens, genKey(ix.gen, tagPage, []byte(endpoint), []byte{0}, itob(uint64(i))))
	if v == nil {
		return nil, "", ix.broken("tool page")
	}
	entries, bodies, ok := decodePage(v)
	if !ok {
		return nil, "", ix.broken("tool page")
	}
	return entries, bodies, nil
}

// pageObject reads a page's bodies object. A snapshot read does not keep
// it among the pages every view reads: each is read once per walk, and the
// servers' cache holds the pages they answer; what it returns is valid
// until the next page object is read. The last one read is held for the
// view: a walk of tools by name reads each page's once.
func (ix *Index) pageObject(ref string) ([]byte, error) {
	if ref == ix.lastPage && ix.lastObj != nil {
		return ix.lastObj, nil
	}
	if t, ok := ix.tx.(transientReader); ok {
		t.transient(true)
		defer t.transient(false)
	}
	v := ix.get(ix.object, append([]byte{objPage}, ref...))
	if v == nil {
		return nil, ix.broken("a tool page's bodies")
	}
	ix.lastPage, ix.lastObj = ref, v
	return v, nil
}

// transientReader is a transaction told that what it reads next is read
// once, not by every view (a snapshot read then does not keep it).
type transientReader interface{ transient(on bool) }

// ErrNoSearch is returned (wrapped in a CodeUnsupported kernel.Error) for
// a search on an endpoint of a revision published before search records.
var ErrNoSearch = errors.New("it was published before tool search")

func (ix *Index) searchable(endpoint string) error {
	e, ok := ix.Endpoint(endpoint)
	if !ok {
		return kernel.Errorf(kernel.CodeNotFound, "revision %s has no endpoint %q", ix.hdr.Revision, endpoint)
	}
	if !e.Search {
		return kernel.Errorf(kernel.CodeUnsupported, "revision %s has no search index for endpoint %q", ix.hdr.Revision, endpoint).
			WithHint("run 'rukh publish': it publishes the same tools in a revision with one").Wrap(ErrNoSearch)
	}
	return nil
}

// Postings returns an endpoint's search postings block for term (a copy);
// false: no tool of the endpoint has the term.
func (ix *Index) Postings(endpoint, term string) ([]byte, bool, error) {
	if err := ix.searchable(endpoint); err != nil {
		return nil, false, err
	}
	v := ix.get(ix.gens, genKey(ix.gen, tagSearch, []byte(endpoint), []byte{0}, []byte(term)))
	if v == nil {
		return nil, false, nil
	}
	return clone(v), true, nil
}

// SearchDoc returns the name of an endpoint's tool number doc, as its
// search postings number it; false: no such tool.
func (ix *Index) SearchDoc(endpoint string, doc uint32) (string, bool, error) {
	if err := ix.searchable(endpoint); err != nil {
		return "", false, err
	}
	v := ix.get(ix.gens, genKey(ix.gen, tagName, []byte(endpoint), []byte{0}, docKey(int(doc))))
	if v == nil {
		return "", false, nil
	}
	return string(v), true, nil
}

// Search ranks an endpoint's tools for query (at most limit): it reads one
// postings record per query term and one name per hit.
func (ix *Index) Search(endpoint, query string, limit int) ([]search.Hit, error) {
	if err := ix.searchable(endpoint); err != nil {
		return nil, err
	}
	hits, err := search.Search(query, limit, func(term string) ([]byte, bool, error) {
		return ix.Postings(endpoint, term)
	}, func(doc uint32) (string, error) {
		name, ok, err := ix.SearchDoc(endpoint, doc)
		if err == nil && !ok {
			err = ix.brokenSearch(endpoint, fmt.Errorf("a posting names tool number %d, which it does not have", doc))
		}
		return name, err
	})
	if ke := (*kernel.Error)(nil); err != nil && !errors.As(err, &ke) {
		err = ix.brokenSearch(endpoint, err) // a block that does not decode
	}
	return hits, err
}

// FoundTool is one hit of SearchTools: its rank and score, its tool
// record and the tool's body (its object without the name).
type FoundTool struct {
	search.Hit
	Tool Tool
	Body []byte
}

// SearchTools is Search with each hit's tool record and body, what both
// an agent's search and the owner's `rukh tools --search` show.
func (ix *Index) SearchTools(endpoint, query string, limit int) ([]FoundTool, error) {
	hits, err := ix.Search(endpoint, query, limit)
	if err != nil {
		return nil, err
	}
	out := make([]FoundTool, 0, len(hits))
	for _, h := range hits {
		t, ok, err := ix.Tool(endpoint, h.Name)
		if err == nil && !ok {
			err = ix.brokenSearch(endpoint, fmt.Errorf("a posting names tool %q, which it does not have", h.Name))
		}
		if err != nil {
			return nil, err
		}
		body, err := ix.Body(t)
		if err != nil {
			return nil, err
		}
		out = append(out, FoundTool{Hit: h, Tool: t, Body: body})
	}
	return out, nil
}

// brokenSearch is the error of an endpoint's search records that are not
// what a publish wrote.
func (ix *Index) brokenSearch(endpoint string, err error) error {
	return kernel.Errorf(kernel.CodeInternal, "revision %s: the search index of endpoint %q is unreadable", RevisionID(ix.n), endpoint).
		AtPath(ix.s.be.where()).Wrap(err).WithHint("run 'rukh doctor' to check the store, and 'rukh publish --force' to publish the same tools with a new index")
}
