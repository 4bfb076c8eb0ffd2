package policy

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
)

// A tool body written by hand is the encoder's, byte for byte, and where
// the hand cannot tell it leaves the body to the encoder.
func TestAppendWireBodyAsEncoder(t *testing.T) {
	yes, no := true, false
	in := jsontext.Value(`{"type":"object","properties":{"a":{"type":"string","description":"x \"q\" \\ y","maxLength":8}},"additionalProperties":false}`)
	out := jsontext.Value(`{"type":"object","properties":{"outcome":{"type":"string","enum":["succeeded"]}},"required":["outcome"]}`)
	for _, w := range []wireBody{
		{InputSchema: in, OutputSchema: out},
		{Title: "T", InputSchema: in, OutputSchema: out},
		{Description: "D\n\nmore <b>&amp;</b> \u2028 é 日本 \x01", InputSchema: in, OutputSchema: out},
		{Title: "T", Description: "D", InputSchema: in, OutputSchema: out, Annotations: &wireAnnotations{}},
		{Title: "T", InputSchema: in, OutputSchema: out, Annotations: &wireAnnotations{Title: "A"}},
		{Title: "T", InputSchema: in, OutputSchema: out, Annotations: &wireAnnotations{ReadOnlyHint: &yes}},
		{Title: "T", InputSchema: in, OutputSchema: out, Annotations: &wireAnnotations{Title: "A", ReadOnlyHint: &yes, DestructiveHint: &no, IdempotentHint: &yes, OpenWorldHint: &no}},
		{InputSchema: in, OutputSchema: out, Annotations: &wireAnnotations{OpenWorldHint: &no}},
		{Title: "T", InputSchema: in, OutputSchema: out, Execution: &wireExecution{TaskSupport: "required"}},
		{Title: "T", InputSchema: in, OutputSchema: out, Annotations: &wireAnnotations{IdempotentHint: &no}, Execution: &wireExecution{}},
	} {
		var want bytes.Buffer
		if err := json.MarshalWrite(&want, w, json.Deterministic(true)); err != nil {
			t.Fatal(err)
		}
		got, ok := appendWireBody(nil, &w, true)
		if !ok || !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%+v:\n got %s (%v)\nwant %s", w, got, ok, want.Bytes())
		}
	}
	// Left to the encoder.
	for _, w := range []wireBody{
		{Title: "T", InputSchema: jsontext.Value(`{"type": "object"}`), OutputSchema: out},
		{Title: "T", InputSchema: in, OutputSchema: jsontext.Value("{\"a\":\n1}")},
		{Title: "T", InputSchema: in},
		{Title: "\xff", InputSchema: in, OutputSchema: out},
		{Title: "T", InputSchema: in, OutputSchema: out, Annotations: &wireAnnotations{Title: "\xff"}},
	} {
		if got, ok := appendWireBody(nil, &w, true); ok {
			t.Errorf("%+v: written by hand as %s", w, got)
		}
	}
	if _, ok := appendWireBody(nil, &wireBody{InputSchema: in, OutputSchema: out}, false); ok {
		t.Error("a body that is not plain was written by hand")
	}
}

// A body is plain when rukh wrote all of its schemas.
func TestPlainBody(t *testing.T) {
	for _, tc := range []struct {
		c    kernel.Command
		want bool
	}{
		{kernel.Command{}, true},
		{kernel.Command{Execute: kernel.Execute{Result: &kernel.ResultDecl{Kind: kernel.ResultText}}}, true},
		{kernel.Command{Execute: kernel.Execute{Result: &kernel.ResultDecl{Kind: kernel.ResultStructured}}}, false},
		{kernel.Command{Params: []kernel.Param{{ID: "a"}, {ID: "b"}}}, true},
		{kernel.Command{Params: []kernel.Param{{ID: "a"}, {ID: "b"}, {ID: "a"}}}, false},
		{kernel.Command{Params: params(plainParams)}, true},
		{kernel.Command{Params: params(plainParams + 1)}, false}, // left to the encoder's check
		{kernel.Command{Params: params(30000)}, false},
	} {
		if got := plainBody(&tc.c); got != tc.want {
			t.Errorf("%+v: plain %v, want %v", tc.c, got, tc.want)
		}
	}
}

// params are n params of distinct ids.
func params(n int) []kernel.Param {
	ps := make([]kernel.Param, n)
	for i := range ps {
		ps[i].ID = fmt.Sprintf("p%d", i)
	}
	return ps
}
