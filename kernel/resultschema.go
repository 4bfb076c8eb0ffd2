package kernel

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Result limits of SPEC §2.2.
const (
	MaxResultSchemaBytes = 64 << 10
	MaxResultBytes       = 128 << 10
	MaxResultDepth       = 16
	MaxResultMembers     = 2048
	ResultCheckTime      = 100 * time.Millisecond
)

//go:embed resultschema.meta.json
var resultMetaJSON []byte

const resultMetaURL = "urn:rukh:result-schema-meta/1"

var resultMeta = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(resultMetaJSON))
	if err != nil {
		return nil, err
	}
	c := newSchemaCompiler()
	if err := c.AddResource(resultMetaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(resultMetaURL)
})

// denyLoader refuses every URL: schemas never reach the network or files.
type denyLoader struct{}

func (denyLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("loading %q is not allowed", url)
}

// newSchemaCompiler is the one way this package compiles JSON Schema.
func newSchemaCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(denyLoader{})
	c.AssertFormat()
	return c
}

var printer = message.NewPrinter(language.English)

// schemaError turns a validation error into a CodeInvalid *Error at the
// JSON pointer of its most specific cause.
func schemaError(err error) *Error {
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return &Error{Code: CodeInvalid, Message: "schema validation failed", Err: err}
	}
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	at := pointer(ve.InstanceLocation)
	switch k := ve.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		return &Error{Code: CodeInvalid, Path: at + "/" + escapeToken(k.Properties[0]), Message: fmt.Sprintf("%q is not allowed here", k.Properties[0])}
	case *kind.Required:
		return &Error{Code: CodeInvalid, Path: at, Message: fmt.Sprintf("missing %q", k.Missing[0])}
	}
	return &Error{Code: CodeInvalid, Path: at, Message: ve.ErrorKind.LocalizedString(printer)}
}

func escapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escapeToken(t))
	}
	return b.String()
}

// CheckResultSchema checks that raw is a result schema of the SPEC §2.2
// subset: strict JSON within 64 KiB, depth 16 and 2,048 members, accepted by
// the closed meta-schema, with required names declared, enum members unique,
// typed and inside the bounds, and every lower bound at most its upper
// bound. Errors are CodeInvalid with Path relative to the schema root.
func CheckResultSchema(raw jsontext.Value) error {
	_, err := decodeResultSchema(raw)
	return err
}

func decodeResultSchema(raw jsontext.Value) (any, error) {
	if err := CheckJSON(raw, JSONLimits{MaxBytes: MaxResultSchemaBytes, MaxDepth: MaxResultDepth, MaxMembers: MaxResultMembers}); err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, &Error{Code: CodeInvalid, Message: "invalid JSON", Err: err}
	}
	meta, err := resultMeta()
	if err != nil {
		return nil, &Error{Code: CodeInternal, Message: "result meta-schema does not compile", Err: err}
	}
	if err := meta.Validate(doc); err != nil {
		return nil, schemaError(err)
	}
	if err := checkSubschema(doc, ""); err != nil {
		return nil, err
	}
	return doc, nil
}

// checkSubschema runs the checks the meta-schema cannot express. s has
// already passed the meta-schema, so the type assertions hold.
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
		names := make([]string, 0, len(props))
		for n := range props {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			if err := checkSubschema(props[n], at+"/properties/"+escapeToken(n)); err != nil {
				return err
			}
		}
	case "array":
		return checkSubschema(s["items"], at+"/items")
	}
	enum, _ := s["enum"].([]any)
	for i, e := range enum {
		eat := at + "/enum/" + strconv.Itoa(i)
		for j := range i {
			if jsonEqual(enum[j], e) {
				return invalidf(eat, "enum member repeats /enum/%d", j)
			}
		}
		if msg := inBounds(s, e); msg != "" {
			return invalidf(eat, "enum member %s", msg)
		}
	}
	return nil
}

