package store

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/search"
)

// The indexed revision layout (schema 3).
//
// A published revision is not one value but an index: small records, each
// read on its own, so a CLI command, a tools/list page or a tools/call
// touches a handful of them whatever the size of the catalogue.
//
//	bucket "gens": key = generation id (16 random bytes) + tag + rest
//	  'h'                          header: revision id, profile, endpoints
//	                               (meta, tool and page counts)
//	  'r' depth words…             one CLI route, words joined by 0x00;
//	                               the depth byte keeps a group's children
//	                               contiguous and apart from grandchildren
//	  't' endpoint 0x00 name       one MCP tool: command, release, refs; a
//	                               listed tool also names its page's 'g'
//	                               object and its place there (its body is
//	                               stored only there)
//	  'p' endpoint 0x00 page(8)    one tools/list page: ≤ 32 names + body refs
//	                               of listed tools only (a progressive
//	                               endpoint lists a few; 't' has them all),
//	                               then the ref of its 'g' object (absent in
//	                               records written before schema 3, whose
//	                               bodies are all 'b' objects)
//	  's' endpoint 0x00 term       the term's search postings: ≤ 1024 tool
//	                               numbers with their scores, best first
//	  'n' endpoint 0x00 number(4)  the name of the endpoint's tool number n
//	                               (tools numbered in their order, toolBefore)
//	bucket "objects": key = kind + sha256(content) → content, shared by
//	  every revision that binds it: 'd' declarations, 'b' tool bodies
//	  (a tool object without its name, which alone depends on the revision),
//	  'l' the bound releases (opaque JSON); the header names its ref;
//	  'g' + sha256(the page's body refs, in order): a list page's bodies
//	  after a table of where each ends, so a page the servers do not hold
//	  is two reads, not one per tool, and one body is read without the
//	  others; the one home of a listed tool's body (a 'b' object holds
//	  only bodies of tools no page lists). Names stay in the page record:
//	  pages of unchanged bodies are one object whatever their names, found
//	  by their refs before a publish builds them; pages end where their
//	  tools' commands say (pageCut), so one tool added or removed makes
//	  one new page object, not one for every page after it;
//	  'k' + sha256(analyser version ‖ a tool body's hash): the body's search
//	  terms, so that a publish analyses only bodies no revision had with
//	  the same analyser (keyed by the body, not its own content; a missing
//	  one is made again, one of another analyser is pruned once unused)
//
// The header says which endpoints have search records: an endpoint of a
// revision published before them has none, and a search there is refused.
//	bucket "pending": generation id → start time of a publish still writing
//
// A generation is written in bounded chunks (many small transactions) and
// becomes a revision only in the final transaction, which records it and
// moves the active pointer: the one small compare-and-swap of the head.
// Until then nothing reads it, and a crash leaves at most an unreferenced
// generation (marked pending) that prune removes. The same shape works on a
// distributed store whose transactions are small (etcd: 128 ops, 1.5 MiB).
//
// The store owns these keys and records; what is inside a declaration, a
// tool body, the profile and the releases is policy's, opaque here.

var (
	bucketGens    = []byte("gens")
	bucketObjects = []byte("objects")
	bucketPending = []byte("pending")
)

const (
	tagHeader = 'h'
	tagRoute  = 'r'
	tagTool   = 't'
	tagPage   = 'p'
	tagSearch = 's'
	tagName   = 'n'

	objDecl     = 'd'
	objBody     = 'b'
	objReleases = 'l'
	objTerms    = 'k'
	objPage     = 'g'

	genIDLen = 16
	refLen   = sha256.Size
)

// Page bounds of tools/list (docs/design.md, Page bounds): at most PageTools
// tools and PageBytes of tool objects per page. The writer cuts pages at
// publish.
const (
	PageTools = 32
	PageBytes = 1 << 20
)

// Where the writer ends a list page, besides the bounds: after a tool once
// the page holds pageMinTools, when the hash of the tool's command
// identity ends in pageCutMask's bits. Cut by what the tools are, one tool
// added or removed changes the page it falls in and no other: every later
// page ends where it did, so its object is the one stored already. Not by
// the tool's name: a name may carry the revision, and then every page
// would end elsewhere in every revision.
const (
	pageMinTools = 12
	pageCutMask  = 15
)

// toolBefore reports whether the tool named a of command ca comes before
// the one named b of cb in an endpoint's tool order (kernel.CompareTools),
// by which policy sorts them; the store checks it.
func toolBefore(a, ca, b, cb string) bool {
	return kernel.CompareTools(a, ca, b, cb) < 0
}

