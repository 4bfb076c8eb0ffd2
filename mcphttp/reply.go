package mcphttp

import (
	"bytes"
	"net/http"
	"sync"
	"time"

	"github.com/rukh-dev/rukh/mcpcore"
)

// maxStreamQueue bounds the messages waiting to be written on one request's
// stream; a hint that does not fit is dropped (SPEC §6: 32 messages).
const maxStreamQueue = 32

// reply is one HTTP request's mcpcore.Reply. Every write to the response
// happens on the handler's goroutine (serve), which takes messages from out
// in order; the core may call Respond, Send and Hint from any goroutine.
type reply struct {
	out      chan mcpcore.Message
	final    chan mcpcore.Message
	gone     chan struct{}
	goneOnce sync.Once
}

func newReply() *reply {
	return &reply{
		out:   make(chan mcpcore.Message, maxStreamQueue),
		final: make(chan mcpcore.Message, 1),
		gone:  make(chan struct{}),
	}
}

func (r *reply) Respond(m mcpcore.Message) {
	select {
	case r.final <- m:
	case <-r.gone:
		m.Finish()
	}
}

func (r *reply) Send(m mcpcore.Message) {
	t := time.NewTimer(writeTimeout)
	defer t.Stop()
	select {
	case r.out <- m:
	case <-r.gone:
		m.Finish()
	case <-t.C:
		m.Finish()
		r.cancel() // a stream nobody reads is a stream gone
	}
}

func (r *reply) Hint(m mcpcore.Message) bool {
	select {
	case r.out <- m:
		return true
	case <-r.gone:
		m.Finish()
		return true // not dropped for lack of room: the caller is gone
	default:
		m.Finish()
		return false
	}
}

func (r *reply) Gone() <-chan struct{} { return r.gone }

func (r *reply) cancel() { r.goneOnce.Do(func() { close(r.gone) }) }

// sse writes one response stream: as JSON when the final response is the
// first message (status from its code), as text/event-stream once a
// notification comes first.
type sse struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
}

// start sends the stream's headers.
func (s *sse) start() error {
	if s.started {
		return nil
	}
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
