package kernel

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

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

// CheckJSON makes one strict pass over data: exactly one JSON value, valid
// UTF-8, no lone surrogate escapes, no duplicate object member names, and
// within lim. Errors are CodeInvalid and name the JSON pointer where the
// problem is.
func CheckJSON(data []byte, lim JSONLimits) error {
	if lim.MaxBytes > 0 && len(data) > lim.MaxBytes {
		return &Error{Code: CodeInvalid, Message: fmt.Sprintf("JSON text is %d bytes, over the limit of %d", len(data), lim.MaxBytes)}
	}
	d := jsontext.NewDecoder(bytes.NewReader(data))
	type frame struct{ object, expectName bool }
	var stack []frame
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
					return &Error{Code: CodeInvalid, Path: string(d.StackPointer()), Message: fmt.Sprintf("more than %d object members and array elements", lim.MaxMembers)}
				}
			}
		}
		if k == '{' || k == '[' {
			stack = append(stack, frame{object: k == '{', expectName: true})
			if lim.MaxDepth > 0 && len(stack) > lim.MaxDepth {
				return &Error{Code: CodeInvalid, Path: string(d.StackPointer()), Message: fmt.Sprintf("nested deeper than %d", lim.MaxDepth)}
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
		return &Error{Code: CodeInvalid, Message: "several top-level JSON values"}
	}
	return nil
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
		return &Error{Code: CodeInvalid, Message: "unexpected end of JSON input"}
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
		return &Error{Code: CodeInvalid, Path: string(ptr), Message: msg}
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
		return &Error{Code: CodeInvalid, Path: string(me.JSONPointer), Message: msg}
	}
	return &Error{Code: CodeInvalid, Message: strings.TrimPrefix(err.Error(), "jsontext: "), Err: nil}
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
