package kernel

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// JSONLimits bounds one strict JSON pass. A zero or negative field means no
// limit of that kind (jsontext still caps nesting at 10,000).
type JSONLimits struct {
	MaxBytes   int // size of the whole text
	MaxDepth   int // nesting of objects and arrays; {} is depth 1
	MaxMembers int // object members plus array elements, in total
}

// checkDecoder is what CheckJSON reads with, kept between checks: a fresh
// decoder per message was most of its allocations.
type checkDecoder struct {
	r     bytes.Reader
	d     jsontext.Decoder
	stack []checkFrame
}

type checkFrame struct{ object, expectName bool }

var checkDecoders = sync.Pool{New: func() any { return new(checkDecoder) }}

// maxPooledCheck bounds the texts whose decoder is kept: a larger one's
// buffer is left to the collector.
const maxPooledCheck = 64 << 10

// CheckJSON makes one strict pass over data: exactly one JSON value, valid
// UTF-8, no lone surrogate escapes, no duplicate object member names, and
// within lim. Errors are CodeInvalid and name the JSON pointer where the
// problem is.
func CheckJSON(data []byte, lim JSONLimits) error {
	if lim.MaxBytes > 0 && len(data) > lim.MaxBytes {
		return Errorf(CodeInvalid, "JSON text is %d bytes, over the limit of %d", len(data), lim.MaxBytes)
	}
	cd := checkDecoders.Get().(*checkDecoder)
	cd.r.Reset(data)
	d := &cd.d
	d.Reset(&cd.r)
	stack := cd.stack[:0]
	defer func() {
		cd.r.Reset(nil)
		cd.stack = stack[:0]
		if len(data) <= maxPooledCheck { // the decoder's buffer grew to data's size
			checkDecoders.Put(cd)
		}
	}()
	members := 0
	for {
		tok, err := d.ReadToken()
		if err != nil {
			return JSONError(err)
		}
		k := tok.Kind()
		if k == '}' || k == ']' {
			stack = stack[:len(stack)-1]
		} else if n := len(stack); n > 0 {
			top := &stack[n-1]
			counts := !top.object || top.expectName
			if top.object {
				top.expectName = !top.expectName
			}
			if counts {
				members++
				if lim.MaxMembers > 0 && members > lim.MaxMembers {
					return Errorf(CodeInvalid, "more than %d object members and array elements", lim.MaxMembers).
						AtPath(string(d.StackPointer()))
				}
			}
		}
		if k == '{' || k == '[' {
			stack = append(stack, checkFrame{object: k == '{', expectName: true})
			if lim.MaxDepth > 0 && len(stack) > lim.MaxDepth {
				return Errorf(CodeInvalid, "nested deeper than %d", lim.MaxDepth).AtPath(string(d.StackPointer()))
			}
		}
		if len(stack) == 0 {
			break
		}
	}
	if _, err := d.ReadToken(); err != io.EOF {
		if err != nil {
			return JSONError(err)
		}
		return Errorf(CodeInvalid, "several top-level JSON values")
	}
	return nil
}

// AppendJSONFloat appends f as a JSON number in the shortest form that reads
// back as f, as JavaScript prints numbers (and JSON canonicalization, RFC
// 8785, requires): exponent notation below 1e-6 and from 1e21 up, "e-7"
// rather than "e-07", and -0 kept as -0. It is the kernel's own because
// jsontext.AppendFloat is missing when the json module stands for the
// standard library's encoding/json/v2. f must be finite.
func AppendJSONFloat(dst []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// strconv pads a one-digit exponent to two.
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// JSONError turns a jsontext or json error into a CodeInvalid *Error located
// at the JSON pointer the library reported, so every strict reader words
// its errors the same way.
func JSONError(err error) *Error {
	var ke *Error
	if errors.As(err, &ke) {
		return ke
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return Errorf(CodeInvalid, "unexpected end of JSON input")
	}
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		ptr := se.JSONPointer
		msg := "invalid JSON"
		if se.Err != nil {
			msg = se.Err.Error()
		}
		if errors.Is(se.Err, jsontext.ErrDuplicateName) {
			msg += " " + strconv.Quote(ptr.LastToken())
			ptr = ptr.Parent()
		}
		return Errorf(CodeInvalid, "%s", msg).AtPath(string(ptr))
	}
	var me *json.SemanticError
	if errors.As(err, &me) {
		if me.Err != nil {
			var inner *Error
			if errors.As(me.Err, &inner) {
				e := *inner
				if e.Path == "" {
					e.Path = string(me.JSONPointer)
				}
				return &e
			}
		}
		msg := semanticMessage(me)
		e := Errorf(CodeInvalid, "%s", msg).AtPath(string(me.JSONPointer))
		if errors.Is(me.Err, json.ErrUnknownName) {
			e.Hint = DidYouMean(me.JSONPointer.LastToken(), "", memberNames(me.GoType))
		}
		return e
	}
	return Errorf(CodeInvalid, "%s", strings.TrimPrefix(err.Error(), "jsontext: "))
}

