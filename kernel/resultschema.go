package kernel

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// Result limits (docs/design.md, Limits).
const (
	MaxResultSchemaBytes = 64 << 10
	MaxResultBytes       = 128 << 10
	MaxResultDepth       = 16
	MaxResultMembers     = 2048
	ResultCheckTime      = 100 * time.Millisecond
)

// The result-schema subset (docs/design.md, Limits) is small and closed, so
// it is checked here rather than by a general JSON Schema library (whose
// package initialisation alone cost every rukh process milliseconds). A
// general validator stays in the tests as an oracle:
// resultschema_oracle_test.go runs both over generated schemas and results
// and requires one verdict, and testdata/resultschema.meta.json is the subset
// as a meta-schema.

// rtype is one of the seven JSON Schema types, in typeNames order.
type rtype uint8

const (
	tObject rtype = iota
	tArray
	tString
	tBoolean
	tInteger
	tNumber
	tNull
)

var typeNames = [...]string{"object", "array", "string", "boolean", "integer", "number", "null"}

func (t rtype) String() string { return typeNames[t] }

func typeOf(name string) (rtype, bool) {
	for i, n := range typeNames {
		if n == name {
			return rtype(i), true
		}
	}
	return 0, false
}

// keywords lists, per type, the keywords a result schema of that type may
// use besides type, title and description; the object and array ones it
// must use are listed first.
func keywords(t rtype) (must, may []string) {
	switch t {
	case tObject:
		return []string{"properties", "additionalProperties"}, []string{"required"}
	case tArray:
		return []string{"items", "maxItems"}, []string{"minItems"}
	case tString:
		return nil, []string{"minLength", "maxLength", "enum"}
	case tInteger, tNumber:
		return nil, []string{"minimum", "maximum", "enum"}
	}
	return nil, []string{"enum"}
}

// jnum is a JSON number literal in a decoded schema, kept as text.
type jnum string

// decodeTree decodes JSON that already passed CheckJSON into map[string]any,
// []any, string, bool, nil and jnum.
func decodeTree(data []byte) (any, error) {
	d := jsontext.NewDecoder(bytes.NewReader(data))
	v, err := readTree(d)
	if err != nil {
		return nil, JSONError(err)
	}
	return v, nil
}

func readTree(d *jsontext.Decoder) (any, error) {
	tok, err := d.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case '{':
		m := map[string]any{}
		for d.PeekKind() != '}' {
			tok, err := d.ReadToken()
			if err != nil {
				return nil, err
			}
			name := tok.String() // before the next read voids tok
			v, err := readTree(d)
			if err != nil {
				return nil, err
			}
			m[name] = v
		}
		_, err := d.ReadToken()
		return m, err
	case '[':
		a := []any{}
		for d.PeekKind() != ']' {
			v, err := readTree(d)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := d.ReadToken()
		return a, err
	case 'n':
		return nil, nil
	case 't', 'f':
		return tok.Bool(), nil
	case '"':
		return tok.String(), nil
	}
	return jnum(tok.String()), nil
}

// jsonType names v's JSON type the way JSON Schema does: a number without a
// fractional part is an integer.
func jsonType(v any) string {
	switch v := v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case nil:
		return "null"
	case jnum:
		if d, _ := parseExact(string(v)); d.isInt() {
			return "integer"
		}
	}
	return "number"
}

// CheckResultSchema checks that raw is a result schema of the subset: strict
// JSON within 64 KiB, depth 16 and 2,048 members, of the closed subset (one
// type; objects with properties and additionalProperties false; arrays with
// items and maxItems; bounds, lengths and enum where the type allows them),
// with required names declared, enum members unique, typed and inside the
// bounds, and every lower bound at most its upper bound. Errors are
// CodeInvalid with Path relative to the schema root.
func CheckResultSchema(raw jsontext.Value) error {
	_, err := decodeResultSchema(raw)
	return err
}

