package kernel

import (
	"slices"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// object builds one JSON object with members in the order they are added,
// so generated schemas are byte-for-byte deterministic. A member that is an
// object is written into the same bytes (open, then close): a tool's
// schema is made for every command a publish binds, and a buffer for each
// nested object and value was most of what making it allocated.
type object struct {
	b    []byte
	some bool // the object being written has a member
}

// key starts member k.
func (o *object) key(k string) {
	if o.some {
		o.b = append(o.b, ',')
	} else {
		o.b = append(o.b, '{')
	}
	o.some = true
	o.b, _ = jsontext.AppendQuote(o.b, k)
	o.b = append(o.b, ':')
}

func (o *object) raw(k string, v []byte) *object {
	o.key(k)
	o.b = append(o.b, v...)
	return o
}

func (o *object) str(k, v string) *object {
	o.key(k)
	o.b, _ = jsontext.AppendQuote(o.b, v)
	return o
}

func (o *object) int(k string, n int) *object {
	o.key(k)
	o.b = strconv.AppendInt(o.b, int64(n), 10)
	return o
}

// value is member k with v as appendValue writes it.
func (o *object) value(k string, v any) *object {
	o.key(k)
	o.b = appendValue(o.b, v)
	return o
}

// open starts member k, an object whose members are added next, up to
// close.
func (o *object) open(k string) {
	o.key(k)
	o.some = false
}

// close ends the object open started.
func (o *object) close() {
	if o.some {
		o.b = append(o.b, '}')
	} else {
		o.b = append(o.b, "{}"...)
	}
	o.some = true
}

func (o *object) bytes() []byte {
	if !o.some {
		return append(o.b, "{}"...)
	}
	return append(o.b, '}')
}

func stringArray(ss []string) []byte {
	b := []byte{'['}
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b, _ = jsontext.AppendQuote(b, s)
	}
	return append(b, ']')
}

// scalarSchema renders the JSON Schema of one scalar of r.
func scalarSchema(o *object, r *rules, description string) {
	switch r.typ {
	case TypeDecimal:
		o.str("type", "string")
	default:
		o.str("type", string(r.typ))
	}
	if description != "" || r.typ == TypeDecimal {
		d := description
		if r.typ == TypeDecimal {
			note := "Exact decimal number as a string, such as \"1.5\""
			if r.min != nil || r.max != nil {
				note += " (" + r.mustBe()[len("must be a decimal number "):] + ")"
			}
			note += "; a JSON number is read from its exact text too."
			if d != "" {
				d += "\n\n"
			}
			d += note
		}
		o.str("description", d)
	}
	switch r.typ {
	case TypeString:
		if r.minLen >= 0 {
			o.int("minLength", r.minLen)
		}
		// The advertised bound is exactly the enforced one: both count
		// code points, as JSON Schema's maxLength does.
		if r.maxLen >= 0 && r.maxLen < MaxStringChars {
			o.int("maxLength", r.maxLen)
		} else {
			o.int("maxLength", MaxStringChars)
		}
	case TypeInteger, TypeNumber:
		lo, hi := r.min, r.max
		if r.typ == TypeInteger {
			// The int64 range is a real limit of the input grammar.
			if lo == nil {
				lo = int64(-1 << 63)
			}
			if hi == nil {
				hi = int64(1<<63 - 1)
			}
		}
		if lo != nil {
			o.value("minimum", lo)
		}
		if hi != nil {
			o.value("maximum", hi)
		}
	}
	if len(r.enum) > 0 {
		o.value("enum", r.enum)
	}
}

// InputSchema returns the MCP input schema of c: JSON Schema 2020-12, a
// closed root object whose properties are keyed by param id in declaration
// order. Params that are required and have no default are listed in
// "required". The bytes are deterministic.
func InputSchema(c *Command) (jsontext.Value, error) {
	b, err := AppendInputSchema(nil, c)
	return jsontext.Value(b), err
}

// AppendInputSchema appends InputSchema(c) to b; on an error b is
// returned as it was.
func AppendInputSchema(b []byte, c *Command) ([]byte, error) {
	ss, err := specs(c)
	if err != nil {
		return b, err
	}
	o := &object{b: b}
	o.str("type", "object")
	o.open("properties")
	var required []string
	for i := range ss {
		s := &ss[i]
		var def any
		if s.p.Default != nil {
			v, err := s.fromJSON(s.p.Default, "")
			if err != nil {
				return b, Errorf(CodeInternal, "default does not convert").AtPath("/params/" + strconv.Itoa(i) + "/default").Wrap(err)
			}
			def = v
		} else if s.p.Required {
			required = append(required, s.p.ID)
		}
		o.open(s.p.ID)
		if s.lr != nil {
			o.str("type", "array")
			if s.p.Description != "" {
				o.str("description", s.p.Description)
			}
			o.open("items")
			scalarSchema(o, &s.lr.items, "")
			o.close()
			if s.lr.minItems >= 0 {
				o.int("minItems", s.lr.minItems)
			}
			o.int("maxItems", s.lr.maxCount())
		} else {
			scalarSchema(o, s.r, s.p.Description)
		}
		if s.p.Default != nil {
			o.value("default", def)
		}
		o.close()
	}
	o.close()
	if len(required) > 0 {
		o.raw("required", stringArray(required))
	}
	o.raw("additionalProperties", []byte("false"))
	return o.bytes(), nil
}

