package search

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
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

// scanToolObject reads what the decoder reads wherever it does not give
// up, and gives up on none of the objects a publish makes.
func TestScanToolObjectAsDecoder(t *testing.T) {
	made := []string{
		`{"title":"Bench p0000.c00","description":"Bench command p0000.c00\n\nA generated command for the Rukh benchmark; it answers ok.","inputSchema":{"type":"object","properties":{"title":{"type":"string","description":"the item's title","maxLength":200},"tags":{"type":"array","description":"a tag (repeat for several)","items":{"type":"string","maxLength":32},"maxItems":16},"priority":{"type":"integer","description":"1 (low) to 5 (urgent)","minimum":1,"maximum":5,"default":3}},"additionalProperties":false},"outputSchema":{"type":"object","properties":{"outcome":{"type":"string","enum":["succeeded","rejected"]}},"required":["outcome"],"additionalProperties":false},"annotations":{"title":"Bench p0000.c00","readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}}`,
		`{"name":"x","title":"T","description":"D","annotations":{"title":"A","readOnlyHint":true},"inputSchema":{"type":"object","properties":{"b":{"type":"string","title":"B","description":"bee"},"a":{"description":"ay","enum":[1,2,{"x":null}]}},"required":["a"]}}`,
		`{}`, `null`, ` {"title":"T"} `, `{"title":null,"annotations":null,"inputSchema":null}`,
		`{"inputSchema":{"properties":null}}`, `{"inputSchema":{"properties":{"p":null}}}`, `{"inputSchema":{"properties":{}}}`,
		`{"description":"tab\there, \"quoted\", back\\slash, \/ \b\f\r","title":"Zoë 日本語"}`,
		`{"x":[-0,1.5,-2e10,3E+2,4e-1,true,false,null,[],[[]],{},""]}`,
		`{"Title":"other case","DESCRIPTION":"x"}`,
	}
	others := []string{
		`{"title":"\u0054\u00e9"}`, `{"ti\u0074le":"escaped name"}`, `{"title":"\x"}`,
		``, `[]`, `"s"`, `{"title":5}`, `{"title":{}}`, `{"annotations":"x"}`, `{"inputSchema":[]}`,
		`{"inputSchema":{"properties":[]}}`, `{"inputSchema":{"properties":{"p":"x"}}}`,
		`{"inputSchema":{"properties":{"p":{"title":true}}}}`, `{"title":"a","title":"b"}`,
		`{"x":1,"x":2}`, `{"x":{"y":1,"y":2}}`, `{"title":"a"} {}`, `{"title":"a"`, `{"title":"\xff"}`, `{"a":[1,}`,
		`{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":1e}`, `{"a":nul}`, `{"a":truex}`, `{"a":"x` + "\n" + `"}`,
		`nullx`, `{"a":1,}`, `{,}`, `{"a" 1}`, `{"a":[1 2]}`, "\ufeff{}",
	}
	for _, in := range append(made, others...) {
		want, wantErr := decodeToolObject([]byte(in))
		got, ok := scanToolObject([]byte(in))
		if !ok {
			if slices.Contains(made, in) {
				t.Errorf("%s: not scanned", in)
			}
			continue
		}
		if wantErr != nil {
			t.Errorf("%s: scanned, the decoder fails: %v", in, wantErr)
		} else if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: scanned %+v, decoded %+v", in, got, want)
		}
	}
	for _, in := range append(made, others...) {
		checkScanDoc(t, in, slices.Contains(made, in))
	}
}

// checkScanDoc checks that scanObjectDoc makes the document objectDoc
// makes through the decoder, wherever it does not give up (and, with
// must, that it does not).
func checkScanDoc(t *testing.T, in string, must bool) {
	t.Helper()
	got, ok := scanObjectDoc([]byte(in))
	if !ok {
		if must {
			t.Errorf("%s: document not scanned", in)
		}
		return
	}
	o, err := decodeToolObject([]byte(in))
	if err != nil {
		t.Fatalf("%q: document scanned, the decoder fails: %v", in, err)
	}
	title := o.Title
	if title == "" {
		title = o.Annotations.Title
	}
	want := Doc{Fields: []Field{{title, WeightTitle}, {o.Description, WeightDescription}}}
	for _, id := range slices.Sorted(maps.Keys(o.InputSchema.Properties)) {
		p := o.InputSchema.Properties[id]
		want.Fields = append(want.Fields, Field{id, WeightParam}, Field{p.Title + " " + p.Description, WeightParamDescription})
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: document scanned %+v, decoded %+v", in, got, want)
	}
}

func FuzzScanToolObject(f *testing.F) {
	f.Add(`{"title":"T","description":"a\nb","inputSchema":{"properties":{"p":{"title":"P","description":"d"}}},"x":[1,{"y":null}]}`)
	f.Add(`{"annotations":{"title":"A"},"inputSchema":{"properties":null}}`)
	f.Fuzz(func(t *testing.T, in string) {
		got, ok := scanToolObject([]byte(in))
		if !ok {
			return
		}
		want, err := decodeToolObject([]byte(in))
		if err != nil {
			t.Fatalf("%q: scanned, the decoder fails: %v", in, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: scanned %+v, decoded %+v", in, got, want)
		}
		checkScanDoc(t, in, true)
	})
}

// An object of more members than the scanner checks pairwise goes to the
// decoder, so a tool of very many params costs what it cost before.
func TestScanToolObjectDeclinesLargeObjects(t *testing.T) {
	props := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"p%d":{"description":"d"}`, i)
		}
		return `{"title":"T","inputSchema":{"properties":{` + b.String() + `}}}`
	}
	if _, ok := scanToolObject([]byte(props(scanMembers))); !ok {
		t.Errorf("an object of %d members was not scanned", scanMembers)
	}
	for _, n := range []int{scanMembers + 1, 30000} {
		if _, ok := scanToolObject([]byte(props(n))); ok {
			t.Errorf("an object of %d members was scanned", n)
		}
	}
	checkScanDoc(t, props(scanMembers), true)
}
