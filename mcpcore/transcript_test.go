package mcpcore_test

import (
	"context"
	"flag"
	"io"
	"testing"

	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/mcpcore/mcpcoretest/transcript"
	"github.com/rukh-dev/rukh/mcpstdio"
)

var update = flag.Bool("update", false, "rewrite the -- server -- (stdio) and -- server-http -- (HTTP) sections of the golden transcripts")

// transcripts are the core's golden transcripts (the format: transcript.Run);
// each runs over stdio (TestTranscripts) and then over HTTP
// (TestTranscriptsHTTP), in this one test binary, so that
//
//	go test ./mcpcore/ -run TestTranscripts -update
//
// rewrites -- server -- from stdio before the HTTP run compares with it.
const transcripts = "testdata/transcripts/*.txtar"

// TestTranscripts replays the core's transcripts over stdio: each client
// line is one line on the server's stdin.
func TestTranscripts(t *testing.T) {
	transcript.Run(t, transcripts, transcript.Transport{Serve: serveStdio}, *update)
}

// TestTranscriptsHTTP replays the core's transcripts over HTTP: each client
// line is one POST to an in-process mcphttp handler, sent with the headers
// an HTTP client of that era would send, and every message of every
// response (a JSON body, or an event stream's events) is the server's
// output, in the order written. A transcript whose HTTP output differs for
// a reason inherent to the transport says so in its config (stdio-only,
// http-differs); every other one must give the same messages as over stdio.
func TestTranscriptsHTTP(t *testing.T) {
	transcript.Run(t, transcripts, transcript.Transport{HTTP: true, Serve: serveHTTP}, *update)
}

func serveStdio(ctx context.Context, in io.Reader, out io.Writer, cfg mcpcore.Config) error {
	return mcpstdio.Serve(ctx, in, out, mcpstdio.Config{Config: cfg})
}
