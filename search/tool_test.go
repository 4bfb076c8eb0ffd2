package search

import (
	"reflect"
	"testing"

	"github.com/go-json-experiment/json"
)

// readToolObject reads what json.Unmarshal reads into a toolObject, and
// fails where it fails.
func TestReadToolObjectAsUnmarshal(t *testing.T) {
	for _, in := range []string{
		`{}`, `null`, ` {"title":"T"} `,
		`{"name":"x","title":"T","description":"D","annotations":{"title":"A","readOnlyHint":true},"inputSchema":{"type":"object","properties":{"b":{"type":"string","title":"B","description":"bee"},"a":{"description":"ay","enum":[1,2,{"x":null}]}},"required":["a"]}}`,
		`{"title":null,"annotations":null,"inputSchema":null}`,
		`{"inputSchema":{"properties":null}}`,
		`{"inputSchema":{"properties":{"p":null}}}`,
		`{"inputSchema":{"properties":{}}}`,
		`{"title":"\u0054\u00e9","description":"a\nb"}`,
		`{"ti\u0074le":"escaped name"}`,
		`{"Title":"other case","DESCRIPTION":"x"}`,
		`{"x":{"title":"nested, not ours"},"outputSchema":{"properties":{"o":{"title":"no"}}}}`,
		// errors
		``, `[]`, `"s"`, `{"title":5}`, `{"title":{}}`, `{"annotations":"x"}`, `{"inputSchema":[]}`,
		`{"inputSchema":{"properties":[]}}`, `{"inputSchema":{"properties":{"p":"x"}}}`,
		`{"inputSchema":{"properties":{"p":{"title":true}}}}`, `{"title":"a","title":"b"}`,
		`{"x":1,"x":2}`, `{"title":"a"} {}`, `{"title":"a"`, `{"title":"\xff"}`, `{"a":[1,}`,
	} {
		var want toolObject
		wantErr := json.Unmarshal([]byte(in), &want)
		got, err := readToolObject([]byte(in))
		if (err != nil) != (wantErr != nil) {
			t.Errorf("%s: error %v, json.Unmarshal's %v", in, err, wantErr)
			continue
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%s: read %+v, json.Unmarshal %+v", in, got, want)
		}
	}
}
