package search

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
)

// Ranking parameters (docs/discovery.md, How ranking works).
const (
	K1 = 1.2
	B  = 0.75

	// MaxPostings caps a term's block: a term in more tools keeps the
	// MaxPostings it scores best in, so a query's reads stay bounded.
	MaxPostings = 1024
	// MaxQueryTerms is how many distinct terms of a query count; the rest
	// are ignored.
	MaxQueryTerms = 16
)

// AnalyserVersion names what turns a tool's text into its Bag: Tokens
// (its splitting, folding, stop words and stemmer), the field weights and
// the bag's encoding. A store keeps bags under it, so a change to any of
// those must bump it: bags an older analyser made are then made again,
// not reused.
const AnalyserVersion = 2

// Field weights of a tool's text. A weight multiplies each occurrence of a
// term: the index is BM25 over one weighted bag of terms per tool, where a
// term's frequency is the sum of its fields' weights and the tool's length
// the sum over all its terms.
const (
	WeightPath             = 3 // the command id's words
	WeightTitle            = 2
	WeightDescription      = 1
	WeightParam            = 2 // input parameter ids
	WeightParamDescription = 1
)

// Doc is one tool to index. Name is its name on the endpoint; only Fields
// are read for terms.
type Doc struct {
	Name   string
	Fields []Field
}

// Field is a text and the weight of each of its terms.
type Field struct {
	Text   string
	Weight float64
}

// Hit is one ranked tool.
type Hit struct {
	Name  string
	Score float64
}

// Posting is one tool of a term's block: Doc numbers the tool in the
// endpoint's tool order, Impact is the term's BM25 score in it.
type Posting struct {
	Doc    uint32
	Impact float32
}

// TermWeight is a term and its weighted frequency in one tool.
type TermWeight struct {
	Term   string
	Weight float32
}

// Bag is a tool's terms, sorted by term, each once with its weighted
// frequency: all an index needs of a tool but its number. Bags depend only
// on the tool's text, so a store keeps them by content and a republish
// analyses only tools it has not seen.
type Bag []TermWeight

// Analyze tokenises d's fields into its bag.
func Analyze(d Doc) Bag {
	// Occurrences sorted by term and, within one, by their place in the
	// text, so each term's weights are summed in the order they came (a
	// stable sort does the same, more slowly): a map and its sorted keys
	// cost a publish more in allocations than the rest of the analysis.
	occp := occurrences.Get().(*[]occurrence)
	occ := (*occp)[:0]
	defer func() {
		clear(occ) // the terms are the text's: keep none of it
		*occp = occ[:0]
		occurrences.Put(occp)
	}()
	for _, f := range d.Fields {
		if f.Weight <= 0 {
			continue
		}
		appendTokens(f.Text, func(t string) { occ = append(occ, occurrence{t, f.Weight, int32(len(occ))}) })
	}
	slices.SortFunc(occ, func(a, b occurrence) int { return cmp.Or(strings.Compare(a.term, b.term), cmp.Compare(a.seq, b.seq)) })
	n := 0
	for i := range occ {
		if i == 0 || occ[i].term != occ[i-1].term {
			n++
		}
	}
	bag := make(Bag, 0, n)
	for i := 0; i < len(occ); {
		t, w := occ[i].term, 0.0
		for ; i < len(occ) && occ[i].term == t; i++ {
			w += occ[i].weight
		}
		bag = append(bag, TermWeight{t, float32(w)})
	}
	return bag
}

// occurrence is one term of a text as Analyze finds it, with its field's
// weight.
type occurrence struct {
	term   string
	weight float64
	seq    int32 // its place in the text: equal terms keep their order
}

// occurrences are the slices Analyze sorts a text's terms in, kept for the
// next text: a publish analyses every tool body it has not seen.
var occurrences = sync.Pool{New: func() any { return new([]occurrence) }}

// Encode is the bag's stored form: count, then per term its length, bytes
// and weight (float32 bits).
func (b Bag) Encode() []byte {
	out := binary.AppendUvarint(nil, uint64(len(b)))
	for _, tw := range b {
		out = binary.AppendUvarint(out, uint64(len(tw.Term)))
		out = append(out, tw.Term...)
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(tw.Weight))
	}
	return out
}