func decodeResultSchema(raw jsontext.Value) (any, error) {
	if err := CheckJSON(raw, JSONLimits{MaxBytes: MaxResultSchemaBytes, MaxDepth: MaxResultDepth, MaxMembers: MaxResultMembers}); err != nil {
		return nil, err
	}
	doc, err := decodeTree(raw)
	if err != nil {
		return nil, err
	}
	if err := checkSubset(doc, ""); err != nil {
		return nil, err
	}
	if err := checkSubschema(doc, ""); err != nil {
		return nil, err
	}
	return doc, nil
}

// checkSubset checks the shape of one schema of the subset: what the closed
// meta-schema (testdata/resultschema.meta.json) states. The first error
// found wins: the schema's type, its missing keywords, its keywords not
// allowed, then each keyword's value in name order.
func checkSubset(v any, at string) *Error {
	s, ok := v.(map[string]any)
	if !ok {
		return invalidf(at, "got %s, want object", jsonType(v))
	}
	tv, ok := s["type"]
	if !ok {
		return invalidf(at, "missing %q", "type")
	}
	name, _ := tv.(string)
	t, ok := typeOf(name)
	if !ok {
		return invalidf(at+"/type", `type must be one of "object", "array", "string", "boolean", "integer", "number" or "null"`)
	}
	must, may := keywords(t)
	for _, k := range must {
		if _, ok := s[k]; !ok {
			return invalidf(at, "missing %q", k)
		}
	}
	keys := slices.Sorted(maps.Keys(s))
	for _, k := range keys {
		if k != "type" && k != "title" && k != "description" && !slices.Contains(must, k) && !slices.Contains(may, k) {
			return invalidf(at+"/"+PointerToken(k), "%q is not allowed here", k)
		}
	}
	for _, k := range keys {
		if err := checkKeyword(t, k, s[k], at+"/"+PointerToken(k)); err != nil {
			return err
		}
	}
	return nil
}

func checkKeyword(t rtype, k string, v any, at string) *Error {
	switch k {
	case "type":
		return nil
	case "title", "description":
		str, ok := v.(string)
		if !ok {
			return invalidf(at, "got %s, want string", jsonType(v))
		}
		if n := utf8.RuneCountInString(str); n > 4096 {
			return invalidf(at, "%d characters, longer than 4096", n)
		}
	case "properties":
		props, ok := v.(map[string]any)
		if !ok {
			return invalidf(at, "got %s, want object", jsonType(v))
		}
		for _, n := range slices.Sorted(maps.Keys(props)) {
			if err := checkSubset(props[n], at+"/"+PointerToken(n)); err != nil {
				return err
			}
		}
	case "required":
		req, ok := v.([]any)
		if !ok {
			return invalidf(at, "got %s, want array", jsonType(v))
		}
		for i, n := range req {
			if _, ok := n.(string); !ok {
				return invalidf(at+"/"+strconv.Itoa(i), "got %s, want string", jsonType(n))
			}
		}
		if i, j, ok := repeated(req); ok {
			return invalidf(at, "items at %d and %d are equal", i, j)
		}
	case "additionalProperties":
		if v != false {
			return invalidf(at, "must be false")
		}
	case "items":
		return checkSubset(v, at)
	case "minItems", "maxItems", "minLength", "maxLength":
		n, ok := v.(jnum)
		d, _ := parseExact(string(n))
		if !ok || !d.isInt() {
			return invalidf(at, "got %s, want integer", jsonType(v))
		}
		if d.sign() < 0 {
			return invalidf(at, "%s is less than minimum 0", n)
		}
	case "minimum", "maximum":
		n, ok := v.(jnum)
		if want := t.String(); !ok || want == "integer" && jsonType(n) != "integer" {
			return invalidf(at, "got %s, want %s", jsonType(v), want)
		}
	case "enum":
		enum, ok := v.([]any)
		if !ok {
			return invalidf(at, "got %s, want array", jsonType(v))
		}
		if len(enum) == 0 {
			return invalidf(at, "minItems: got 0, want 1")
		}
		if t == tNull && len(enum) > 1 {
			return invalidf(at, "maxItems: got %d, want 1", len(enum))
		}
		for i, e := range enum {
			if !hasType(e, t) {
				return invalidf(at+"/"+strconv.Itoa(i), "got %s, want %s", jsonType(e), t)
			}
		}
		if i, j, ok := repeated(enum); ok {
			return invalidf(at, "items at %d and %d are equal", i, j)
		}
	}
	return nil
}

