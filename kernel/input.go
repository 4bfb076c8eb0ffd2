package kernel

import (
	"bytes"
	"cmp"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// This file holds the one place where typed input values are read and
// checked: manifests use it for defaults, enum members and bounds, and both
// RequestFromJSON and RequestFromCLI use it for input.

// Input limits (docs/design.md, Limits).
const (
	MaxInputBytes  = 256 << 10 // encoded input object
	MaxStringChars = 64 << 10  // one string value, in code points as maxLength counts

	MaxListItems  = 1024 // one list value
	maxDecimalLen = 1000 // canonical decimal text, keeps big exponents cheap
)

// rules are the parsed scalar constraints of a param or a list's items.
type rules struct {
	typ      ParamType
	enum     []any
	min, max any // int64, float64 or Decimal, per typ
	minLen   int // -1 when absent
	maxLen   int // -1 when absent
}

// listRules add the list-level constraints.
type listRules struct {
	items    rules
	minItems int // -1 when absent
	maxItems int // -1 when absent
}

func typeNoun(t ParamType) string {
	switch t {
	case TypeString:
		return "a string"
	case TypeBoolean:
		return "a boolean"
	case TypeInteger:
		return "an integer"
	case TypeNumber:
		return "a finite number"
	case TypeDecimal:
		return "a decimal number"
	case TypeList:
		return "an array"
	}
	return "a value"
}

// formatValue renders a typed value for messages.
func formatValue(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return string(AppendJSONFloat(nil, x))
	case Decimal:
		return string(x)
	}
	return "?"
}

// mustBe describes what a value of r must be, bounds included, so type
// errors and range errors read the same on the CLI and over MCP.
func (r *rules) mustBe() string {
	s := "must be " + typeNoun(r.typ)
	if r.typ == TypeInteger && r.min == nil && r.max == nil {
		return s + " between -9223372036854775808 and 9223372036854775807"
	}
	switch {
	case r.min != nil && r.max != nil:
		s += " between " + formatValue(r.min) + " and " + formatValue(r.max)
	case r.min != nil:
		s += " of at least " + formatValue(r.min)
	case r.max != nil:
		s += " of at most " + formatValue(r.max)
	}
	return s
}

// notA is the message for text that is not of the type at all, as opposed
// to a value of the type outside its bounds (mustBe); the wording matches
// a JSON value of the wrong kind, so CLI and MCP say the same.
func (r *rules) notA() string {
	return "must be " + typeNoun(r.typ)
}

// typeError is the message for a value of the wrong JSON kind.
func (r *rules) typeError(k jsontext.Kind) string {
	if k == 'n' {
		return "null is not allowed"
	}
	return r.notA()
}

// fromJSON reads one scalar JSON value as r.typ. Numbers are read from their
// exact text. The message is "" on success.
func (r *rules) fromJSON(v jsontext.Value) (any, string) {
	k := v.Kind()
	switch r.typ {
	case TypeString:
		if k != '"' {
			return nil, r.typeError(k)
		}
		s, err := jsontext.AppendUnquote(nil, v)
		if err != nil {
			return nil, "must be valid Unicode"
		}
		return string(s), ""
	case TypeBoolean:
		if k != 't' && k != 'f' {
			return nil, r.typeError(k)
		}
		return k == 't', ""
	case TypeInteger:
		if k != '0' {
			return nil, r.typeError(k)
		}
		return r.integerText(string(v), true)
	case TypeNumber:
		if k != '0' {
			return nil, r.typeError(k)
		}
		return r.numberText(string(v))
	case TypeDecimal:
		switch k {
		case '0':
			return r.decimalText(string(v))
		case '"':
			s, err := jsontext.AppendUnquote(nil, v)
			if err != nil {
				return nil, r.mustBe()
			}
			return r.decimalText(string(s))
		}
		return nil, r.typeError(k)
	}
	return nil, "unknown type " + strconv.Quote(string(r.typ))
}

// fromCLI reads one command-line text as r.typ.
func (r *rules) fromCLI(s string) (any, string) {
	switch r.typ {
	case TypeString:
		if !utf8.ValidString(s) {
			return nil, "must be valid UTF-8"
		}
		return s, ""
	case TypeBoolean:
		switch s {
		case "true":
			return true, ""
		case "false":
			return false, ""
		}
		return nil, "must be true or false"
	case TypeInteger:
		return r.integerText(s, false)
	case TypeNumber:
		if strings.ContainsAny(s, "_") {
			return nil, r.notA()
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, r.notA()
		}
		return normZero(f), ""
	case TypeDecimal:
		return r.decimalText(s)
	}
	return nil, "unknown type " + strconv.Quote(string(r.typ))
}

