package search

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// scanToolObject is readToolObject for the objects a publish makes, read
// straight from the bytes: no escape but the one-letter ones, no repeated
// member name, no deep nesting. It reports false for anything else, valid
// or not, and readToolObject then reads the object with a full decoder,
// which decides and explains; so whatever this accepts, the decoder
// accepts and reads the same.
func scanToolObject(object []byte) (toolObject, bool) {
	s := toolScanner{b: object}
	s.names = s.room[:0]
	var o toolObject
	s.space()
	if s.literal("null") {
		return o, s.end()
	}
	ok := s.members(0, func(name []byte) bool {
		switch string(name) {
		case "title":
			return s.str(&o.Title)
		case "description":
			return s.str(&o.Description)
		case "annotations":
			return s.object(1, func(name []byte) bool {
				if string(name) == "title" {
					return s.str(&o.Annotations.Title)
				}
				return s.skip(2)
			})
		case "inputSchema":
			return s.object(1, func(name []byte) bool {
				if string(name) != "properties" {
					return s.skip(2)
				}
				if s.literal("null") {
					o.InputSchema.Properties = nil
					return true
				}
				if o.InputSchema.Properties == nil {
					o.InputSchema.Properties = map[string]struct {
						Title       string `json:"title"`
						Description string `json:"description"`
					}{}
				}
				return s.members(2, func(id []byte) bool {
					p := o.InputSchema.Properties[string(id)]
					ok := s.object(3, func(name []byte) bool {
						switch string(name) {
						case "title":
							return s.str(&p.Title)
						case "description":
							return s.str(&p.Description)
						}
						return s.skip(4)
					})
					o.InputSchema.Properties[string(id)] = p
					return ok
				})
			})
		}
		return s.skip(1)
	})
	return o, ok && s.end()
}

// toolScanner reads JSON from b at i; every method reports false where
// it gives up, and the scan is then abandoned.
type toolScanner struct {
	b     []byte
	i     int
	tmp   []byte
	names [][]byte // the names of the objects being read, outermost first
	room  [32][]byte
}

// scanDepth bounds the nesting the scanner follows.
const scanDepth = 64

// scanMembers bounds the members of one object the scanner checks for
// repeats pairwise; a larger object goes to the decoder.
const scanMembers = 64

func (s *toolScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *toolScanner) end() bool { s.space(); return s.i == len(s.b) }

func (s *toolScanner) literal(l string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(l)) {
		return false
	}
	s.i += len(l)
	return true
}

// object reads an object (null: one without members) at depth.
func (s *toolScanner) object(depth int, member func(name []byte) bool) bool {
	s.space()
	if s.literal("null") {
		return true
	}
	return s.members(depth, member)
}

