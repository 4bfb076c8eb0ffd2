package mcphttp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/rukh-dev/rukh/mcpcore"
)

// A call's final response holds the core's slot until Finish. When the
// response is queued and the caller goes away at the same moment, the
// writer must still finish it, whichever of the two it sees first (a
// select picks at random, so the race is replayed until both orders have
// come up many times over).
func TestWriteFinishesAQueuedResponseWhenTheCallerGoes(t *testing.T) {
	h := New(Config{Logf: t.Logf})
	const rounds = 200
	var finished atomic.Int64
	for range rounds {
		ctx, gone := context.WithCancel(context.Background())
		rep := newReply(ctx)
		rep.Respond(mcpcore.Message{Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), Done: func() { finished.Add(1) }})
		gone()
		r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/", nil)
		h.write(httptest.NewRecorder(), r, rep, false, false)
	}
	if n := finished.Load(); n != rounds {
		t.Errorf("%d of %d queued responses finished; the rest keep their slot forever", n, rounds)
	}
}

// A response that comes after the writer gave up (the caller went away
// while the call was ending) is finished at once, never left queued.
func TestRespondAfterTheWriterIsGoneFinishes(t *testing.T) {
	h := New(Config{Logf: t.Logf})
	const rounds = 200
	var finished atomic.Int64
	for range rounds {
		ctx, gone := context.WithCancel(context.Background())
		rep := newReply(ctx)
		gone()
		r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/", nil)
		h.write(httptest.NewRecorder(), r, rep, false, false)
		rep.Respond(mcpcore.Message{Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), Done: func() { finished.Add(1) }})
	}
	if n := finished.Load(); n != rounds {
		t.Errorf("%d of %d late responses finished; the rest keep their slot forever", n, rounds)
	}
}