func normZero(f float64) float64 {
	if f == 0 {
		return 0 // -0 and 0 are one value
	}
	return f
}

// integerText reads an integer. JSON text may be any number with an exact
// integer value (3, 3.0, 3e0); CLI text is base-10 digits with a sign.
func (r *rules) integerText(s string, json bool) (any, string) {
	if !json {
		body := strings.TrimLeft(s, "+-")
		if len(s)-len(body) > 1 || body == "" || strings.Trim(body, "0123456789") != "" {
			return nil, r.notA()
		}
	} else {
		d, ok := parseDecimal(s)
		if !ok {
			return nil, r.notA()
		}
		if strings.Contains(string(d), ".") {
			return nil, r.notA()
		}
		s = string(d)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil, r.mustBe()
	}
	return n, ""
}

func (r *rules) numberText(s string) (any, string) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, r.notA()
	}
	return normZero(f), ""
}

func (r *rules) decimalText(s string) (any, string) {
	d, ok := parseDecimal(s)
	if !ok {
		return nil, r.notA()
	}
	return d, ""
}

// bounded passes v through when it satisfies r's minimum and maximum.
func (r *rules) bounded(v any) (any, string) {
	if r.min != nil && compareValues(v, r.min) < 0 || r.max != nil && compareValues(v, r.max) > 0 {
		return nil, r.mustBe()
	}
	return v, ""
}

// check applies r's non-type constraints to a typed value: bounds, lengths
// and enum. The message is "" when v passes.
func (r *rules) check(v any) string {
	if _, msg := r.bounded(v); msg != "" {
		return msg
	}
	if s, ok := v.(string); ok {
		n := utf8.RuneCountInString(s)
		switch {
		case r.maxLen >= 0 && n > r.maxLen:
			return "must be at most " + strconv.Itoa(r.maxLen) + " characters long"
		case r.minLen >= 0 && n < r.minLen:
			return "must be at least " + strconv.Itoa(r.minLen) + " characters long"
		case n > MaxStringChars:
			return "must be at most " + strconv.Itoa(MaxStringChars) + " characters long"
		}
	}
	if len(r.enum) > 0 {
		for _, e := range r.enum {
			if compareValues(v, e) == 0 {
				return ""
			}
		}
		var b strings.Builder
		b.WriteString("must be one of ")
		for i, e := range r.enum {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(formatValue(e))
		}
		return b.String()
	}
	return ""
}

// compareValues orders two typed values of the same type; values of
// different types compare unequal (non-zero).
func compareValues(a, b any) int {
	switch x := a.(type) {
	case int64:
		y, ok := b.(int64)
		if !ok {
			return 2
		}
		return cmp.Compare(x, y)
	case float64:
		y, ok := b.(float64)
		if !ok {
			return 2
		}
		return cmp.Compare(x, y)
	case Decimal:
		y, ok := b.(Decimal)
		if !ok {
			return 2
		}
		if x == y {
			return 0
		}
		rx, _ := new(big.Rat).SetString(string(x))
		ry, _ := new(big.Rat).SetString(string(y))
		return rx.Cmp(ry)
	case string:
		y, ok := b.(string)
		if !ok {
			return 2
		}
		return strings.Compare(x, y)
	case bool:
		y, ok := b.(bool)
		if !ok || x != y {
			return 2
		}
		return 0
	}
	return 2
}

