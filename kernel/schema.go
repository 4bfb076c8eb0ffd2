package kernel

import (
	"slices"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// object builds one JSON object with members in the order they are added,
// so generated schemas are byte-for-byte deterministic.
type object struct{ b []byte }

func (o *object) raw(k string, v []byte) *object {
	if len(o.b) == 0 {
		o.b = append(o.b, '{')
	} else {
		o.b = append(o.b, ',')
	}
	o.b, _ = jsontext.AppendQuote(o.b, k)
	o.b = append(o.b, ':')
	o.b = append(o.b, v...)
	return o
}

func (o *object) str(k, v string) *object {
	q, _ := jsontext.AppendQuote(nil, v)
	return o.raw(k, q)
}

func (o *object) int(k string, n int) *object {
	return o.raw(k, strconv.AppendInt(nil, int64(n), 10))
}

func (o *object) bytes() []byte {
	if len(o.b) == 0 {
		return []byte("{}")
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

func valueArray(vs []any) []byte {
	return appendValue(nil, vs)
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
			o.raw("minimum", appendValue(nil, lo))
		}
		if hi != nil {
			o.raw("maximum", appendValue(nil, hi))
		}
	}
	if len(r.enum) > 0 {
		o.raw("enum", valueArray(r.enum))
	}
}

// InputSchema returns the MCP input schema of c: JSON Schema 2020-12, a
// closed root object whose properties are keyed by param id in declaration
// order. Params that are required and have no default are listed in
// "required". The bytes are deterministic.
func InputSchema(c *Command) (jsontext.Value, error) {
	ss, err := specs(c)
	if err != nil {
		return nil, err
	}
	props := &object{}
	var required []string
	for i := range ss {
		s := &ss[i]
		p := &object{}
		if s.lr != nil {
			p.str("type", "array")
			if s.p.Description != "" {
				p.str("description", s.p.Description)
			}
			items := &object{}
			scalarSchema(items, &s.lr.items, "")
			p.raw("items", items.bytes())
			if s.lr.minItems >= 0 {
				p.int("minItems", s.lr.minItems)
			}
			p.int("maxItems", s.lr.maxCount())
		} else {
			scalarSchema(p, s.r, s.p.Description)
		}
		if s.p.Default != nil {
			v, err := s.fromJSON(s.p.Default, "")
			if err != nil {
				return nil, Errorf(CodeInternal, "default does not convert").AtPath("/params/" + strconv.Itoa(i) + "/default").Wrap(err)
			}
			p.raw("default", appendValue(nil, v))
		} else if s.p.Required {
			required = append(required, s.p.ID)
		}
		props.raw(s.p.ID, p.bytes())
	}
	root := &object{}
	root.str("type", "object")
	root.raw("properties", props.bytes())
	if len(required) > 0 {
		root.raw("required", stringArray(required))
	}
	root.raw("additionalProperties", []byte("false"))
	return jsontext.Value(root.bytes()), nil
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
		return slices.Clone(fixedOutputSchemas()[i]), nil
	}
	return buildOutputSchema(r, started)
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
		v[i], _ = buildOutputSchema(r, i >= 2)
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
