package search

import "testing"

var benchBody = []byte(`{"title":"Bench p0000.c00","description":"Bench command p0000.c00\n\nA generated command for the Rukh benchmark; it answers ok.","inputSchema":{"type":"object","properties":{"title":{"type":"string","description":"the item's title","maxLength":200},"tags":{"type":"array","description":"a tag (repeat for several)","items":{"type":"string","maxLength":32},"maxItems":16},"priority":{"type":"integer","description":"1 (low) to 5 (urgent)","minimum":1,"maximum":5,"default":3}},"additionalProperties":false},"outputSchema":{"type":"object","properties":{"invocationId":{"type":"string"},"outcome":{"type":"string","enum":["succeeded","command_failed","execution_failed","rejected","cancelled"]},"reason":{"type":"string"},"commandResult":{"type":"object","properties":{"kind":{"const":"text"},"text":{"type":"string"}},"required":["kind","text"],"additionalProperties":false}},"required":["invocationId","outcome"],"additionalProperties":false},"annotations":{"title":"Bench p0000.c00","readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}}`)

func BenchmarkScanToolObject(b *testing.B) {
	for b.Loop() {
		if _, ok := scanToolObject(benchBody); !ok {
			b.Fatal("not scanned")
		}
	}
}

func BenchmarkDecodeToolObject(b *testing.B) {
	for b.Loop() {
		if _, err := decodeToolObject(benchBody); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkObjectBag(b *testing.B) {
	for b.Loop() {
		if _, err := ObjectBag(benchBody); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkObjectDoc(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := objectDoc(benchBody); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAnalyzeBody(b *testing.B) {
	d, err := objectDoc(benchBody)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		Analyze(d)
	}
}