// hasType reports whether a decoded scalar is of type t.
func hasType(v any, t rtype) bool {
	switch jsonType(v) {
	case t.String():
		return true
	case "integer":
		return t == tNumber
	}
	return false
}

// repeated finds the first two equal members of a list of scalars.
func repeated(list []any) (int, int, bool) {
	for j := range list {
		for i := range j {
			if jsonEqual(list[i], list[j]) {
				return i, j, true
			}
		}
	}
	return 0, 0, false
}

// checkSubschema runs the checks the meta-schema cannot express. s has
// already passed checkSubset, so the type assertions hold.
func checkSubschema(v any, at string) error {
	s := v.(map[string]any)
	typ := s["type"].(string)
	if err := orderedPair(s, "minLength", "maxLength", at); err != nil {
		return err
	}
	if err := orderedPair(s, "minItems", "maxItems", at); err != nil {
		return err
	}
	if err := orderedPair(s, "minimum", "maximum", at); err != nil {
		return err
	}
	switch typ {
	case "object":
		props := s["properties"].(map[string]any)
		if req, ok := s["required"].([]any); ok {
			for i, n := range req {
				if _, ok := props[n.(string)]; !ok {
					return invalidf(at+"/required/"+strconv.Itoa(i), "required %q is not a declared property", n)
				}
			}
		}
		for _, n := range slices.Sorted(maps.Keys(props)) {
			if err := checkSubschema(props[n], at+"/properties/"+PointerToken(n)); err != nil {
				return err
			}
		}
	case "array":
		return checkSubschema(s["items"], at+"/items")
	}
	enum, _ := s["enum"].([]any)
	for i, e := range enum {
		if msg := inBounds(s, e); msg != "" {
			return invalidf(at+"/enum/"+strconv.Itoa(i), "enum member %s", msg)
		}
	}
	return nil
}

func decOf(v any) (exact, bool) {
	n, ok := v.(jnum)
	if !ok {
		return exact{}, false
	}
	return parseExact(string(n))
}

func jsonEqual(a, b any) bool {
	if da, ok := decOf(a); ok {
		db, ok := decOf(b)
		return ok && da.cmp(db) == 0
	}
	return a == b
}

func orderedPair(s map[string]any, lo, hi, at string) error {
	a, aok := decOf(s[lo])
	b, bok := decOf(s[hi])
	if aok && bok && a.cmp(b) > 0 {
		return invalidf(at+"/"+hi, "%s %s is less than %s %s", hi, s[hi], lo, s[lo])
	}
	return nil
}

// inBounds checks one enum member against the schema's other keywords.
func inBounds(s map[string]any, e any) string {
	if r, ok := decOf(e); ok {
		if lo, ok := decOf(s["minimum"]); ok && r.cmp(lo) < 0 {
			return fmt.Sprintf("%s is less than minimum %s", e, s["minimum"])
		}
		if hi, ok := decOf(s["maximum"]); ok && r.cmp(hi) > 0 {
			return fmt.Sprintf("%s is greater than maximum %s", e, s["maximum"])
		}
	}
	if str, ok := e.(string); ok {
		n := int64(utf8.RuneCountInString(str))
		if lo, ok := countOf(s["minLength"]); ok && n < lo {
			return fmt.Sprintf("%q is shorter than minLength %s", str, s["minLength"])
		}
		if hi, ok := countOf(s["maxLength"]); ok && n > hi {
			return fmt.Sprintf("%q is longer than maxLength %s", str, s["maxLength"])
		}
	}
	return ""
}

func countOf(v any) (int64, bool) {
	d, ok := decOf(v)
	if !ok {
		return 0, false
	}
	return d.count()
}

// ResultSchema is a compiled publisher result schema.
type ResultSchema struct {
	root *rnode
}

// rnode is one compiled schema of the subset.
type rnode struct {
	typ      rtype
	props    map[string]rprop
	required []string
	items    *rnode
	minItems int64
	maxItems int64
	minLen   int64
	maxLen   int64 // -1: none
	min, max *exact
	minText  string
	maxText  string
	enum     []any // string, bool, nil or exact
	enumText string
}