// parseDecimal reads a decimal literal ([+-]digits[.digits][e[+-]digits])
// and returns its shortest canonical text: no exponent, no leading or
// trailing zeros, no "-0" ("01.50" → "1.5", "1e2" → "100").
func parseDecimal(s string) (Decimal, bool) {
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	mant, exp := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, exp = s[:i], s[i+1:]
	}
	intPart, frac := mant, ""
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		intPart, frac = mant[:i], mant[i+1:]
		if frac == "" {
			return "", false
		}
	}
	if intPart == "" || !allDigits(intPart) || !allDigits(frac) {
		return "", false
	}
	e := 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		es := strings.TrimLeft(exp, "+-")
		if es == "" || len(exp)-len(es) > 1 || !allDigits(es) {
			return "", false
		}
		es = strings.TrimLeft(es, "0")
		if len(es) > 6 {
			return "", false // beyond any representable length
		}
		e, _ = strconv.Atoi(es)
		if exp[0] == '-' {
			e = -e
		}
	}
	coef := strings.TrimLeft(intPart+frac, "0")
	e -= len(frac)
	if coef == "" {
		return "0", true
	}
	t := strings.TrimRight(coef, "0")
	e += len(coef) - len(t)
	coef = t
	var out string
	switch {
	case e >= 0:
		if len(coef)+e > maxDecimalLen {
			return "", false
		}
		out = coef + strings.Repeat("0", e)
	case -e >= len(coef):
		if 2-e > maxDecimalLen {
			return "", false
		}
		out = "0." + strings.Repeat("0", -e-len(coef)) + coef
	default:
		if len(coef)+1 > maxDecimalLen {
			return "", false
		}
		out = coef[:len(coef)+e] + "." + coef[len(coef)+e:]
	}
	if neg {
		out = "-" + out
	}
	return Decimal(out), true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// maxCount is the effective item limit of a list.
func (lr *listRules) maxCount() int {
	if lr.maxItems >= 0 && lr.maxItems < MaxListItems {
		return lr.maxItems
	}
	return MaxListItems
}

// checkCount applies minItems, maxItems and the list limit.
func (lr *listRules) checkCount(n int) string {
	if max := lr.maxCount(); n > max {
		return "must have at most " + strconv.Itoa(max) + " items"
	}
	if lr.minItems >= 0 && n < lr.minItems {
		return "must have at least " + strconv.Itoa(lr.minItems) + " items"
	}
	return ""
}

// fromJSON reads a JSON array as a list of typed items. at is the list's
// JSON pointer; item errors name the item. It stops reading past the item
// limit so a huge array costs no more than the limit.
func (lr *listRules) fromJSON(v jsontext.Value, at string) ([]any, *Error) {
	if k := v.Kind(); k != '[' {
		msg := "must be an array"
		if k == 'n' {
			msg = "null is not allowed"
		}
		return nil, Errorf(CodeInvalid, "%s", msg).AtPath(at)
	}
	d := jsontext.NewDecoder(bytes.NewReader(v))
	if _, err := d.ReadToken(); err != nil {
		return nil, JSONError(err)
	}
	out := []any{}
	for d.PeekKind() != ']' {
		item, err := d.ReadValue()
		if err != nil {
			return nil, JSONError(err)
		}
		if len(out) == lr.maxCount() {
			return nil, Errorf(CodeInvalid, "%s", lr.checkCount(len(out)+1)).AtPath(at)
		}
		x, msg := lr.items.fromJSON(item)
		if msg != "" {
			return nil, Errorf(CodeInvalid, "%s", msg).AtPath(at + "/" + strconv.Itoa(len(out)))
		}
		out = append(out, x)
	}
	return out, nil
}

// paramSpec is one param with its parsed constraints: r for a scalar, lr
// for a list.
type paramSpec struct {
	p  *Param
	r  *rules
	lr *listRules
}

// fromJSON converts one JSON value to the param's typed value.
func (s *paramSpec) fromJSON(v jsontext.Value, at string) (any, *Error) {
	if s.lr != nil {
		items, err := s.lr.fromJSON(v, at)
		if err != nil {
			return nil, err
		}
		return items, nil
	}
	x, msg := s.r.fromJSON(v)
	if msg != "" {
		return nil, Errorf(CodeInvalid, "%s", msg).AtPath(at)
	}
	return x, nil
}

// check is the one semantic check of a typed value, shared by manifest
// defaults, CLI input and MCP input: bounds, enum, lengths, item counts.
func (s *paramSpec) check(v any, at string) *Error {
	if s.lr != nil {
		items := v.([]any)
		for i, x := range items {
			if msg := s.lr.items.check(x); msg != "" {
				return Errorf(CodeInvalid, "%s", msg).AtPath(at + "/" + strconv.Itoa(i))
			}
		}
		if msg := s.lr.checkCount(len(items)); msg != "" {
			return Errorf(CodeInvalid, "%s", msg).AtPath(at)
		}
		return nil
	}
	if msg := s.r.check(v); msg != "" {
		return Errorf(CodeInvalid, "%s", msg).AtPath(at)
	}
	return nil
}

