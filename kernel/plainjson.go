package kernel

import (
	"bytes"
	"io"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// PlainReader reads a stored record of a fixed shape (a declaration, a
// template) member by member, without the reflection the first
// json.Unmarshal of each type in a process pays for: the one-shot CLI reads
// such records once and would otherwise spend a noticeable part of its run
// building decoders (docs/performance.md).
//
// It reads only the plain form rukh's encoder writes. Anything else (a
// null, a number where a string belongs, an unknown member of a Confine)
// makes OK false, and the caller decodes the record by reflection instead,
// which accepts or refuses it exactly as before. What the reader returns
// when OK is what json.Unmarshal returns for the same text (a test
// compares the two).
type PlainReader struct {
	d   *jsontext.Decoder
	bad bool
}

// NewPlainReader reads b.
func NewPlainReader(b []byte) *PlainReader {
	return &PlainReader{d: jsontext.NewDecoder(bytes.NewReader(b))}
}

// OK reports whether everything read so far was plain and nothing follows
// the record; call it once the record has been read.
func (r *PlainReader) OK() bool {
	if r.bad {
		return false
	}
	_, err := r.d.ReadToken()
	return err == io.EOF
}

// Fail marks the record as not plain.
func (r *PlainReader) Fail() { r.bad = true }

func (r *PlainReader) token(kind jsontext.Kind) (jsontext.Token, bool) {
	if r.bad || r.d.PeekKind() != kind {
		r.bad = true
		return jsontext.Token{}, false
	}
	t, err := r.d.ReadToken()
	if err != nil {
		r.bad = true
		return jsontext.Token{}, false
	}
	return t, true
}

// Object reads an object, calling member for each name; member reads the
// value (or calls Skip).
func (r *PlainReader) Object(member func(name string)) {
	if _, ok := r.token('{'); !ok {
		return
	}
	for !r.bad && r.d.PeekKind() == '"' {
		t, err := r.d.ReadToken()
		if err != nil {
			r.bad = true
			return
		}
		member(t.String())
	}
	r.token('}')
}

// Array reads an array, calling elem once per element; elem reads it.
func (r *PlainReader) Array(elem func()) {
	if _, ok := r.token('['); !ok {
		return
	}
	for k := r.d.PeekKind(); !r.bad && k != ']' && k != 0; k = r.d.PeekKind() {
		elem()
	}
	r.token(']')
}

// Skip passes over a member the record's type does not have.
func (r *PlainReader) Skip() {
	if r.bad {
		return
	}
	if err := r.d.SkipValue(); err != nil {
		r.bad = true
	}
}

// String reads a string.
func (r *PlainReader) String() string {
	t, _ := r.token('"')
	return t.String()
}

// Bool reads true or false.
func (r *PlainReader) Bool() bool {
	if r.bad {
		return false
	}
	switch r.d.PeekKind() {
	case 't':
		r.token('t')
		return true
	case 'f':
		r.token('f')
		return false
	}
	r.bad = true
	return false
}

// Int64 reads a whole number that fits in 64 bits.
func (r *PlainReader) Int64() int64 {
	if r.bad || r.d.PeekKind() != '0' {
		r.bad = true
		return 0
	}
	v, err := r.d.ReadValue()
	if err != nil {
		r.bad = true
		return 0
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		r.bad = true
	}
	return n
}

// Int reads a whole number that fits in an int.
func (r *PlainReader) Int() int {
	n := r.Int64()
	if int64(int(n)) != n {
		r.bad = true
	}
	return int(n)
}

// IntPtr reads a whole number into a new int.
func (r *PlainReader) IntPtr() *int {
	n := r.Int()
	return &n
}

// BoolPtr reads true or false into a new bool.
func (r *PlainReader) BoolPtr() *bool {
	b := r.Bool()
	return &b
}

// Value reads any value as its exact text (a copy).
func (r *PlainReader) Value() jsontext.Value {
	if r.bad || r.d.PeekKind() == 'n' {
		// a null member of a jsontext.Value is kept as null; the
		// reflective decoder says what else a null means
		r.bad = true
		return nil
	}
	v, err := r.d.ReadValue()
	if err != nil {
		r.bad = true
		return nil
	}
	return bytes.Clone(v)
}

// Values reads an array of values.
func (r *PlainReader) Values() []jsontext.Value {
	vs := []jsontext.Value{}
	r.Array(func() { vs = append(vs, r.Value()) })
	return vs
}

// Strings reads an array of strings.
func (r *PlainReader) Strings() []string {
	ss := []string{}
	r.Array(func() { ss = append(ss, r.String()) })
	return ss
}

// Command reads a declared command.
func (r *PlainReader) Command(c *Command) {
	r.Object(func(name string) {
		switch name {
		case "id":
			c.ID = r.String()
		case "path":
			c.Path = r.Strings()
		case "aliases":
			c.Aliases = [][]string{}
			r.Array(func() { c.Aliases = append(c.Aliases, r.Strings()) })
		case "summary":
			c.Summary = r.String()
		case "description":
			c.Description = r.String()
		case "params":
			c.Params = []Param{}
			r.Array(func() {
				c.Params = append(c.Params, Param{})
				r.param(&c.Params[len(c.Params)-1])
			})
		case "execute":
			r.execute(&c.Execute)
		case "machine":
			c.Machine = &Machine{}
			r.machine(c.Machine)
		case "hints":
			c.Hints = &Hints{}
			r.hints(c.Hints)
		default:
			r.Skip()
		}
	})
}

func (r *PlainReader) param(p *Param) {
	r.Object(func(name string) {
		switch name {
		case "id":
			p.ID = r.String()
		case "type":
			p.Type = ParamType(r.String())
		case "description":
			p.Description = r.String()
		case "flag":
			p.Flag = r.String()
		case "short":
			p.Short = r.String()
		case "position":
			p.Position = r.IntPtr()
		case "required":
			p.Required = r.Bool()
		case "default":
			p.Default = r.Value()
		case "enum":
			p.Enum = r.Values()
		case "minimum":
			p.Minimum = r.Value()
		case "maximum":
			p.Maximum = r.Value()
		case "minLength":
			p.MinLength = r.IntPtr()
		case "maxLength":
			p.MaxLength = r.IntPtr()
		case "minItems":
			p.MinItems = r.IntPtr()
		case "maxItems":
			p.MaxItems = r.IntPtr()
		case "items":
			p.Items = &ItemSpec{}
			r.items(p.Items)
		default:
			r.Skip()
		}
	})
}

func (r *PlainReader) items(it *ItemSpec) {
	r.Object(func(name string) {
		switch name {
		case "type":
			it.Type = ParamType(r.String())
		case "enum":
			it.Enum = r.Values()
		case "minimum":
			it.Minimum = r.Value()
		case "maximum":
			it.Maximum = r.Value()
		case "minLength":
			it.MinLength = r.IntPtr()
		case "maxLength":
			it.MaxLength = r.IntPtr()
		default:
			r.Skip()
		}
	})
}

func (r *PlainReader) execute(e *Execute) {
	r.Object(func(name string) {
		switch name {
		case "program":
			e.Program = r.String()
		case "args":
			e.Args = r.Strings()
		case "mode":
			e.Mode = r.String()
		case "lifetime":
			e.Lifetime = r.String()
		case "result":
			e.Result = &ResultDecl{}
			r.Object(func(name string) {
				switch name {
				case "kind":
					e.Result.Kind = r.String()
				case "schema":
					e.Result.Schema = r.Value()
				default:
					r.Skip()
				}
			})
		case "needs":
			e.Needs = &Needs{}
			r.Object(func(name string) {
				switch name {
				case "network":
					e.Needs.Network = r.Bool()
				case "read":
					e.Needs.Read = r.Strings()
				case "write":
					e.Needs.Write = r.Strings()
				case "processes":
					e.Needs.Processes = r.Int()
				default:
					r.Skip()
				}
			})
		default:
			r.Skip()
		}
	})
}

func (r *PlainReader) machine(m *Machine) {
	r.Object(func(name string) {
		switch name {
		case "eligible":
			m.Eligible = r.Bool()
		case "interaction":
			m.Interaction = r.String()
		case "requiredFeatures":
			m.RequiredFeatures = []Feature{}
			r.Array(func() {
				var f Feature
				r.Object(func(name string) {
					switch name {
					case "id":
						f.ID = r.String()
					case "version":
						f.Version = r.Int()
					default:
						r.Skip()
					}
				})
				m.RequiredFeatures = append(m.RequiredFeatures, f)
			})
		default:
			r.Skip()
		}
	})
}

func (r *PlainReader) hints(h *Hints) {
	r.Object(func(name string) {
		switch name {
		case "title":
			h.Title = r.String()
		case "readOnly":
			h.ReadOnly = r.BoolPtr()
		case "destructive":
			h.Destructive = r.BoolPtr()
		case "idempotent":
			h.Idempotent = r.BoolPtr()
		case "openWorld":
			h.OpenWorld = r.BoolPtr()
		default:
			r.Skip()
		}
	})
}

// Setting reads a package's declared setting.
func (r *PlainReader) Setting(s *Setting) {
	r.Object(func(name string) {
		switch name {
		case "id":
			s.ID = r.String()
		case "type":
			s.Type = ParamType(r.String())
		case "description":
			s.Description = r.String()
		case "required":
			s.Required = r.Bool()
		case "sensitive":
			s.Sensitive = r.Bool()
		case "default":
			s.Default = r.Value()
		case "enum":
			s.Enum = r.Values()
		case "minimum":
			s.Minimum = r.Value()
		case "maximum":
			s.Maximum = r.Value()
		case "minLength":
			s.MinLength = r.IntPtr()
		case "maxLength":
			s.MaxLength = r.IntPtr()
		case "minItems":
			s.MinItems = r.IntPtr()
		case "maxItems":
			s.MaxItems = r.IntPtr()
		case "items":
			s.Items = &ItemSpec{}
			r.items(s.Items)
		default:
			r.Skip()
		}
	})
}

// Confine reads a template's confinement. A member it does not know is
// not plain: Confine's own decoder refuses it.
func (r *PlainReader) Confine() *Confine {
	c := &Confine{}
	r.Object(func(name string) {
		switch name {
		case "network":
			c.Network = r.String()
		case "read":
			c.Read = r.Strings()
		case "write":
			c.Write = r.Strings()
		case "processes":
			c.Processes = r.Int()
		case "memoryMiB":
			c.MemoryMiB = r.Int()
		case "cpuSeconds":
			c.CPUSeconds = r.Int()
		case "fileMiB":
			c.FileMiB = r.Int()
		default:
			r.Fail()
		}
	})
	return c
}