type rprop struct {
	node *rnode
	req  int // index in required, -1 when optional
}

// CompileResultSchema checks raw as CheckResultSchema does and compiles it
// for Check.
func CompileResultSchema(raw jsontext.Value) (*ResultSchema, error) {
	doc, err := decodeResultSchema(raw)
	if err != nil {
		return nil, err
	}
	return &ResultSchema{root: compileNode(doc.(map[string]any))}, nil
}

func compileNode(s map[string]any) *rnode {
	t, _ := typeOf(s["type"].(string))
	n := &rnode{typ: t, maxLen: -1}
	switch t {
	case tObject:
		props := s["properties"].(map[string]any)
		n.props = make(map[string]rprop, len(props))
		for name, p := range props {
			n.props[name] = rprop{node: compileNode(p.(map[string]any)), req: -1}
		}
		req, _ := s["required"].([]any)
		for i, r := range req {
			name := r.(string)
			n.required = append(n.required, name)
			p := n.props[name]
			p.req = i
			n.props[name] = p
		}
	case tArray:
		n.items = compileNode(s["items"].(map[string]any))
		n.maxItems, _ = countOf(s["maxItems"])
		n.minItems, _ = countOf(s["minItems"])
	case tString:
		n.minLen, _ = countOf(s["minLength"])
		if hi, ok := countOf(s["maxLength"]); ok {
			n.maxLen = hi
		}
	case tInteger, tNumber:
		if d, ok := decOf(s["minimum"]); ok {
			n.min, n.minText = &d, string(s["minimum"].(jnum))
		}
		if d, ok := decOf(s["maximum"]); ok {
			n.max, n.maxText = &d, string(s["maximum"].(jnum))
		}
	}
	if enum, ok := s["enum"].([]any); ok {
		texts := make([]string, len(enum))
		for i, e := range enum {
			switch e := e.(type) {
			case jnum:
				d, _ := parseExact(string(e))
				n.enum = append(n.enum, d)
				texts[i] = string(e)
			case string:
				n.enum = append(n.enum, e)
				texts[i] = strconv.Quote(e)
			default:
				n.enum = append(n.enum, e)
				texts[i] = fmt.Sprint(e)
				if e == nil {
					texts[i] = "null"
				}
			}
		}
		n.enumText = strings.Join(texts, ", ")
	}
	return n
}

// Check validates one result value (the structured data): strict JSON within
// maxBytes (128 KiB when maxBytes ≤ 0), depth 16 and 2,048 members plus
// elements, then the schema, exactly (integers never pass through float64),
// all within 100 ms. Errors are CodeInvalid with Path inside data.
func (s *ResultSchema) Check(data jsontext.Value, maxBytes int) error {
	if maxBytes <= 0 {
		maxBytes = MaxResultBytes
	}
	c := &rcheck{deadline: resultClock().Add(resultCheckTime)}
	if err := CheckJSON(data, JSONLimits{MaxBytes: maxBytes, MaxDepth: MaxResultDepth, MaxMembers: MaxResultMembers}); err != nil {
		return err
	}
	c.d = jsontext.NewDecoder(bytes.NewReader(data))
	if err := c.value(s.root); err != nil {
		return err
	}
	// Checked last too: a check that ran past the bound is an error, never
	// a success found late.
	return c.late()
}

// resultCheckTime is ResultCheckTime, a variable so a test can prove the
// bound is enforced without a result slow enough to take 100 ms.
var resultCheckTime = ResultCheckTime

// resultClock is the clock of that bound, a seam so a test can prove it
// without depending on how fast the host runs.
var resultClock = time.Now

// rcheck walks one result once, token by token, against a compiled schema.
type rcheck struct {
	d        *jsontext.Decoder
	path     []pathTok
	deadline time.Time
	values   int
}

type pathTok struct {
	name string
	idx  int // -1 for a member name
}

func (c *rcheck) at() string {
	var b strings.Builder
	for _, t := range c.path {
		b.WriteByte('/')
		if t.idx >= 0 {
			b.WriteString(strconv.Itoa(t.idx))
		} else {
			b.WriteString(PointerToken(t.name))
		}
	}
	return b.String()
}