// pageCut reports whether a list page ends after the tool of command,
// once it holds pageMinTools.
func pageCut(command string) bool {
	sum := sha256.Sum256([]byte(command))
	return sum[0]&pageCutMask == pageCutMask
}

// Route kinds as stored (the same words policy uses).
const (
	RouteCommand = "command"
	RouteAlias   = "alias"
	RouteGroup   = "group"
)

var routeKinds = map[string]byte{RouteCommand: 'c', RouteAlias: 'a', RouteGroup: 'g'}

func routeKindName(b byte) string {
	switch b {
	case 'c':
		return RouteCommand
	case 'a':
		return RouteAlias
	case 'g':
		return RouteGroup
	}
	return ""
}

// ErrNotIndexed is returned (wrapped in a CodeUnsupported kernel.Error)
// for a revision written by the schema-1 layout: one binding blob. Its
// reader upgrades it with AttachIndex.
var ErrNotIndexed = errors.New("revision is stored in the schema-1 layout")

// reads counts index and object records read, for tests that assert a
// request touches O(1) records (never the whole revision).
type counter struct{ n atomic.Int64 }

// RecordsRead returns how many index records and objects this store handle
// has read so far.
func (s *Store) RecordsRead() int64 { return s.reads.n.Load() }

// Ref is the content address of an object: its kind and sha256.
func objectKey(kind byte, content []byte) []byte {
	sum := sha256.Sum256(content)
	k := make([]byte, 1+refLen)
	k[0] = kind
	copy(k[1:], sum[:])
	return k
}

// ---- record encoding: uvarint-length-prefixed fields ----

type enc []byte

func (e enc) uint(v uint64) enc { return binary.AppendUvarint(e, v) }
func (e enc) bytes(b []byte) enc {
	return append(binary.AppendUvarint(e, uint64(len(b))), b...)
}
func (e enc) str(s string) enc { return append(binary.AppendUvarint(e, uint64(len(s))), s...) }

type dec struct {
	b   []byte
	err bool
}