// memberNames lists the JSON member names of struct type t (or of what
// it points to): what an unknown member may have been meant as.
func memberNames(t reflect.Type) []string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var names []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported():
			continue
		case name == "":
			name = f.Name
		}
		names = append(names, name)
	}
	return names
}

func semanticMessage(me *json.SemanticError) string {
	if me.Err != nil {
		if errors.Is(me.Err, json.ErrUnknownName) {
			return "unknown member " + strconv.Quote(me.JSONPointer.LastToken())
		}
		return strings.TrimPrefix(me.Err.Error(), "json: ")
	}
	if me.JSONKind != 0 && me.GoType != nil {
		return fmt.Sprintf("cannot use JSON %s here, want %s", kindName(me.JSONKind), goTypeName(me.GoType.String()))
	}
	return "invalid value"
}

func kindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 'f', 't':
		return "boolean"
	case '"':
		return "string"
	case '0':
		return "number"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "value"
}

func goTypeName(t string) string {
	switch {
	case t == "string", strings.HasSuffix(t, "ParamType"):
		return "a string"
	case t == "bool", t == "*bool":
		return "a boolean"
	case t == "int", t == "*int":
		return "an integer"
	case strings.HasPrefix(t, "[]"):
		return "an array"
	}
	return "an object"
}

// InFile locates an error about a JSON text in the file it came from: the
// message gains name:line:column, of the syntax error or else of the value
// (or member name) at the error's JSON pointer, and keeps the pointer, so a
// person or an editor can jump there. Errors that are not *Error pass
// through.
func InFile(name string, data []byte, err error) error {
	var ke *Error
	if !errors.As(err, &ke) {
		return err
	}
	c := *ke
	where := name
	if line, col, ok := jsonPosition(data, ke.Path); ok {
		where = fmt.Sprintf("%s:%d:%d", name, line, col)
	}
	c.Message = where + ": " + ke.Message
	if ke.Path != "" {
		c.Message = where + ": " + ke.Path + ": " + ke.Message
	}
	c.Path = ""
	if off, ok := syntaxOffset(data); ok && trailingComma(data, off) {
		c.Message += " (JSON allows no comma before a closing bracket)"
	}
	return &c
}

func trailingComma(data []byte, off int64) bool {
	if off >= int64(len(data)) || data[off] != ',' {
		return false
	}
	rest := bytes.TrimLeft(data[off+1:], " \t\r\n")
	return len(rest) > 0 && (rest[0] == '}' || rest[0] == ']')
}

// jsonPosition finds the 1-based line and column (in characters) of the
// first syntax error in data or, when the text is sound, of the value at
// ptr or its nearest enclosing value.
func jsonPosition(data []byte, ptr string) (line, col int, ok bool) {
	off, found := syntaxOffset(data)
	if !found {
		if ptr != "" && !strings.HasPrefix(ptr, "/") {
			return 0, 0, false
		}
		for p := jsontext.Pointer(ptr); ; p = p.Parent() {
			if off, found = pointerOffset(data, string(p)); found || p == "" {
				break
			}
		}
	}
	if !found {
		return 0, 0, false
	}
	before := data[:min(int(off), len(data))]
	nl := bytes.LastIndexByte(before, '\n')
	return bytes.Count(before, []byte{'\n'}) + 1, utf8.RuneCount(before[nl+1:]) + 1, true
}

// syntaxOffset returns where data stops being one JSON value.
func syntaxOffset(data []byte) (int64, bool) {
	d := jsontext.NewDecoder(bytes.NewReader(data))
	depth := 0
	for {
		tok, err := d.ReadToken()
		var se *jsontext.SyntacticError
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF && depth > 0:
			return int64(len(bytes.TrimRight(data, " \t\r\n"))), true
		case errors.As(err, &se):
			return se.ByteOffset, true
		case err == io.EOF:
			return 0, false // an empty text is reported without a position
		case err != nil:
			return d.InputOffset(), true
		}
		switch tok.Kind() {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		}
		if depth == 0 {
			end := d.InputOffset()
			if _, err := d.ReadToken(); err == io.EOF {
				return 0, false
			}
			return skipSpace(data, end), true // a second top-level value
		}
	}
}

// pointerOffset returns where the token at ptr starts: a member's name for
// an object member, the value for an array element or the root.
func pointerOffset(data []byte, ptr string) (int64, bool) {
	d := jsontext.NewDecoder(bytes.NewReader(data))
	for {
		start := d.InputOffset()
		tok, err := d.ReadToken()
		if err != nil {
			return 0, false
		}
		if k := tok.Kind(); k != '}' && k != ']' && string(d.StackPointer()) == ptr {
			return skipSpace(data, start), true
		}
	}
}

func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n,:", data[off]) >= 0 {
		off++
	}
	return off
}