func (c *rcheck) fail(format string, args ...any) *Error {
	return invalidf(c.at(), format, args...)
}

func (c *rcheck) late() error {
	if resultClock().After(c.deadline) {
		return Errorf(CodeInvalid, "result check took longer than %s", resultCheckTime)
	}
	return nil
}

// kindType names the JSON type of the value a token kind starts.
func kindType(k jsontext.Kind, lit string) string {
	switch k {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	if d, _ := parseExact(lit); d.isInt() {
		return "integer"
	}
	return "number"
}

func (c *rcheck) value(n *rnode) error {
	c.values++
	if c.values%64 == 0 {
		if err := c.late(); err != nil {
			return err
		}
	}
	tok, err := c.d.ReadToken()
	if err != nil {
		return JSONError(err)
	}
	k := tok.Kind()
	var lit string
	if k == '0' || k == '"' {
		lit = tok.String()
	}
	got := kindType(k, lit)
	if got != n.typ.String() && (got != "integer" || n.typ != tNumber) {
		return c.fail("got %s, want %s", got, n.typ)
	}
	switch k {
	case '{':
		return c.object(n)
	case '[':
		return c.array(n)
	case '"':
		count := int64(utf8.RuneCountInString(lit))
		if count < n.minLen {
			return c.fail("%d characters, shorter than minLength %d", count, n.minLen)
		}
		if n.maxLen >= 0 && count > n.maxLen {
			return c.fail("%d characters, longer than maxLength %d", count, n.maxLen)
		}
		return c.enum(n, lit)
	case 't', 'f':
		return c.enum(n, tok.Bool())
	case 'n':
		return c.enum(n, nil)
	}
	d, _ := parseExact(lit)
	if n.min != nil && d.cmp(*n.min) < 0 {
		return c.fail("%s is less than minimum %s", lit, n.minText)
	}
	if n.max != nil && d.cmp(*n.max) > 0 {
		return c.fail("%s is greater than maximum %s", lit, n.maxText)
	}
	return c.enum(n, d)
}

func (c *rcheck) object(n *rnode) error {
	var seen []bool
	if len(n.required) > 0 {
		seen = make([]bool, len(n.required))
	}
	for c.d.PeekKind() != '}' {
		tok, err := c.d.ReadToken()
		if err != nil {
			return JSONError(err)
		}
		name := tok.String()
		p, ok := n.props[name]
		if !ok {
			return invalidf(c.at()+"/"+PointerToken(name), "%q is not allowed here", name)
		}
		c.path = append(c.path, pathTok{name: name, idx: -1})
		if err := c.value(p.node); err != nil {
			return err
		}
		c.path = c.path[:len(c.path)-1]
		if p.req >= 0 {
			seen[p.req] = true
		}
	}
	if _, err := c.d.ReadToken(); err != nil {
		return JSONError(err)
	}
	for i, ok := range seen {
		if !ok {
			return c.fail("missing %q", n.required[i])
		}
	}
	return nil
}

func (c *rcheck) array(n *rnode) error {
	i := 0
	for c.d.PeekKind() != ']' {
		if int64(i) >= n.maxItems {
			return c.fail("more than %d items (maxItems)", n.maxItems)
		}
		c.path = append(c.path, pathTok{idx: i})
		if err := c.value(n.items); err != nil {
			return err
		}
		c.path = c.path[:len(c.path)-1]
		i++
	}
	if _, err := c.d.ReadToken(); err != nil {
		return JSONError(err)
	}
	if int64(i) < n.minItems {
		return c.fail("%d items, fewer than minItems %d", i, n.minItems)
	}
	return nil
}

func (c *rcheck) enum(n *rnode, v any) error {
	if n.enum == nil {
		return nil
	}
	for _, e := range n.enum {
		switch e := e.(type) {
		case exact:
			if d, ok := v.(exact); ok && d.cmp(e) == 0 {
				return nil
			}
		default:
			if e == v {
				return nil
			}
		}
	}
	if len(n.enum) == 1 {
		return c.fail("must be %s", n.enumText)
	}
	return c.fail("must be one of %s", n.enumText)
}