var errCorrupt = errors.New("search: corrupt index data")

// DecodeBag reads a bag Encode wrote.
func DecodeBag(data []byte) (Bag, error) {
	n, k := binary.Uvarint(data)
	if k <= 0 || n > uint64(len(data)) {
		return nil, fmt.Errorf("%w: bag count", errCorrupt)
	}
	bag := make(Bag, 0, n)
	err := encodedTerms(data, func(t []byte, w float32) { bag = append(bag, TermWeight{string(t), w}) })
	if err != nil {
		return nil, err
	}
	return bag, nil
}

// encodedTerms checks a bag Encode wrote and calls yield with each of its
// terms in order (nil yield: only checks). t is valid only during yield.
func encodedTerms(data []byte, yield func(t []byte, w float32)) error {
	n, k := binary.Uvarint(data)
	if k <= 0 || n > uint64(len(data)) {
		return fmt.Errorf("%w: bag count", errCorrupt)
	}
	data = data[k:]
	var last []byte
	for i := range n {
		l, k := binary.Uvarint(data)
		if k <= 0 || l > uint64(len(data)-k) || uint64(len(data)-k)-l < 4 {
			return fmt.Errorf("%w: bag term", errCorrupt)
		}
		data = data[k:]
		t := data[:l]
		w := math.Float32frombits(binary.LittleEndian.Uint32(data[l:]))
		if !(w > 0) || math.IsInf(float64(w), 0) || i > 0 && bytes.Compare(last, t) >= 0 {
			return fmt.Errorf("%w: bag weight or order", errCorrupt)
		}
		if yield != nil {
			yield(t, w)
		}
		last = t
		data = data[l+4:]
	}
	if len(data) != 0 {
		return fmt.Errorf("%w: bag trailing bytes", errCorrupt)
	}
	return nil
}

// Builder collects an endpoint's tools, numbered in the order added, and
// computes the postings blocks. It keeps each term once and each tool's
// terms as small entries, so memory grows with the postings, not with the
// text.
type Builder struct {
	ids   map[string]uint32
	terms []string
	inv   [][]entry // by term id
	lens  []float64 // by tool
	total float64
}

type entry struct {
	doc uint32
	w   float32
}

// NewBuilder returns an empty builder.
func NewBuilder() *Builder { return &Builder{ids: map[string]uint32{}} }

// Add adds d as the next tool.
func (b *Builder) Add(d Doc) { b.AddBag(Analyze(d)) }

// AddBag adds an analysed tool as the next one.
func (b *Builder) AddBag(bag Bag) {
	doc := uint32(len(b.lens))
	var n float64
	for _, tw := range bag {
		id, ok := b.ids[tw.Term]
		if !ok {
			id = uint32(len(b.terms))
			b.ids[tw.Term] = id
			b.terms = append(b.terms, tw.Term)
			b.inv = append(b.inv, nil)
		}
		b.inv[id] = append(b.inv[id], entry{doc, tw.Weight})
		n += float64(tw.Weight)
	}
	b.lens = append(b.lens, n)
	b.total += n
}

// AddEncoded adds as the next tool the bag enc encodes (Encode) merged
// with extra (Merge): what AddBag(Merge(DecodeBag(enc), extra)) adds,
// without making either bag. A damaged enc adds nothing.
func (b *Builder) AddEncoded(enc []byte, extra Bag) error {
	if err := encodedTerms(enc, nil); err != nil {
		return err
	}
	doc := uint32(len(b.lens))
	var n float64
	add := func(t []byte, s string, w float32) {
		var id uint32
		var ok bool
		if t != nil {
			id, ok = b.ids[string(t)]
		} else {
			id, ok = b.ids[s]
		}
		if !ok {
			if t != nil {
				s = string(t)
			}
			id = uint32(len(b.terms))
			b.ids[s] = id
			b.terms = append(b.terms, s)
			b.inv = append(b.inv, nil)
		}
		b.inv[id] = append(b.inv[id], entry{doc, w})
		n += float64(w)
	}
	j := 0
	_ = encodedTerms(enc, func(t []byte, w float32) {
		for ; j < len(extra) && extra[j].Term < string(t); j++ {
			add(nil, extra[j].Term, extra[j].Weight)
		}
		if j < len(extra) && extra[j].Term == string(t) {
			w += extra[j].Weight
			j++
		}
		add(t, "", w)
	})
	for ; j < len(extra); j++ {
		add(nil, extra[j].Term, extra[j].Weight)
	}
	b.lens = append(b.lens, n)
	b.total += n
	return nil
}

