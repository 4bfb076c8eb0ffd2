package mcphttp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/rukh-dev/rukh/mcpcore"
)

// A call's final response holds the core's slot until Finish, however the
// response and the caller's going away meet:
//   - queued when the caller goes: the writer must still finish it,
//     whichever of the two it sees first (a select picks at random, so the
//     race is replayed until both orders have come up many times over);
//   - coming after the writer gave up (the caller went away while the call
//     was ending): it is finished at once, never left queued.
func TestAResponseIsFinishedWhenTheCallerGoes(t *testing.T) {
	for _, c := range []struct {
		name         string
		respondFirst bool
		what         string
	}{
		{"queued before the caller goes", true, "queued"},
		{"after the writer is gone", false, "late"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := New(Config{Logf: t.Logf})
			const rounds = 200
			var finished atomic.Int64
			respond := func(rep *reply) {
				rep.Respond(mcpcore.Message{Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), Done: func() { finished.Add(1) }})
			}
			for range rounds {
				ctx, gone := context.WithCancel(context.Background())
				rep := newReply(ctx)
				if c.respondFirst {
					respond(rep)
				}
				gone()
				r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/", nil)
				h.write(httptest.NewRecorder(), r, rep, false, false, nil)
				if !c.respondFirst {
					respond(rep)
				}
			}
			if n := finished.Load(); n != rounds {
				t.Errorf("%d of %d %s responses finished; the rest keep their slot forever", n, rounds, c.what)
			}
		})
	}
}
