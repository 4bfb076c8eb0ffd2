package search

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// toolObject is what ToolDoc reads of an MCP tool object.
type toolObject struct {
	Title       string `json:"title"`
	Description string `json:"description"`
	Annotations struct {
		Title string `json:"title"`
	} `json:"annotations"`
	InputSchema struct {
		Properties map[string]struct {
			Title       string `json:"title"`
			Description string `json:"description"`
		} `json:"properties"`
	} `json:"inputSchema"`
}

// ToolDoc is the document of one tool: named name on the endpoint, of
// command id command, with tool object object (the tools/list entry, with
// or without its name, which is never indexed: in most naming modes it
// carries a fingerprint). Fields: the command id's words (WeightPath), the
// title or the annotations' title (WeightTitle), the description, each
// input parameter's id (WeightParam) and its title and description
// (WeightParamDescription). Members it does not know are ignored; an
// object that is not JSON is an error.
func ToolDoc(name, command string, object []byte) (Doc, error) {
	d, err := objectDoc(object)
	if err != nil {
		return Doc{}, err
	}
	d.Name = name
	d.Fields = append(d.Fields, Field{command, WeightPath})
	return d, nil
}

// ObjectBag is the bag of a tool object's own fields (ToolDoc's but the
// command id): what a store keeps per tool body.
func ObjectBag(object []byte) (Bag, error) {
	d, err := objectDoc(object)
	if err != nil {
		return nil, err
	}
	return Analyze(d), nil
}

// CommandBag is the bag of a command id's words: merged with the tool
// object's bag (Merge), it is ToolDoc's.
func CommandBag(command string) Bag { return Analyze(Doc{Fields: []Field{{command, WeightPath}}}) }

func objectDoc(object []byte) (Doc, error) {
	if d, ok := scanObjectDoc(object); ok {
		return d, nil
	}
	o, err := decodeToolObject(object)
	if err != nil {
		return Doc{}, err
	}
	title := o.Title
	if title == "" {
		title = o.Annotations.Title
	}
	d := Doc{Fields: []Field{
		{title, WeightTitle},
		{o.Description, WeightDescription},
	}}
	for _, id := range slices.Sorted(maps.Keys(o.InputSchema.Properties)) {
		p := o.InputSchema.Properties[id]
		d.Fields = append(d.Fields, Field{id, WeightParam}, Field{p.Title + " " + p.Description, WeightParamDescription})
	}
	return d, nil
}

// objectReader is a decoder kept for the next object: a publish reads
// every tool body it analyses.
type objectReader struct {
	r bytes.Reader
	d *jsontext.Decoder
}

var objectReaders = sync.Pool{New: func() any {
	or := new(objectReader)
	or.d = jsontext.NewDecoder(&or.r)
	return or
}}

// readToolObject reads what a toolObject holds of object as
// json.Unmarshal would: the objects a publish makes straight from their
// bytes (scanToolObject), any other in one pass of a decoder's tokens.
func readToolObject(object []byte) (toolObject, error) {
	if o, ok := scanToolObject(object); ok {
		return o, nil
	}
	return decodeToolObject(object)
}

// decodeToolObject is readToolObject in one pass of tokens: members it
// does not know are skipped, not decoded.
func decodeToolObject(object []byte) (toolObject, error) {
	or := objectReaders.Get().(*objectReader)
	defer func() {
		or.r.Reset(nil)
		or.d.Reset(&or.r)
		objectReaders.Put(or)
	}()
	or.r.Reset(object)
	or.d.Reset(&or.r)
	d := or.d
	var o toolObject
	err := readMembers(d, func(name string) error {
		switch name {
		case "title":
			return readString(d, &o.Title)
		case "description":
			return readString(d, &o.Description)
		case "annotations":
			return readMembers(d, func(name string) error {
				if name == "title" {
					return readString(d, &o.Annotations.Title)
				}
				return d.SkipValue()
			})
		case "inputSchema":
			return readMembers(d, func(name string) error {
				if name != "properties" {
					return d.SkipValue()
				}
				if d.PeekKind() == 'n' {
					o.InputSchema.Properties = nil
					_, err := d.ReadToken()
					return err
				}
				if o.InputSchema.Properties == nil {
					o.InputSchema.Properties = map[string]struct {
						Title       string `json:"title"`
						Description string `json:"description"`
					}{}
				}
				return readMembers(d, func(id string) error {
					p := o.InputSchema.Properties[id]
					err := readMembers(d, func(name string) error {
						switch name {
						case "title":
							return readString(d, &p.Title)
						case "description":
							return readString(d, &p.Description)
						}
						return d.SkipValue()
					})
					o.InputSchema.Properties[id] = p
					return err
				})
			})
		}
		return d.SkipValue()
	})
	if err != nil {
		return toolObject{}, err
	}
	if _, err := d.ReadToken(); err != io.EOF {
		return toolObject{}, errors.Join(errors.New("search: a tool object has data after it"), err)
	}
	return o, nil
}

// readMembers calls member for each member of the object d reads next,
// with d before the member's value; null is an object without members.
func readMembers(d *jsontext.Decoder, member func(name string) error) error {
	tok, err := d.ReadToken()
	if err != nil {
		return err
	}
	switch tok.Kind() {
	case 'n':
		return nil
	case '{':
	default:
		return fmt.Errorf("search: a tool object member is %v where an object belongs", tok.Kind())
	}
	for d.PeekKind() != '}' {
		name, err := d.ReadToken()
		if err != nil {
			return err
		}
		if err := member(name.String()); err != nil {
			return err
		}
	}
	_, err = d.ReadToken()
	return err
}

// readString reads a string (null leaves dst as it is) into dst.
func readString(d *jsontext.Decoder, dst *string) error {
	tok, err := d.ReadToken()
	if err != nil {
		return err
	}
	switch tok.Kind() {
	case 'n':
		return nil
	case '"':
		*dst = tok.String()
		return nil
	}
	return fmt.Errorf("search: a tool object member is %v where a string belongs", tok.Kind())
}