// Len is the number of tools added.
func (b *Builder) Len() int { return len(b.lens) }

// Postings calls yield with every term's encoded block, in term order,
// and stops at yield's first error. block is valid only during yield.
func (b *Builder) Postings(yield func(term string, block []byte) error) error {
	n := len(b.lens)
	if n == 0 {
		return nil
	}
	avg := b.total / float64(n)
	if avg == 0 {
		avg = 1
	}
	order := make([]uint32, len(b.terms))
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(x, y uint32) int { return cmp.Compare(b.terms[x], b.terms[y]) })
	var ps []Posting
	var block []byte
	for _, id := range order {
		es := b.inv[id]
		df := float64(len(es))
		idf := math.Log(1 + (float64(n)-df+0.5)/(df+0.5))
		ps = ps[:0]
		for _, e := range es {
			tf := float64(e.w)
			s := idf * tf * (K1 + 1) / (tf + K1*(1-B+B*b.lens[e.doc]/avg))
			ps = append(ps, Posting{e.doc, float32(s)})
		}
		sortPostings(ps)
		if len(ps) > MaxPostings {
			ps = ps[:MaxPostings]
		}
		block = EncodeBlock(block[:0], ps)
		if err := yield(b.terms[id], block); err != nil {
			return err
		}
	}
	return nil
}

// Merge is the bag of a tool whose text is both a's and b's.
func Merge(a, b Bag) Bag {
	out := make(Bag, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && a[i].Term < b[j].Term:
			out = append(out, a[i])
			i++
		case i == len(a) || b[j].Term < a[i].Term:
			out = append(out, b[j])
			j++
		default:
			out = append(out, TermWeight{a[i].Term, a[i].Weight + b[j].Weight})
			i, j = i+1, j+1
		}
	}
	return out
}

// sortPostings orders a block: best first, then by tool number.
func sortPostings(ps []Posting) {
	slices.SortFunc(ps, func(a, b Posting) int {
		if c := cmp.Compare(b.Impact, a.Impact); c != 0 {
			return c
		}
		return cmp.Compare(a.Doc, b.Doc)
	})
}

// blockVersion is the first byte of every block.
const blockVersion = 1

// EncodeBlock appends the stored form of ps to dst: a version byte, the
// count, then per posting the tool number (uvarint) and the impact
// (float32 bits).
func EncodeBlock(dst []byte, ps []Posting) []byte {
	dst = append(dst, blockVersion)
	dst = binary.AppendUvarint(dst, uint64(len(ps)))
	for _, p := range ps {
		dst = binary.AppendUvarint(dst, uint64(p.Doc))
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(p.Impact))
	}
	return dst
}

// DecodeBlock reads a block EncodeBlock wrote.
func DecodeBlock(block []byte) ([]Posting, error) {
	if len(block) == 0 || block[0] != blockVersion {
		return nil, fmt.Errorf("%w: block version", errCorrupt)
	}
	data := block[1:]
	n, k := binary.Uvarint(data)
	if k <= 0 || n > MaxPostings || n > uint64(len(data)) {
		return nil, fmt.Errorf("%w: block count", errCorrupt)
	}
	data = data[k:]
	ps := make([]Posting, 0, n)
	for range n {
		d, k := binary.Uvarint(data)
		if k <= 0 || d > math.MaxUint32 || len(data)-k < 4 {
			return nil, fmt.Errorf("%w: block posting", errCorrupt)
		}
		imp := math.Float32frombits(binary.LittleEndian.Uint32(data[k:]))
		if math.IsNaN(float64(imp)) || math.IsInf(float64(imp), 0) {
			return nil, fmt.Errorf("%w: block impact", errCorrupt)
		}
		ps = append(ps, Posting{uint32(d), imp})
		data = data[k+4:]
	}
	if len(data) != 0 {
		return nil, fmt.Errorf("%w: block trailing bytes", errCorrupt)
	}
	return ps, nil
}

