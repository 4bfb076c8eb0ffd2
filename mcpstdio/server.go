package mcpstdio

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
)

// Default transport timeouts (SPEC §6).
const (
	DefaultReadTimeout  = 2 * time.Second
	DefaultWriteTimeout = 2 * time.Second
)

// Config is one serve-mcp process's fixed launch binding and its seams.
type Config struct {
	// Endpoint is the launch endpoint; it never changes for the process, and
	// nothing a client sends (arguments, clientInfo) can change it.
	Endpoint      string
	ServerName    string
	ServerVersion string
	// Active returns the active revision number (0: nothing published). It
	// is called on every discover, list and call, so it must be cheap.
	Active func() (uint64, error)
	// View calls fn with revision n's catalog for the launch endpoint (n 0:
	// the active one; fn then gets 0 and nil when nothing is published).
	// It is called on every list and call, for that request only.
	View func(n uint64, fn func(n uint64, c Catalog) error) error
	// Load, used when View is nil (tests), returns the binding of revision
	// n; the server keeps the active one in memory.
	Load func(n uint64) (*policy.ServeView, error)
	// Watch, when set, calls fn with the active revision number once at
	// the start and whenever it may have changed, until ctx ends (see
	// store.WatchActive). It runs only while a client listens for
	// tools/list_changed. Nil: list changes are neither announced nor sent.
	Watch func(ctx context.Context, fn func(active uint64))
	// Secret keys the list cursors; empty means a random per-process key.
	Secret  []byte
	Invoker kernel.Invoker
	// Diagnostics, when set, receives each invocation and its result after
	// it ends; inv.Stdout and inv.Stderr are the bounded *kernel.Diagnostics
	// of the child's streams (owner diagnostics; never sent to the client).
	Diagnostics func(inv *kernel.Invocation, res kernel.Result)
	// Launch is the endpoint's launch binding read at start: its namespace
	// and subject must stay as they are for a revision to be served, and
	// its template bounds every call for the life of the process. Nil
	// (nothing was published at start) fixes the binding at the first
	// revision that serves the endpoint.
	Launch *policy.Launch
	// Logf writes a line for the owner (stderr); nil discards.
	Logf func(format string, args ...any)
	// ReadTimeout bounds the time from a message's first byte to its
	// newline; WriteTimeout bounds one blocked write and the wait for queue
	// space for a response. Zero means the 2 s defaults.
	ReadTimeout  time.Duration
	WriteTimeout time.Duration

	newID func() string // test seam: invocation ids
}

var (
	errReadTimeout  = errors.New("client did not finish a message in time")
	errWriteTimeout = errors.New("a write to the client blocked too long")
)

// errOwnerCancel is the cause a call's context ends with when the owner
// stops the server (a signal to serve-mcp); the child's cancel message
// carries it.
var errOwnerCancel = errors.New("the owner stopped the server")

// reasonOwnerCancel is the stable reason of a call the owner's cancel
// ended while the client could still be answered.
const reasonOwnerCancel = "cancelled by the owner (the server is stopping)"

// call is one admitted tools/call.
type call struct {
	cancel  context.CancelFunc
	dropped atomic.Bool // no response may be sent (client cancel or shutdown)
}

type server struct {
	cfg     Config
	owner   context.Context // Serve's ctx: its end is the owner's cancel
	ctx     context.Context // the session: calls and watches end with it
	stop    context.CancelCauseFunc
	logged  sync.Map // revision number → struct{}: the owner heard about it
	cursors cursorCodec
	out     *outQueue
	subs    *subscriptions
	logf    func(string, ...any)
	newID   func() string
	info    []byte // {"name":…,"version":…}

	legacyInitialized bool // serve loop only

	fatalOnce sync.Once
	fatal     chan error

	mu      sync.Mutex
	calls   map[string]*call
	running int
	held    int
	wg      sync.WaitGroup
	binding *policy.Launch // the launch binding; see admit
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
	// The session outlives ctx by as long as it takes to answer the calls
	// the owner's cancel ends.
	sctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	s.owner, s.ctx, s.stop = ctx, sctx, cancel
	s.out = newOutQueue(out, cfg.WriteTimeout, s.fail)
	s.subs.ctx = sctx
	// On every exit but a clean end of input, nothing more is written.
	defer s.out.abort()

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
				s.send(appendError(nil, nil, newError(codeParseError,
					fmt.Sprintf("parse error: message over %d bytes", maxLineBytes))))
			case evEnd:
				s.shutdown()
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
				s.shutdown()
				return transportError(errReadTimeout)
			}
		case err := <-s.fatal:
			s.out.abort()
			s.shutdown()
			return transportError(err)
		case <-ctx.Done():
			// The owner's cancel while the reply channel lives: every
			// call gets its cancelled answer, every stream its end.
			s.ownerCancel(context.Cause(ctx))
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
	if cfg.View == nil && cfg.Load != nil {
		cfg.View = viewFromLoad(cfg.Active, &revisionCache{load: cfg.Load})
	}
	s := &server{
		cfg: cfg,

		logf:  cfg.Logf,
		newID: cfg.newID,
		fatal: make(chan error, 1),
		calls: make(map[string]*call),
		owner: context.Background(), // Serve sets the session's
		stop:  func(error) {},
	}
	if s.logf == nil {
		s.logf = func(string, ...any) {}
	}
	if s.newID == nil {
		s.newID = kernel.NewInvocationID
	}
	s.subs = &subscriptions{
		watch: cfg.Watch, digest: s.projectionDigest, current: s.currentDigest, logf: s.logf,
		send: s.send,
		hint: func(msg []byte) bool { return s.out.push(outMsg{data: msg}, true, 0) != errQueueFull },
	}
	if cfg.Launch != nil {
		l := *cfg.Launch
		s.binding = &l
	}
	secret := cfg.Secret
	if len(secret) == 0 {
		secret = make([]byte, 32)
		rand.Read(secret)
	}
	s.cursors = cursorCodec{secret: secret, endpoint: cfg.Endpoint}
	info := appendString([]byte(`{"name":`), cfg.ServerName)
	info = append(info, `,"version":`...)
	info = appendString(info, cfg.ServerVersion)
	s.info = append(info, '}')
	return s
}