func ratOf(v any) *big.Rat {
	n, ok := v.(json.Number)
	if !ok {
		return nil
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return nil
	}
	return r
}

func jsonEqual(a, b any) bool {
	if ra, rb := ratOf(a), ratOf(b); ra != nil && rb != nil {
		return ra.Cmp(rb) == 0
	}
	return a == b
}

func orderedPair(s map[string]any, lo, hi, at string) error {
	a, b := ratOf(s[lo]), ratOf(s[hi])
	if a != nil && b != nil && a.Cmp(b) > 0 {
		return invalidf(at+"/"+hi, "%s %s is less than %s %s", hi, s[hi], lo, s[lo])
	}
	return nil
}

// inBounds checks one enum member against the schema's other keywords.
func inBounds(s map[string]any, e any) string {
	if r := ratOf(e); r != nil {
		if lo := ratOf(s["minimum"]); lo != nil && r.Cmp(lo) < 0 {
			return fmt.Sprintf("%s is less than minimum %s", e, s["minimum"])
		}
		if hi := ratOf(s["maximum"]); hi != nil && r.Cmp(hi) > 0 {
			return fmt.Sprintf("%s is greater than maximum %s", e, s["maximum"])
		}
	}
	if str, ok := e.(string); ok {
		n := big.NewRat(int64(utf8.RuneCountInString(str)), 1)
		if lo := ratOf(s["minLength"]); lo != nil && n.Cmp(lo) < 0 {
			return fmt.Sprintf("%q is shorter than minLength %s", str, s["minLength"])
		}
		if hi := ratOf(s["maxLength"]); hi != nil && n.Cmp(hi) > 0 {
			return fmt.Sprintf("%q is longer than maxLength %s", str, s["maxLength"])
		}
	}
	return ""
}

// ResultSchema is a compiled publisher result schema.
type ResultSchema struct {
	schema *jsonschema.Schema
}

// CompileResultSchema checks raw as CheckResultSchema does and compiles it
// for Check.
func CompileResultSchema(raw jsontext.Value) (*ResultSchema, error) {
	doc, err := decodeResultSchema(raw)
	if err != nil {
		return nil, err
	}
	const url = "urn:rukh:result-schema"
	c := newSchemaCompiler()
	if err := c.AddResource(url, doc); err != nil {
		return nil, &Error{Code: CodeInvalid, Message: "result schema does not compile", Err: err}
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, &Error{Code: CodeInvalid, Message: "result schema does not compile", Err: err}
	}
	return &ResultSchema{schema: sch}, nil
}

// Check validates one result value (the structured data): strict JSON within
// maxBytes (128 KiB when maxBytes ≤ 0), depth 16 and 2,048 members plus
// elements, then the schema, exactly (integers never pass through float64),
// all within 100 ms. Errors are CodeInvalid with Path inside data.
func (s *ResultSchema) Check(data jsontext.Value, maxBytes int) error {
	if maxBytes <= 0 {
		maxBytes = MaxResultBytes
	}
	done := make(chan error, 1)
	go func() { done <- s.check(data, maxBytes) }()
	timer := time.NewTimer(resultCheckTime)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		// The goroutine finishes on its own: its input is bounded.
		return &Error{Code: CodeInvalid, Message: fmt.Sprintf("result check took longer than %s", resultCheckTime)}
	}
}

// resultCheckTime is ResultCheckTime, a variable so a test can prove the
// bound is enforced without a result slow enough to take 100 ms.
var resultCheckTime = ResultCheckTime

func (s *ResultSchema) check(data jsontext.Value, maxBytes int) error {
	if err := CheckJSON(data, JSONLimits{MaxBytes: maxBytes, MaxDepth: MaxResultDepth, MaxMembers: MaxResultMembers}); err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return &Error{Code: CodeInvalid, Message: "invalid JSON", Err: err}
	}
	if err := s.schema.Validate(inst); err != nil {
		return schemaError(err)
	}
	return nil
}
