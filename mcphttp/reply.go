package mcphttp

import (
	"bytes"
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/rukh-dev/rukh/mcpcore"
)

// maxStreamQueue bounds the messages waiting to be written on one request's
// stream; a hint that does not fit is dropped (32 messages, as on stdio:
// docs/design.md, Limits).
const maxStreamQueue = 32

// reply is one HTTP request's mcpcore.Reply. Every write to the response
// happens on the handler's goroutine (serve), which takes messages from out
// in order; the core may call Respond, Send and Hint from any goroutine.
// Its context ends with the request's (the client went away) or at cancel.
// out queues pointers: most requests send no notification, and a queue of
// the messages themselves would be the largest allocation of every one.
type reply struct {
	out    chan *mcpcore.Message
	final  chan mcpcore.Message
	ctx    context.Context
	cancel context.CancelFunc

	// mu orders Respond against close: a final response is either queued
	// before the writer leaves (close finishes it) or finished at once.
	mu     sync.Mutex
	closed bool
}

func newReply(parent context.Context) *reply {
	r := &reply{
		out:   make(chan *mcpcore.Message, maxStreamQueue),
		final: make(chan mcpcore.Message, 1),
	}
	r.ctx, r.cancel = context.WithCancel(parent)
	return r
}

// Respond queues the final response, or finishes it when nobody will
// write it: the caller went away, or the writer left. It never blocks
// (there is one final response, and room for it).
func (r *reply) Respond(m mcpcore.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.ctx.Err() != nil {
		m.Finish()
		return
	}
	select {
	case r.final <- m:
	default:
		m.Finish()
	}
}

// close is the writer leaving: every message still queued is finished
// unwritten (the final one releases the core's slot), and so is any that
// comes later.
func (r *reply) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for {
		select {
		case m := <-r.final:
			m.Finish()
		case m := <-r.out:
			m.Finish()
		default:
			return
		}
	}
}

func (r *reply) Send(m mcpcore.Message) {
	t := time.NewTimer(writeTimeout)
	defer t.Stop()
	select {
	case r.out <- &m:
	case <-r.ctx.Done():
		m.Finish()
	case <-t.C:
		m.Finish()
		r.cancel() // a stream nobody reads is a stream gone
	}
}

func (r *reply) Hint(m mcpcore.Message) bool {
	select {
	case r.out <- &m:
		return true
	case <-r.ctx.Done():
		m.Finish()
		return true // not dropped for lack of room: the caller is gone
	default:
		m.Finish()
		return false
	}
}

func (r *reply) Context() context.Context { return r.ctx }

// Cancel ends the request as if its caller went away: the core stops its
// call, and nothing more is written (notifications/cancelled).
func (r *reply) Cancel() { r.cancel() }

// sse writes one response stream: as JSON when the final response is the
// first message (status from its code), as text/event-stream once a
// notification comes first.
type sse struct {
	w       http.ResponseWriter
	rc      *http.ResponseController // made at start
	started bool
}

// start sends the stream's headers.
func (s *sse) start() error {
	if s.started {
		return nil
	}
	s.rc = http.NewResponseController(s.w)
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
	s.started = true
	return s.rc.Flush()
}

func (s *sse) event(data []byte) error {
	s.start()
	s.rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	var b bytes.Buffer
	b.Grow(len(data) + 24)
	b.WriteString("event: message\ndata: ")
	b.Write(bytes.TrimRight(data, "\n"))
	b.WriteString("\n\n")
	if _, err := s.w.Write(b.Bytes()); err != nil {
		return err
	}
	return s.rc.Flush()
}

// keepAlive writes an SSE comment so proxies keep an idle stream open.
func (s *sse) keepAlive() error {
	if !s.started {
		return nil
	}
	s.rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := s.w.Write([]byte(":\n\n")); err != nil {
		return err
	}
	return s.rc.Flush()
}