func transportError(err error) error {
	if err == errReadTimeout || err == errWriteTimeout || err == errQueueFull {
		return &kernel.Error{Code: kernel.CodeUnavailable, Message: "mcp transport closed", Err: err}
	}
	return &kernel.Error{Code: kernel.CodeUnavailable, Message: "writing to the client", Err: err}
}

// fail reports a transport failure to the serve loop; the first one wins.
func (s *server) fail(err error) {
	s.fatalOnce.Do(func() { s.fatal <- err })
}

// shutdown stops every invocation without answering it and waits for them.
func (s *server) shutdown() {
	s.mu.Lock()
	if n := s.running; n > 0 {
		// Say why a piped client got no answer: the stdio spec ends a
		// session at end of input, running calls included.
		s.logf("input closed: stopping %d running call(s); they get no response", n)
	}
	for _, c := range s.calls {
		c.dropped.Store(true)
		c.cancel()
	}
	s.mu.Unlock()
	s.stop(nil)
	s.subs.shutdown()
	s.wg.Wait()
}

// ownerCancel ends the session for the owner (SPEC §6: "owner cancel while
// the reply channel lives"): open listen streams get their final response,
// running calls are stopped (SPEC §5: cancel, SIGTERM, SIGKILL) and each is
// answered cancelled with a stable reason; it waits for them.
func (s *server) ownerCancel(cause error) {
	s.mu.Lock()
	n := s.running
	s.mu.Unlock()
	streams := s.subs.end()
	s.logf("stopping on the owner's cancel (%v): %d running call(s) are stopped and answered cancelled, %d listen stream(s) ended", cause, n, len(streams))
	for _, id := range streams {
		s.send(s.appendListenEnd(nil, id))
	}
	s.stop(errOwnerCancel)
	s.wg.Wait()
}

// send queues a response, waiting up to the write timeout for space; a
// response that cannot be queued in time closes the transport.
func (s *server) send(msg []byte) {
	s.sendMsg(outMsg{data: msg})
}

func (s *server) sendMsg(m outMsg) {
	if len(m.data) > maxResponseBytes {
		s.logf("mcp: dropping a %d-byte message over the response limit", len(m.data))
		m.finish()
		return
	}
	if err := s.out.push(m, false, s.cfg.WriteTimeout); err == errQueueFull {
		s.fail(err)
	}
}

// reply answers id with a result body, or with an error when the encoded
// response would be over the response limit.
func (s *server) reply(id jsontext.Value, e era, r result) {
	msg := appendResponse(nil, id, s.finish(e, r))
	if len(msg) > maxResponseBytes {
		msg = appendError(nil, id, newError(codeInternalError, "response too large"))
	}
	s.send(msg)
}

func (s *server) replyError(id jsontext.Value, e *rpcError) {
	s.send(appendError(nil, id, e))
}

// handleLine checks, classifies and dispatches one incoming line. It never
// waits for a tool call.
func (s *server) handleLine(line []byte) {
	req, id, rerr := decodeLine(line)
	if rerr != nil {
		s.replyError(id, rerr)
		return
	}
	if req == nil {
		return
	}
	if req.id == nil {
		s.handleNotification(req)
		return
	}
	if s.isLegacy(req) {
		s.handleLegacy(req)
		return
	}
	s.handleModern(req)
}

func (s *server) handleNotification(req *request) {
	switch req.method {
	case "notifications/cancelled":
		s.cancelRequest(req.params.RequestID)
	case "notifications/initialized":
		// Legacy handshake acknowledgement; nothing to do.
	}
	// Other notifications are ignored, as JSON-RPC requires no answer.
}

// cancelRequest stops the call with that id, if it is still running or its
// response is not yet written; that response is then never sent.
func (s *server) cancelRequest(id jsontext.Value) {
	if id == nil || !validID(id) {
		return
	}
	if s.subs.close(idKey(id)) {
		return // a listen stream ends without a response
	}
	s.mu.Lock()
	c := s.calls[idKey(id)]
	s.mu.Unlock()
	if c != nil {
		c.dropped.Store(true)
		c.cancel()
	}
}
