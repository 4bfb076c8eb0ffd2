package search

import (
	"maps"
	"slices"

	"github.com/go-json-experiment/json"
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
	var o toolObject
	if err := json.Unmarshal(object, &o); err != nil {
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