// members reads an object, calling member with the scanner before each
// member's value; names must be unescaped and none repeated.
func (s *toolScanner) members(depth int, member func(name []byte) bool) bool {
	s.space()
	if depth > scanDepth || s.i >= len(s.b) || s.b[s.i] != '{' {
		return false
	}
	s.i++
	s.space()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return true
	}
	base := len(s.names) // this object's names are s.names[base:]
	defer func() { s.names = s.names[:base] }()
	for {
		s.space()
		name, ok := s.rawString()
		if !ok {
			return false
		}
		if len(s.names)-base >= scanMembers {
			return false // the decoder's set checks repeats in a large object faster
		}
		for _, n := range s.names[base:] {
			if bytes.Equal(n, name) {
				return false
			}
		}
		s.names = append(s.names, name)
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.space()
		if !member(name) {
			return false
		}
		s.space()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// rawString reads a string without escapes and returns its bytes.
func (s *toolScanner) rawString() ([]byte, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	start := s.i + 1
	ascii := true
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			if !ascii && !utf8.Valid(s.b[start:j]) {
				return nil, false
			}
			s.i = j + 1
			return s.b[start:j], true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

// str reads a string (null leaves dst as it is) into dst.
func (s *toolScanner) str(dst *string) bool {
	s.space()
	if s.literal("null") {
		return true
	}
	v, ok := s.stringValue()
	if ok {
		*dst = string(v)
	}
	return ok
}

// stringValue reads a string whose escapes are one letter each; its bytes
// lie in b or, when it has escapes, in tmp until the next call.
func (s *toolScanner) stringValue() ([]byte, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	start := s.i + 1
	out := s.tmp[:0]
	copied, ascii := false, true
	from := start
	for j := start; j < len(s.b); j++ {
		c := s.b[j]
		switch {
		case c == '"':
			v := s.b[start:j]
			if copied {
				out = append(out, s.b[from:j]...)
				v, s.tmp = out, out
			}
			if !ascii && !utf8.Valid(v) {
				return nil, false
			}
			s.i = j + 1
			return v, true
		case c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		case c == '\\':
			if j+1 >= len(s.b) {
				return nil, false
			}
			var r byte
			switch s.b[j+1] {
			case '"', '\\', '/':
				r = s.b[j+1]
			case 'b':
				r = '\b'
			case 'f':
				r = '\f'
			case 'n':
				r = '\n'
			case 'r':
				r = '\r'
			case 't':
				r = '\t'
			default: // \u and what is not an escape
				return nil, false
			}
			out = append(append(out, s.b[from:j]...), r)
			copied = true
			j++
			from = j + 1
		}
	}
	return nil, false
}

// skip reads any value at depth.
func (s *toolScanner) skip(depth int) bool {
	s.space()
	if s.i >= len(s.b) || depth > scanDepth {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.members(depth, func([]byte) bool { return s.skip(depth + 1) })
	case c == '[':
		s.i++
		s.space()
		if s.i < len(s.b) && s.b[s.i] == ']' {
			s.i++
			return true
		}
		for {
			if !s.skip(depth + 1) {
				return false
			}
			s.space()
			if s.i >= len(s.b) {
				return false
			}
			switch s.b[s.i] {
			case ',':
				s.i++
			case ']':
				s.i++
				return true
			default:
				return false
			}
		}
	case c == '"':
		_, ok := s.stringValue()
		return ok
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		return s.number()
	}
	return false
}

// number reads a number as JSON writes one.
func (s *toolScanner) number() bool {
	b, i := s.b, s.i
	digits := func() bool {
		start := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	s.i = i
	return true
}

// scanObjectDoc is objectDoc for the objects scanToolObject reads: the
// document's texts are cut from one string instead of each of its own, and
// the params are sorted in a slice instead of a map. It reports false
// where scanToolObject would.
func scanObjectDoc(object []byte) (Doc, bool) {
	sc := docScratch.Get().(*docScan)
	s := &sc.s
	*s = toolScanner{b: object, tmp: s.tmp[:0]}
	s.names = s.room[:0]
	defer func() {
		*s = toolScanner{tmp: s.tmp[:0]} // keep nothing of object
		docScratch.Put(sc)
	}()
	sc.buf, sc.props = sc.buf[:0], sc.props[:0]
	var title, annTitle, desc span
	s.space()
	ok := s.literal("null") || s.members(0, func(name []byte) bool {
		switch string(name) {
		case "title":
			return sc.text(s, &title)
		case "description":
			return sc.text(s, &desc)
		case "annotations":
			return s.object(1, func(name []byte) bool {
				if string(name) == "title" {
					return sc.text(s, &annTitle)
				}
				return s.skip(2)
			})
		case "inputSchema":
			return s.object(1, func(name []byte) bool {
				if string(name) != "properties" {
					return s.skip(2)
				}
				if s.literal("null") {
					sc.props = sc.props[:0]
					return true
				}
				sc.props = sc.props[:0] // a repeated properties is refused, so none yet
				return s.members(2, func(id []byte) bool {
					p := propSpan{id: sc.add(id)}
					ok := s.object(3, func(name []byte) bool {
						switch string(name) {
						case "title":
							return sc.text(s, &p.title)
						case "description":
							return sc.text(s, &p.desc)
						}
						return s.skip(4)
					})
					sc.props = append(sc.props, p)
					return ok
				})
			})
		}
		return s.skip(1)
	})
	if !ok || !s.end() {
		return Doc{}, false
	}
	if title.lo == title.hi {
		title = annTitle
	}
	slices.SortFunc(sc.props, func(a, b propSpan) int { return bytes.Compare(sc.of(a.id), sc.of(b.id)) })
	// The texts in the order the fields take them, then one string of them.
	n := title.len() + desc.len()
	for _, p := range sc.props {
		n += p.id.len() + p.title.len() + 1 + p.desc.len()
	}
	var b strings.Builder
	b.Grow(n)
	b.Write(sc.of(title))
	b.Write(sc.of(desc))
	for _, p := range sc.props {
		b.Write(sc.of(p.id))
		b.Write(sc.of(p.title))
		b.WriteByte(' ')
		b.Write(sc.of(p.desc))
	}
	text := b.String()
	d := Doc{Fields: make([]Field, 2, 2+2*len(sc.props))}
	at := 0
	cut := func(n int) string { at += n; return text[at-n : at] }
	d.Fields[0] = Field{cut(title.len()), WeightTitle}
	d.Fields[1] = Field{cut(desc.len()), WeightDescription}
	for _, p := range sc.props {
		d.Fields = append(d.Fields, Field{cut(p.id.len()), WeightParam}, Field{cut(p.title.len() + 1 + p.desc.len()), WeightParamDescription})
	}
	return d, true
}

// span is where a text lies in a docScan's buf.
type span struct{ lo, hi int }

func (p span) len() int { return p.hi - p.lo }

type propSpan struct{ id, title, desc span }

// docScan is scanObjectDoc's scratch, kept for the next object.
type docScan struct {
	s     toolScanner
	buf   []byte
	props []propSpan
}

var docScratch = sync.Pool{New: func() any { return new(docScan) }}

func (sc *docScan) add(b []byte) span {
	lo := len(sc.buf)
	sc.buf = append(sc.buf, b...)
	return span{lo, len(sc.buf)}
}

func (sc *docScan) of(p span) []byte { return sc.buf[p.lo:p.hi] }

// text reads a string (null leaves dst as it is) into buf, at dst.
func (sc *docScan) text(s *toolScanner, dst *span) bool {
	s.space()
	if s.literal("null") {
		return true
	}
	v, ok := s.stringValue()
	if ok {
		*dst = sc.add(v)
	}
	return ok
}