// inputJSONLimits bound the strict pass over MCP arguments; the 256 KiB
// limit applies to the encoded input after conversion.
var inputJSONLimits = JSONLimits{MaxBytes: 1 << 20, MaxDepth: 4, MaxMembers: 8192}

// specs parses c's params. The manifest was validated, so an error here is
// a command that did not come from ParseManifest.
func specs(c *Command) ([]paramSpec, error) {
	out := make([]paramSpec, len(c.Params))
	for i := range c.Params {
		s, err := newParamSpec(&c.Params[i], "/params/"+strconv.Itoa(i))
		if err != nil {
			return nil, Errorf(CodeInternal, "%s", "command "+strconv.Quote(c.ID)+" has an invalid declaration").Wrap(err)
		}
		out[i] = *s
	}
	return out, nil
}

func specIndex(ss []paramSpec, id string) int {
	for i := range ss {
		if ss[i].p.ID == id {
			return i
		}
	}
	return -1
}

func unknownParam(id string) *Error {
	return Errorf(CodeInvalid, "%s", "unknown parameter "+strconv.Quote(id)).AtPath("/" + PointerToken(id))
}

// RequestFromJSON converts MCP tool arguments to the canonical Request.
// args nil means the arguments were absent ({}); JSON null or any other
// non-object is an error. Numbers are read from their exact text.
func RequestFromJSON(c *Command, args jsontext.Value) (Request, error) {
	ss, err := specs(c)
	if err != nil {
		return Request{}, err
	}
	vals := make([]any, len(ss))
	given := make([]bool, len(ss))
	if args != nil {
		if err := CheckJSON(args, inputJSONLimits); err != nil {
			return Request{}, err
		}
		if k := bytes.TrimSpace(args); len(k) == 0 || k[0] != '{' {
			return Request{}, Errorf(CodeInvalid, "arguments must be a JSON object")
		}
		d := jsontext.NewDecoder(bytes.NewReader(args))
		if _, err := d.ReadToken(); err != nil {
			return Request{}, JSONError(err)
		}
		for d.PeekKind() != '}' {
			tok, err := d.ReadToken()
			if err != nil {
				return Request{}, JSONError(err)
			}
			name := tok.String()
			i := specIndex(ss, name)
			if i < 0 {
				return Request{}, unknownParam(name)
			}
			v, err := d.ReadValue()
			if err != nil {
				return Request{}, JSONError(err)
			}
			x, e := ss[i].fromJSON(v, "/"+PointerToken(name))
			if e != nil {
				return Request{}, e
			}
			vals[i], given[i] = x, true
		}
	}
	return finishRequest(c, ss, vals, given)
}

// CLIValue is one value the command line gave for a param: the raw text, or
// Bool for a boolean flag (--flag, --flag=false). A repeated list flag
// appears once per occurrence, in order.
type CLIValue struct {
	Param string
	Text  string
	Bool  *bool
}

// RequestFromCLI converts command-line values to the canonical Request.
func RequestFromCLI(c *Command, given []CLIValue) (Request, error) {
	ss, err := specs(c)
	if err != nil {
		return Request{}, err
	}
	vals := make([]any, len(ss))
	set := make([]bool, len(ss))
	for _, cv := range given {
		i := specIndex(ss, cv.Param)
		if i < 0 {
			return Request{}, unknownParam(cv.Param)
		}
		s := &ss[i]
		at := "/" + cv.Param
		r := s.r
		if s.lr != nil {
			r = &s.lr.items
			if !set[i] {
				vals[i] = []any{}
			}
			at += "/" + strconv.Itoa(len(vals[i].([]any)))
			if len(vals[i].([]any)) == s.lr.maxCount() {
				return Request{}, Errorf(CodeInvalid, "%s", s.lr.checkCount(s.lr.maxCount()+1)).AtPath("/" + cv.Param)
			}
		} else if set[i] {
			return Request{}, Errorf(CodeInvalid, "given more than once").AtPath(at)
		}
		var x any
		var msg string
		switch {
		case cv.Bool != nil && r.typ == TypeBoolean:
			x = *cv.Bool
		case cv.Bool != nil:
			msg = r.typeError('t')
		default:
			x, msg = r.fromCLI(cv.Text)
		}
		if msg != "" {
			return Request{}, Errorf(CodeInvalid, "%s", msg).AtPath(at)
		}
		if s.lr != nil {
			vals[i] = append(vals[i].([]any), x)
		} else {
			vals[i] = x
		}
		set[i] = true
	}
	return finishRequest(c, ss, vals, set)
}