func (d *dec) uint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) bytes() []byte {
	n := d.uint()
	if d.err || n > uint64(len(d.b)) {
		d.err, d.b = true, nil
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *dec) str() string { return string(d.bytes()) }

// ---- keys ----

func genKey(gen []byte, tag byte, rest ...[]byte) []byte {
	n := len(gen) + 1
	for _, r := range rest {
		n += len(r)
	}
	k := make([]byte, 0, n)
	k = append(append(k, gen...), tag)
	for _, r := range rest {
		k = append(k, r...)
	}
	return k
}

func routeKey(gen []byte, words []string) []byte {
	return genKey(gen, tagRoute, []byte{byte(len(words))}, []byte(strings.Join(words, "\x00")))
}

func endpointPrefix(gen []byte, tag byte, endpoint string) []byte {
	return genKey(gen, tag, []byte(endpoint), []byte{0})
}

// validWords reports whether words can be a route key: 1–255 words, none
// empty or holding a NUL byte.
func validWords(words []string) error {
	if len(words) == 0 || len(words) > 255 {
		return fmt.Errorf("a route has %d words", len(words))
	}
	for _, w := range words {
		if w == "" || strings.IndexByte(w, 0) >= 0 {
			return fmt.Errorf("route word %q is empty or holds a NUL byte", w)
		}
	}
	return nil
}

// ---- records ----

// EndpointInfo is one endpoint of an indexed revision.
type EndpointInfo struct {
	Name  string
	Meta  []byte // opaque (policy): namespace, tool names, subject, template
	Tools int    // every tool, listed or not
	Pages int    // list pages, of listed tools
	// Search: the endpoint has search records (false in revisions
	// published before them).
	Search bool
}

type header struct {
	Revision  string
	Profile   []byte
	Releases  string // ref of the releases object
	Endpoints []EndpointInfo
}

func (h *header) encode() []byte {
	e := enc(nil).uint(1).str(h.Revision).bytes(h.Profile).str(h.Releases).uint(uint64(len(h.Endpoints)))
	for _, ep := range h.Endpoints {
		e = e.str(ep.Name).bytes(ep.Meta).uint(uint64(ep.Tools)).uint(uint64(ep.Pages))
	}
	// Appended, so older readers, which stop after the endpoints, read on.
	for _, ep := range h.Endpoints {
		flags := uint64(0)
		if ep.Search {
			flags |= 1
		}
		e = e.uint(flags)
	}
	return e
}

func decodeHeader(b []byte) (*header, bool) { return decodeHeaderWith(b, clone) }

// decodeHeaderWith decodes a header, its profile and endpoint metadata
// kept through keep: a copy, or b itself when b is the caller's own.
func decodeHeaderWith(b []byte, keep func([]byte) []byte) (*header, bool) {
	d := dec{b: b}
	if d.uint() != 1 {
		return nil, false
	}
	h := &header{Revision: d.str(), Profile: keep(d.bytes()), Releases: d.str()}
	n := d.uint()
	if d.err || n > uint64(len(b)) {
		return nil, false
	}
	h.Endpoints = make([]EndpointInfo, 0, n)
	for range n {
		h.Endpoints = append(h.Endpoints, EndpointInfo{Name: d.str(), Meta: keep(d.bytes()), Tools: int(d.uint()), Pages: int(d.uint())})
	}
	if !d.err && len(d.b) > 0 {
		for i := range h.Endpoints {
			h.Endpoints[i].Search = d.uint()&1 != 0
		}
	}
	return h, !d.err
}

// Route is one CLI word path of an indexed revision.
type Route struct {
	Words   []string
	Kind    string // RouteCommand, RouteAlias, RouteGroup
	Command string // command identity; empty for groups
	Decl    string // declaration ref; empty for groups
	Line    string // the one-line summary --help shows for it
}

func (r *Route) encode() []byte {
	return enc(nil).uint(uint64(routeKinds[r.Kind])).str(r.Command).str(r.Decl).str(r.Line)
}

func decodeRoute(words []string, b []byte) (Route, bool) {
	d := dec{b: b}
	r := Route{Words: words, Kind: routeKindName(byte(d.uint())), Command: d.str(), Decl: d.str(), Line: d.str()}
	return r, !d.err && r.Kind != ""
}

func routeWords(key []byte, genLen int) []string {
	rest := key[genLen+2:]
	return strings.Split(string(rest), "\x00")
}

// Tool is one MCP tool of an endpoint in an indexed revision.
type Tool struct {
	Name    string
	Command string // command identity
	Release string // name@version
	Decl    string // declaration ref
	Body    string // tool body ref
	// Security is the command's level on the endpoint; "" is standard.
	Security string

	// page is the ref of the 'g' object that holds the body of a listed
	// tool, and slot its place there; "": the body is a 'b' object.
	page string
	slot int
}

func (t *Tool) encode() []byte {
	e := enc(nil).str(t.Command).str(t.Release).str(t.Decl).str(t.Body)
	if t.Security != "" || t.page != "" {
		e = e.str(t.Security) // absent for standard, and in older records
	}
	if t.page != "" {
		e = e.str(t.page).uint(uint64(t.slot))
	}
	return e
}

func decodeTool(name string, b []byte) (Tool, bool) {
	d := dec{b: b}
	t := Tool{Name: name, Command: d.str(), Release: d.str(), Decl: d.str(), Body: d.str()}
	if !d.err && len(d.b) > 0 {
		t.Security = d.str()
	}
	if !d.err && len(d.b) > 0 {
		t.page = d.str()
		slot := d.uint()
		if slot >= PageTools || len(t.page) != refLen {
			return t, false
		}
		t.slot = int(slot)
	}
	return t, !d.err && len(d.b) == 0
}

// pageEntry is one tool of a list page.
type pageEntry struct{ name, body string }

// encodePage is a page record: its entries, then the ref of its bodies'
// object. Appended, so older readers, which stop after the entries, read
// each body instead.
func encodePage(entries []pageEntry, bodies string) []byte {
	e := enc(nil).uint(uint64(len(entries)))
	for _, p := range entries {
		e = e.str(p.name).str(p.body)
	}
	if bodies != "" {
		e = e.str(bodies)
	}
	return e
}

// decodePage decodes a page record; bodies is "" in records written
// before page objects.
func decodePage(b []byte) (entries []pageEntry, bodies string, ok bool) {
	d := dec{b: b}
	n := d.uint()
	if d.err || n > PageTools {
		return nil, "", false
	}
	out := make([]pageEntry, 0, n)
	for range n {
		out = append(out, pageEntry{name: d.str(), body: d.str()})
	}
	if !d.err && len(d.b) > 0 {
		bodies = d.str()
	}
	return out, bodies, !d.err && len(d.b) == 0
}

// A page object is its bodies' count (one byte), the end of each body
// (4 bytes big-endian, from the end of this table), then the bodies in the
// page's order: one body is found without reading those before it.
func pageObjectHead(n int) int { return 1 + 4*n }

// encodePageObject is the page object of bodies.
func encodePageObject(bodies [][]byte) []byte {
	size := pageObjectHead(len(bodies))
	for _, b := range bodies {
		size += len(b)
	}
	obj := make([]byte, pageObjectHead(len(bodies)), size)
	obj[0] = byte(len(bodies))
	end := 0
	for i, b := range bodies {
		end += len(b)
		binary.BigEndian.PutUint32(obj[1+4*i:], uint32(end))
	}
	for _, b := range bodies {
		obj = append(obj, b...)
	}
	return obj
}

// pageObjectEnds checks a page object's table: false if it does not hold
// exactly n bodies (n < 0: any number) that end where its table says.
func pageObjectEnds(obj []byte, n int) (int, bool) {
	if len(obj) == 0 || n >= 0 && int(obj[0]) != n || obj[0] > PageTools {
		return 0, false
	}
	n = int(obj[0])
	head := pageObjectHead(n)
	if len(obj) < head {
		return 0, false
	}
	prev := uint32(0)
	for i := range n {
		end := binary.BigEndian.Uint32(obj[1+4*i:])
		if end < prev {
			return 0, false
		}
		prev = end
	}
	return n, uint64(prev) == uint64(len(obj)-head)
}

// pageObjectBody is body i of a page object whose table has n entries:
// bounds-checked against the object, not against the other entries.
func pageObjectBody(obj []byte, n, i int) ([]byte, bool) {
	head := pageObjectHead(n)
	start := uint32(0)
	if i > 0 {
		start = binary.BigEndian.Uint32(obj[1+4*(i-1):])
	}
	end := binary.BigEndian.Uint32(obj[1+4*i:])
	if start > end || uint64(end) > uint64(len(obj)-head) {
		return nil, false
	}
	return obj[head+int(start) : head+int(end) : head+int(end)], true
}

// pageRef is the ref of the page object of entries' bodies, in order:
// the hash of their refs, known from the page's record without its bodies.
func pageRef(entries []pageEntry) [refLen]byte {
	h := sha256.New()
	for _, e := range entries {
		h.Write([]byte(e.body))
	}
	var sum [refLen]byte
	h.Sum(sum[:0])
	return sum
}

// pageBodies calls fn for each body of a page object, in order, once it
// is known to hold exactly n of them: a broken one is reported before fn
// sees any.
func pageBodies(obj []byte, n int, fn func(i int, body []byte) error) (ok bool, err error) {
	if _, ok := pageObjectEnds(obj, n); !ok {
		return false, nil
	}
	for i := range n {
		b, _ := pageObjectBody(obj, n, i)
		if err := fn(i, b); err != nil {
			return true, err
		}
	}
	return true, nil
}

// pageBody is body slot of a page object, read through its table alone;
// false: it has no such body.
func pageBody(obj []byte, slot int) ([]byte, bool) {
	if len(obj) == 0 || slot >= int(obj[0]) || len(obj) < pageObjectHead(int(obj[0])) {
		return nil, false
	}
	return pageObjectBody(obj, int(obj[0]), slot)
}

// pageObjectRef is the ref a page object is stored under, found from
// the bodies it holds; false: it does not decode.
func pageObjectRef(obj []byte) ([refLen]byte, bool) {
	var sum [refLen]byte
	n, ok := pageObjectEnds(obj, -1)
	if !ok {
		return sum, false
	}
	h := sha256.New()
	for i := range n {
		b, _ := pageObjectBody(obj, n, i)
		s := sha256.Sum256(b)
		h.Write(s[:])
	}
	h.Sum(sum[:0])
	return sum, true
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte(nil), b...)
}

// termsVersion is the analyser version of the bags a publish writes and
// reuses (search.AnalyserVersion; a variable for tests).
var termsVersion uint64 = search.AnalyserVersion

// termsKey is the key of the search terms of the body whose ref is body,
// as the current analyser makes them.
func termsKey(body string) []byte {
	h := sha256.New()
	h.Write(binary.BigEndian.AppendUint64(nil, termsVersion))
	h.Write([]byte(body))
	return h.Sum([]byte{objTerms})
}
