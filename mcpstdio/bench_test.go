package mcpstdio

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/mcpcore/mcpcoretest"
	"github.com/rukh-dev/rukh/mcpcore/mcpcoretest/transcript"
	"github.com/rukh-dev/rukh/policy"
)

// bench10k is a revision with 10,000 tools on endpoint "many", each with a
// realistic wire object (~600 bytes: title, description, schemas,
// annotations).
func bench10k() *policy.Binding {
	b := mcpcoretest.Binding(1, 10000, mcpcoretest.Template)
	many := &b.Endpoints[1]
	for i := range many.Tools {
		t := &many.Tools[i]
		t.Wire = jsontext.Value(fmt.Sprintf(`{"name":%q,"title":"Filler %d","description":"Adds a note and prints its id.","inputSchema":{"type":"object","properties":{"title":{"type":"string","maxLength":200},"tags":{"type":"array","items":{"type":"string"},"maxItems":16},"priority":{"type":"integer","minimum":1,"maximum":5,"default":3}},"required":["title"],"additionalProperties":false},"outputSchema":{"type":"object","properties":{"invocationId":{"type":"string"},"outcome":{"type":"string"},"reason":{"type":"string"}},"required":["invocationId","outcome"],"additionalProperties":false},"annotations":{"title":"Filler","readOnlyHint":false,"destructiveHint":false,"idempotentHint":false,"openWorldHint":false}}`, t.Name, i))
	}
	return b
}

var listLine = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + modernMeta + `}}`)

// BenchmarkList10k: one tools/list for the first page of 10,000 tools,
// from the request line to the framed response handed to the writer:
// strict parse, Active() (an in-memory atomic read), cache hit, page copy,
// cursor HMAC and era decoration.
func BenchmarkList10k(b *testing.B) {
	bind := bench10k()
	var active atomic.Uint64
	active.Store(1)
	s := newServer(Config{Config: mcpcore.Config{Endpoint: "many", ServerName: "rukh", ServerVersion: "bench",
		Active: func() (uint64, error) { return active.Load(), nil },
		Load:   mcpcoretest.Bindings(func(uint64) (*policy.Binding, error) { return bind, nil })}})
	s.out = newOutQueue(io.Discard, time.Second, func(err error) { b.Fatal(err) })
	s.start(context.Background())
	s.handleLine(listLine) // warm the revision cache
	b.ReportAllocs()
	for b.Loop() {
		s.handleLine(listLine)
	}
	b.StopTimer()
	s.out.close()
	<-s.out.done
}

// BenchmarkListRoundTrip10k measures the full Serve loop over pipes: write
// the request line, read the whole response line. It reports the median.
func BenchmarkListRoundTrip10k(b *testing.B) {
	bind := bench10k()
	var active atomic.Uint64
	active.Store(1)
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), cr, sw, Config{Config: mcpcore.Config{Endpoint: "many", ServerName: "rukh", ServerVersion: "bench",
			Active:  func() (uint64, error) { return active.Load(), nil },
			Load:    mcpcoretest.Bindings(func(uint64) (*policy.Binding, error) { return bind, nil }),
			Invoker: &transcript.Invoker{}}})
	}()
	rd := bufio.NewReaderSize(sr, 1<<20)
	req := append(append([]byte(nil), listLine...), '\n')
	roundTrip := func() int {
		if _, err := cw.Write(req); err != nil {
			b.Fatal(err)
		}
		line, err := rd.ReadSlice('\n')
		if err != nil {
			b.Fatal(err)
		}
		return len(line)
	}
	size := roundTrip()
	var samples []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		roundTrip()
		samples = append(samples, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	b.ReportMetric(float64(samples[len(samples)/2].Nanoseconds()), "median-ns")
	b.ReportMetric(float64(size), "resp-bytes")
	cw.Close()
	go io.Copy(io.Discard, sr)
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}