// QueryTerms is the distinct terms of query that count, in order: at most
// MaxQueryTerms.
func QueryTerms(query string) []string {
	var terms []string
	appendTokens(query, func(t string) {
		if len(terms) < MaxQueryTerms && !slices.Contains(terms, t) {
			terms = append(terms, t)
		}
	})
	return terms
}

// Search ranks the tools for query: the sum over its terms of the term's
// impact in each tool, best first, ties by tool number (the endpoint's
// tool order: policy.CompareTools), at most limit. postings fetches a term's block
// (false: no tool has the term); name resolves a tool number, and is
// called only for the hits returned. A query without terms finds nothing.
func Search(query string, limit int, postings func(term string) ([]byte, bool, error), name func(doc uint32) (string, error)) ([]Hit, error) {
	if limit <= 0 {
		return nil, nil
	}
	var blocks [][]Posting
	total := 0
	for _, t := range QueryTerms(query) {
		block, ok, err := postings(t)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		ps, err := DecodeBlock(block)
		if err != nil {
			return nil, fmt.Errorf("term %q: %w", t, err)
		}
		blocks = append(blocks, ps)
		total += len(ps)
	}
	scores := make(map[uint32]float64, total)
	for _, ps := range blocks {
		for _, p := range ps {
			scores[p.Doc] += float64(p.Impact)
		}
	}
	// The best limit, kept best first: most tools are worse than the
	// worst kept and cost one comparison.
	type scored struct {
		doc   uint32
		score float64
	}
	better := func(a, b scored) bool { return a.score > b.score || a.score == b.score && a.doc < b.doc }
	ranked := make([]scored, 0, min(limit, len(scores)))
	for d, sc := range scores {
		c := scored{d, sc}
		if len(ranked) == limit && !better(c, ranked[limit-1]) {
			continue
		}
		i := len(ranked)
		if i < limit {
			ranked = append(ranked, c)
		}
		for i > 0 && better(c, ranked[i-1]) {
			if i < limit {
				ranked[i] = ranked[i-1]
			}
			i--
		}
		ranked[i] = c
	}
	hits := make([]Hit, 0, len(ranked))
	for _, r := range ranked {
		n, err := name(r.doc)
		if err != nil {
			return nil, err
		}
		hits = append(hits, Hit{n, r.score})
	}
	return hits, nil
}

// Index is an endpoint's index in memory: the same blocks a store keeps,
// for tests and for revisions that live in memory.
type Index struct {
	names  []string
	blocks map[string][]byte
}

// Build indexes docs, numbered in the order given (the endpoint's tool
// order).
func Build(docs []Doc) *Index {
	b := NewBuilder()
	ix := &Index{names: make([]string, len(docs)), blocks: map[string][]byte{}}
	for i, d := range docs {
		b.Add(d)
		ix.names[i] = d.Name
	}
	_ = b.Postings(func(t string, block []byte) error {
		ix.blocks[t] = slices.Clone(block)
		return nil
	})
	return ix
}

// Search ranks ix's tools for query, as the package's Search does.
func (ix *Index) Search(query string, limit int) []Hit {
	hits, _ := Search(query, limit, func(t string) ([]byte, bool, error) {
		b, ok := ix.blocks[t]
		return b, ok, nil
	}, func(d uint32) (string, error) {
		if int(d) >= len(ix.names) {
			return "", fmt.Errorf("%w: tool %d", errCorrupt, d)
		}
		return ix.names[d], nil
	})
	return hits
}
