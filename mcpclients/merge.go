package mcpclients

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// jsonMember is one member of a JSON object, its value as written.
type jsonMember struct {
	name  string
	value jsontext.Value
}

// merge returns old with the entry set under its section (and, for
// VS Code, its inputs set by id): every other member, server and input
// keeps its place and its exact value text. A nil old is no file. action
// is Created, Added, Replaced or Unchanged.
func merge(old []byte, e *Entry) (out []byte, action string, err error) {
	var top []jsonMember
	action = Created
	if old != nil {
		action = Added
	}
	if len(bytes.TrimSpace(old)) > 0 {
		if top, err = readObject(old); err != nil {
			switch {
			case errors.Is(err, errNotObject):
				return nil, "", err
			case hasJSONComments(old):
				return nil, "", fmt.Errorf("not plain JSON: it has comments")
			}
			return nil, "", fmt.Errorf("not valid JSON: %s", strings.TrimPrefix(err.Error(), "jsontext: "))
		}
	}
	entry, err := marshal(e.Server)
	if err != nil {
		return nil, "", err
	}
	var servers []jsonMember
	at := slices.IndexFunc(top, func(m jsonMember) bool { return m.name == e.Section })
	if at >= 0 {
		if servers, err = readObject(top[at].value); err != nil {
			return nil, "", fmt.Errorf("%q is not an object of servers", e.Section)
		}
	} else {
		top = append(top, jsonMember{name: e.Section})
		at = len(top) - 1
	}
	if i := slices.IndexFunc(servers, func(m jsonMember) bool { return m.name == e.Key }); i >= 0 {
		if sameJSON(servers[i].value, entry) && inputsPresent(top, e) {
			return old, Unchanged, nil
		}
		servers[i].value = entry
		action = Replaced
	} else {
		servers = append(servers, jsonMember{name: e.Key, value: entry})
	}
	if top[at].value, err = writeObject(servers); err != nil {
		return nil, "", err
	}
	if len(e.Inputs) > 0 {
		if top, err = mergeInputs(top, e.Inputs); err != nil {
			return nil, "", err
		}
	}
	v, err := writeObject(top)
	if err != nil {
		return nil, "", err
	}
	if err := v.Indent(jsontext.WithIndent("  "), jsontext.PreserveRawStrings(true), jsontext.EscapeForHTML(false)); err != nil {
		return nil, "", err
	}
	return append(v, '\n'), action, nil
}

// mergeInputs sets VS Code's inputs by id in the "inputs" array, keeping
// every other input as it was.
func mergeInputs(top []jsonMember, inputs []map[string]any) ([]jsonMember, error) {
	var list []jsontext.Value
	at := slices.IndexFunc(top, func(m jsonMember) bool { return m.name == "inputs" })
	if at >= 0 {
		if err := json.Unmarshal(top[at].value, &list); err != nil {
			return nil, fmt.Errorf(`"inputs" is not an array`)
		}
	} else {
		top = append(top, jsonMember{name: "inputs"})
		at = len(top) - 1
	}
	for _, in := range inputs {
		v, err := marshal(in)
		if err != nil {
			return nil, err
		}
		i := slices.IndexFunc(list, func(x jsontext.Value) bool { return inputID(x) == in["id"] })
		if i >= 0 {
			list[i] = v
		} else {
			list = append(list, v)
		}
	}
	var buf bytes.Buffer
	enc := jsontext.NewEncoder(&buf, jsontext.PreserveRawStrings(true), jsontext.EscapeForHTML(false))
	enc.WriteToken(jsontext.BeginArray)
	for _, v := range list {
		if err := enc.WriteValue(v); err != nil {
			return nil, err
		}
	}
	if err := enc.WriteToken(jsontext.EndArray); err != nil {
		return nil, err
	}
	top[at].value = bytes.TrimSpace(buf.Bytes())
	return top, nil
}

func inputID(v jsontext.Value) string {
	var x struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(v, &x) != nil {
		return ""
	}
	return x.ID
}

// inputsPresent reports whether the file's inputs already hold e's inputs.
func inputsPresent(top []jsonMember, e *Entry) bool {
	if len(e.Inputs) == 0 {
		return true
	}
	at := slices.IndexFunc(top, func(m jsonMember) bool { return m.name == "inputs" })
	if at < 0 {
		return false
	}
	var list []jsontext.Value
	if json.Unmarshal(top[at].value, &list) != nil {
		return false
	}
	for _, in := range e.Inputs {
		want, _ := marshal(in)
		if !slices.ContainsFunc(list, func(v jsontext.Value) bool { return sameJSON(v, want) }) {
			return false
		}
	}
	return true
}

// sameJSON compares two values as JSON (member order and spacing aside).
func sameJSON(a, b []byte) bool {
	x, y := jsontext.Value(slices.Clone(a)), jsontext.Value(slices.Clone(b))
	if x.Canonicalize() != nil || y.Canonicalize() != nil {
		return false
	}
	return bytes.Equal(x, y)
}

var errNotObject = errors.New("not a JSON object")

// readObject reads a JSON object's members in order, each value as written.
// Duplicate names and invalid UTF-8 are refused, as a client would.
func readObject(b []byte) ([]jsonMember, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(b))
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	if tok.Kind() != '{' {
		return nil, errNotObject
	}
	var ms []jsonMember
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		name := tok.String() // before the next read voids tok
		v, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		ms = append(ms, jsonMember{name: name, value: v.Clone()})
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		if err == nil {
			err = fmt.Errorf("more than one value")
		}
		return nil, err
	}
	return ms, nil
}

// writeObject writes members back, keeping each value's text.
func writeObject(ms []jsonMember) (jsontext.Value, error) {
	var buf bytes.Buffer
	enc := jsontext.NewEncoder(&buf, jsontext.PreserveRawStrings(true), jsontext.EscapeForHTML(false))
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return nil, err
	}
	for _, m := range ms {
		if err := enc.WriteToken(jsontext.String(m.name)); err != nil {
			return nil, err
		}
		if err := enc.WriteValue(m.value); err != nil {
			return nil, err
		}
	}
	if err := enc.WriteToken(jsontext.EndObject); err != nil {
		return nil, err
	}
	return jsontext.Value(bytes.TrimSpace(buf.Bytes())), nil
}

// hasJSONComments reports whether b has a // or /* comment outside its
// strings: JSON with comments, as VS Code and Cursor accept in their files.
func hasJSONComments(b []byte) bool {
	in := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && c == '/' && i+1 < len(b) && (b[i+1] == '/' || b[i+1] == '*'):
			return true
		}
	}
	return false
}