// Outcomes lists every final outcome in a fixed order.
var Outcomes = []Outcome{Succeeded, CommandFailed, ExecutionFailed, Rejected, Cancelled}

// OutputSchema returns the MCP output schema of c: the closed core envelope
// {invocationId, outcome, reason?, commandResult?}, where commandResult is
// the declared kind ({kind:"text",text} or {kind:"structured",data} with the
// publisher's schema on data). A command without a declared result gets no
// commandResult property. The bytes are deterministic.
func OutputSchema(c *Command) (jsontext.Value, error) { return outputSchema(c, false) }

func outputSchema(c *Command, started bool) (jsontext.Value, error) {
	v, shared, err := sharedOutputSchema(c, started)
	if err == nil && shared {
		v = slices.Clone(v)
	}
	return v, err
}

// SharedOutputSchema is OutputSchema(c) (StartedOutputSchema when started)
// without a copy of its own: for most commands it is bytes shared by every
// caller, which must not be changed. A publish makes one for each tool,
// and reads it only to encode the tool.
func SharedOutputSchema(c *Command, started bool) (jsontext.Value, error) {
	v, _, err := sharedOutputSchema(c, started)
	return v, err
}

// sharedOutputSchema also says whether the bytes are shared.
func sharedOutputSchema(c *Command, started bool) (v jsontext.Value, shared bool, err error) {
	r := c.Execute.Result
	if r == nil || r.Kind == ResultText {
		// The same few bytes for most tools of a catalogue: built once.
		i := 0
		if r != nil {
			i = 1
		}
		if started {
			i += 2
		}
		return fixedOutputSchemas()[i], true, nil
	}
	v, err = buildOutputSchema(r, started)
	return v, false, err
}

// fixedOutputSchemas are the output schemas that depend on nothing but
// whether a job is started and whether the result is text: without a
// result, with text, then the same two for a started job.
var fixedOutputSchemas = sync.OnceValue(func() (v [4]jsontext.Value) {
	for i := range v {
		var r *ResultDecl
		if i%2 == 1 {
			r = &ResultDecl{Kind: ResultText}
		}
		b, _ := buildOutputSchema(r, i >= 2)
		v[i] = slices.Clip(b) // an append by a caller copies
	}
	return v
})

func buildOutputSchema(r *ResultDecl, started bool) (jsontext.Value, error) {
	outcomes := make([]string, len(Outcomes))
	for i, o := range Outcomes {
		outcomes[i] = string(o)
	}
	if started {
		outcomes = append(outcomes, string(OutcomeStarted))
	}
	props := &object{}
	props.raw("invocationId", (&object{}).str("type", "string").bytes())
	props.raw("outcome", (&object{}).str("type", "string").raw("enum", stringArray(outcomes)).bytes())
	props.raw("reason", (&object{}).str("type", "string").bytes())
	if started {
		props.raw("taskId", (&object{}).str("type", "string").bytes())
	}
	if r != nil {
		cr := &object{}
		cr.str("type", "object")
		crp := &object{}
		switch r.Kind {
		case ResultText:
			crp.raw("kind", []byte(`{"const":"text"}`))
			crp.raw("text", []byte(`{"type":"string"}`))
			cr.raw("properties", crp.bytes()).raw("required", []byte(`["kind","text"]`))
		case ResultStructured:
			data := r.Schema.Clone()
			if err := data.Compact(); err != nil {
				return nil, Errorf(CodeInternal, "result schema is not valid JSON").Wrap(err)
			}
			crp.raw("kind", []byte(`{"const":"structured"}`))
			crp.raw("data", data)
			cr.raw("properties", crp.bytes()).raw("required", []byte(`["kind","data"]`))
		default:
			return nil, Errorf(CodeInternal, "%s", "unknown result kind "+strconv.Quote(r.Kind))
		}
		cr.raw("additionalProperties", []byte("false"))
		props.raw("commandResult", cr.bytes())
	}
	root := &object{}
	root.str("type", "object")
	root.raw("properties", props.bytes())
	root.raw("required", []byte(`["invocationId","outcome"]`))
	root.raw("additionalProperties", []byte("false"))
	return jsontext.Value(root.bytes()), nil
}
