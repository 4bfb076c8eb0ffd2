package mcpstdio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/policy"
)

// Default transport timeouts (docs/design.md, Limits).
const (
	DefaultReadTimeout  = 2 * time.Second
	DefaultWriteTimeout = 2 * time.Second
)

// Config is one serve-mcp process's fixed launch binding and its seams:
// the protocol core's (its Transport is always stdio) plus the stdio
// timeouts.
type Config struct {
	mcpcore.Config
	// ReadTimeout bounds the time from a message's first byte to its
	// newline; WriteTimeout bounds one blocked write and the wait for queue
	// space for a response. Zero means the 2 s defaults.
	ReadTimeout  time.Duration
	WriteTimeout time.Duration
}

var (
	errReadTimeout  = errors.New("client did not finish a message in time")
	errWriteTimeout = errors.New("a write to the client blocked too long")
)

// Reader and writer limits (docs/design.md, Limits), the core's.
const (
	maxLineBytes     = mcpcore.MaxMessageBytes
	maxResponseBytes = mcpcore.MaxResponseBytes
)

// server is the stdio transport of one session: the line reader, the
// bounded writer, and the session of the protocol core they serve.
type server struct {
	cfg  Config
	core *mcpcore.Session
	out  *outQueue
	logf func(string, ...any)

	fatalOnce sync.Once
	fatal     chan error
}

// Serve speaks MCP over one stdio pair until in ends (nil), ctx ends
// (ctx.Err()) or the transport fails (a *kernel.Error, code unavailable). In
// every case it first stops all running invocations and waits for them.
// After a transport failure a Read on in or a Write on out may still be
// pending; the caller is expected to exit.
func Serve(ctx context.Context, in io.Reader, out io.Writer, cfg Config) error {
	if cfg.Active == nil || (cfg.Load == nil && cfg.View == nil) || cfg.Invoker == nil {
		return kernel.Errorf(kernel.CodeInternal, "mcpstdio: Config needs Active, View (or Load) and Invoker")
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = DefaultReadTimeout
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	s := newServer(cfg)
	s.out = newOutQueue(out, cfg.WriteTimeout, s.fail)
	s.start(ctx)
	// On every exit but a clean end of input, nothing more is written.
	defer s.out.abort()

	in, closeIn := pollableInput(in)
	defer closeIn()
	stop := make(chan struct{})
	defer close(stop)
	lr := &lineReader{in: in, events: make(chan readEvent), stop: stop}
	go lr.run()

	var timer *time.Timer
	var timerC <-chan time.Time
	var armed uint64
	for {
		select {
		case ev := <-lr.events:
			switch ev.kind {
			case evStarted:
				armed = ev.seq
				if timer == nil {
					timer = time.NewTimer(cfg.ReadTimeout)
				} else {
					timer.Reset(cfg.ReadTimeout)
				}
				timerC = timer.C
			case evLine:
				s.handleLine(ev.line)
			case evOverlong:
				s.send(mcpcore.AppendError(nil, nil, mcpcore.NewError(mcpcore.CodeParseError,
					fmt.Sprintf("parse error: message over %d bytes", maxLineBytes))))
			case evEnd:
				s.core.Shutdown()
				s.out.close()
				select {
				case <-s.out.done:
				case err := <-s.fatal:
					return transportError(err)
				}
				if ev.err != nil {
					return kernel.Errorf(kernel.CodeUnavailable, "reading from the client: %v", ev.err)
				}
				return nil
			}
		case <-timerC:
			timerC = nil
			if lr.open.Load() == armed {
				s.out.abort()
				s.core.Shutdown()
				return transportError(errReadTimeout)
			}
		case err := <-s.fatal:
			s.out.abort()
			s.core.Shutdown()
			return transportError(err)
		case <-ctx.Done():
			// The owner's cancel while the reply channel lives: every
			// call gets its cancelled answer, every stream its end.
			s.core.OwnerCancel(context.Cause(ctx))
			s.out.close()
			select {
			case <-s.out.done:
			case <-s.fatal: // the client stopped reading; nothing more to do
				s.out.abort()
			}
			return ctx.Err()
		}
	}
}

func newServer(cfg Config) *server {
	s := &server{cfg: cfg, logf: cfg.Logf, fatal: make(chan error, 1)}
	if s.logf == nil {
		s.logf = func(string, ...any) {}
	}
	return s
}

// start opens the session; owner is Serve's ctx, whose end is the owner's
// cancel.
func (s *server) start(owner context.Context) {
	core := s.cfg.Config
	core.Transport = policy.TransportStdio
	ep := mcpcore.NewEndpoint(core)
	s.core = ep.NewSession(owner, mcpcore.SessionConfig{
		Hint: func(m mcpcore.Message) bool { return s.out.push(m, true, 0) != errQueueFull },
	})
}

func transportError(err error) error {
	if err == errReadTimeout || err == errWriteTimeout || err == errQueueFull {
		return kernel.Errorf(kernel.CodeUnavailable, "mcp transport closed").Wrap(err)
	}
	return kernel.Errorf(kernel.CodeUnavailable, "writing to the client").Wrap(err)
}

// fail reports a transport failure to the serve loop; the first one wins.
func (s *server) fail(err error) {
	s.fatalOnce.Do(func() { s.fatal <- err })
}

// send queues a response, waiting up to the write timeout for space; a
// response that cannot be queued in time closes the transport.
func (s *server) send(msg []byte) {
	s.sendMsg(mcpcore.Message{Data: msg})
}

func (s *server) sendMsg(m mcpcore.Message) {
	if len(m.More) > 0 {
		// A message in parts is for transports that asked for them; this
		// one did not, and would write only the first.
		s.logf("mcp: dropping a message in parts, which stdio never asks for")
		m.Finish()
		return
	}
	if len(m.Data) > maxResponseBytes {
		s.logf("mcp: dropping a %d-byte message over the response limit", len(m.Data))
		m.Finish()
		return
	}
	if err := s.out.push(m, false, s.cfg.WriteTimeout); err == errQueueFull {
		s.fail(err)
	}
}

// The stdio pair is every request's Reply: one stream, in order.
func (s *server) Respond(m mcpcore.Message)   { s.sendMsg(m) }
func (s *server) Send(m mcpcore.Message)      { s.sendMsg(m) }
func (s *server) Hint(m mcpcore.Message) bool { return s.out.push(m, true, 0) != errQueueFull }
func (s *server) Context() context.Context    { return nil }

// handleLine checks and dispatches one incoming line. It never waits for a
// tool call.
func (s *server) handleLine(line []byte) {
	req, id, rerr := mcpcore.Decode(line)
	if rerr != nil {
		s.send(mcpcore.AppendError(nil, id, rerr))
		return
	}
	if req == nil {
		return
	}
	s.core.Handle(req, s)
}