// finishRequest is the shared tail of both conversions: record explicit ids,
// apply defaults, then the one semantic check and the input size limit.
func finishRequest(c *Command, ss []paramSpec, vals []any, given []bool) (Request, error) {
	req := Request{Command: c.ID, Input: make(map[string]any, len(ss)), Explicit: []string{}}
	for i := range ss {
		s := &ss[i]
		at := "/" + s.p.ID
		switch {
		case given[i]:
			req.Explicit = append(req.Explicit, s.p.ID)
		case s.p.Default != nil:
			v, err := s.fromJSON(s.p.Default, at)
			if err != nil {
				return Request{}, Errorf(CodeInternal, "default does not convert").AtPath(at).Wrap(err)
			}
			vals[i] = v
		case s.p.Required:
			return Request{}, Errorf(CodeInvalid, "%s", "required parameter "+strconv.Quote(s.p.ID)+" is missing").AtPath(at)
		default:
			continue
		}
		if err := s.check(vals[i], at); err != nil {
			return Request{}, err
		}
		req.Input[s.p.ID] = vals[i]
	}
	if n := len(appendInput(nil, req.Input)); n > MaxInputBytes {
		return Request{}, Errorf(CodeInvalid, "%s", "input is "+strconv.Itoa(n)+" bytes encoded, over the limit of "+strconv.Itoa(MaxInputBytes))
	}
	return req, nil
}

// Encode renders the invoke message (docs/extension-protocol.md) as one line
// of JSON ending in "\n". The bytes are deterministic: input keys sorted,
// integers exact, decimals as strings, numbers in shortest form, strings
// exact. A zero caller is left out, and so are nil settings (a package
// that declares none).
func (r Request) Encode(invocationID string, interactive bool, deadlineMs int64, caller Caller, settings map[string]any) []byte {
	b := []byte(`{"type":"invoke","invocationId":`)
	b, _ = jsontext.AppendQuote(b, invocationID)
	b = append(b, `,"command":`...)
	b, _ = jsontext.AppendQuote(b, r.Command)
	b = append(b, `,"input":`...)
	b = appendInput(b, r.Input)
	b = append(b, `,"explicit":[`...)
	for i, id := range r.Explicit {
		if i > 0 {
			b = append(b, ',')
		}
		b, _ = jsontext.AppendQuote(b, id)
	}
	b = append(b, `],"interactive":`...)
	b = strconv.AppendBool(b, interactive)
	b = append(b, `,"deadlineMs":`...)
	b = strconv.AppendInt(b, deadlineMs, 10)
	if caller != (Caller{}) {
		b = append(b, `,"caller":`...)
		b = caller.append(b)
	}
	if settings != nil {
		b = append(b, `,"settings":`...)
		b = appendInput(b, settings)
	}
	return append(b, "}\n"...)
}

func (c Caller) append(b []byte) []byte {
	b = append(b, `{"transport":`...)
	b, _ = jsontext.AppendQuote(b, c.Transport)
	for _, m := range [...]struct{ name, v string }{{"endpoint", c.Endpoint}, {"subject", c.Subject}, {"agent", c.Agent}, {"credential", c.Credential}, {"issuer", c.Issuer}} {
		if m.v != "" {
			b = append(b, `,"`+m.name+`":`...)
			b, _ = jsontext.AppendQuote(b, m.v)
		}
	}
	return append(b, '}')
}

func appendInput(b []byte, in map[string]any) []byte {
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b, _ = jsontext.AppendQuote(b, k)
		b = append(b, ':')
		b = appendValue(b, in[k])
	}
	return append(b, '}')
}

func appendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case string:
		b, _ = jsontext.AppendQuote(b, x)
	case Decimal:
		b, _ = jsontext.AppendQuote(b, string(x))
	case bool:
		b = strconv.AppendBool(b, x)
	case int64:
		b = strconv.AppendInt(b, x, 10)
	case float64:
		b = AppendJSONFloat(b, x)
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, e)
		}
		b = append(b, ']')
	default:
		b = append(b, "null"...) // not a Request value; never produced here
	}
	return b
}
