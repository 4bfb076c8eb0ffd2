package mcpcore

import (
	"context"
	"crypto/rand"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
)

// Config is one endpoint's fixed launch binding and its seams, whatever the
// transport.
type Config struct {
	// Endpoint is the launch endpoint; it never changes for the process, and
	// nothing a client sends (arguments, clientInfo) can change it.
	Endpoint      string
	ServerName    string
	ServerVersion string
	// Transport is the profile transport this endpoint is served on
	// (policy.TransportStdio or policy.TransportHTTP): a revision that
	// drops it from the endpoint's transports is refused.
	Transport string
	// Active returns the active revision number (0: nothing published). It
	// is called on every discover, list and call, so it must be cheap.
	Active func() (uint64, error)
	// View calls fn with revision n's catalog for the launch endpoint (n 0:
	// the active one; fn then gets 0 and nil when nothing is published).
	// It is called on every list and call, for that request only.
	View func(n uint64, fn func(n uint64, c Catalog) error) error
	// Peek, when set, is View(0, fn) for a call's resolution when what the
	// last store read kept is still the active revision: it calls fn, on
	// the caller's goroutine, with a catalog that reads nothing from the
	// store (a tool or page not kept is ErrNotCached, and View then serves
	// the request). false: nothing is kept, fn was not called.
	Peek func(fn func(n uint64, c Catalog) error) (bool, error)
	// Load, used when View is nil (tests), returns the binding of revision
	// n; the endpoint keeps the active one in memory.
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
	// Quick, when set, says Diagnostics would do nothing slow for this
	// invocation (it must not block then): an inline call runs it in place
	// instead of on a goroutine of its own.
	Quick func(inv *kernel.Invocation, res kernel.Result) bool
	// Authorize, when set, is asked once a tools/call has resolved its
	// command (its id and its security level on the endpoint, "" for
	// standard) and before anything is checked, admitted or run; an error
	// refuses the call (the response carries it in Message.Refused, and
	// the transport decides how to say no). commit, when not nil, is called
	// once the call passed every check and was admitted, just before it
	// starts (a one-time token is consumed then); its error refuses it too.
	Authorize func(req *Request, command, level string) (commit func() error, err error)
	// Launch is the endpoint's launch binding read at start: its namespace
	// and subject must stay as they are for a revision to be served, and
	// its template bounds every call for the life of the process. Nil
	// (nothing was published at start) fixes the binding at the first
	// revision that serves the endpoint.
	Launch *policy.Launch
	// Tasks, when set, runs the calls the launch binding's task policy
	// names in the background (tasks.go); nil: every call is direct.
	Tasks TaskHost
	// Logf writes a line for the owner (stderr); nil discards.
	Logf func(format string, args ...any)
	// NewID makes invocation ids (a test seam); nil: kernel.NewInvocationID.
	NewID func() string
}

// errOwnerCancel is the cause a call's context ends with when the owner
// stops the server (a signal to serve-mcp); the child's cancel message
// carries it.
var errOwnerCancel = errors.New("the owner stopped the server")

// ReasonOwnerCancel is the stable reason of a call the owner's cancel
// ended while the client could still be answered.
const ReasonOwnerCancel = "cancelled by the owner (the server is stopping)"

// call is one admitted tools/call.
type call struct {
	cancel  context.CancelFunc
	unwatch func() bool // stops watching for the caller going away
	dropped atomic.Bool // no response may be sent (client cancel or shutdown)
}

// Endpoint is what every session of one endpoint shares: its launch
// binding, the decoded active revision and the cursor key.
type Endpoint struct {
	cfg     Config
	logged  sync.Map // revision number → struct{}: the owner heard about it
	cursors cursorCodec
	logf    func(string, ...any)
	newID   func() string
	info    []byte // {"name":…,"version":…}

	// pageSize is the size of the last list body: the next is built in
	// a buffer that size (up to maxPageHint, so one page near the 1 MiB
	// bound does not size every other), not grown to it from 4 KiB.
	pageSize atomic.Int64

	bmu     sync.Mutex
	binding *policy.Launch // the launch binding; see admit

	discovery atomic.Pointer[[]discoveryTool] // the discovery tools' names, once the binding is fixed
}

// NewEndpoint prepares an endpoint; cfg needs Active, View (or Load) and
// Invoker.
func NewEndpoint(cfg Config) *Endpoint {
	if cfg.View == nil && cfg.Load != nil {
		cfg.View = viewFromLoad(cfg.Active, &revisionCache{load: cfg.Load})
	}
	ep := &Endpoint{
		cfg:   cfg,
		logf:  cfg.Logf,
		newID: cfg.NewID,
	}
	if ep.logf == nil {
		ep.logf = func(string, ...any) {}
	}
	if ep.newID == nil {
		ep.newID = kernel.NewInvocationID
	}
	if ep.cfg.Transport == "" {
		ep.cfg.Transport = policy.TransportStdio
	}
	if cfg.Launch != nil {
		l := *cfg.Launch
		ep.binding = &l
	}
	secret := cfg.Secret
	if len(secret) == 0 {
		secret = make([]byte, 32)
		rand.Read(secret)
	}
	ep.cursors = cursorCodec{secret: secret, endpoint: cfg.Endpoint}
	info := appendString([]byte(`{"name":`), cfg.ServerName)
	info = append(info, `,"version":`...)
	info = appendString(info, cfg.ServerVersion)
	ep.info = append(info, '}')
	return ep
}

// Name is the endpoint's name.
func (ep *Endpoint) Name() string { return ep.cfg.Endpoint }

// SessionConfig says what a transport's session can do.
type SessionConfig struct {
	// Hint, when set, delivers a session-wide message that may be dropped
	// (false): tools/list_changed to a legacy client after initialize.
	// Nil: the transport has no session-wide channel, so a legacy client
	// is not offered listChanged.
	Hint func(Message) bool
	// PerRequest marks a transport whose requests stand alone (HTTP): a
	// request ends when its Reply is gone, and only legacy requests share
	// one space of ids (HandleEra). Without it ids are the session's
	// (stdio), and notifications/cancelled names the request it ends.
	PerRequest bool
	// Caller decorates the caller of every call of this session (the
	// transport's authenticated agent); nil leaves it as the launch
	// binding has it.
	Caller func(req *Request, c kernel.Caller) kernel.Caller
	// Spliced marks a transport that writes a Message in parts (More): a
	// list page then goes out from the catalogue's own bytes, not from a
	// response built for each request.
	Spliced bool
}

// Session is one client's view of an endpoint: its calls, its listen
// streams, and (legacy era) its handshake. Stdio has one per process; HTTP
// one per endpoint and agent.
type Session struct {
	*Endpoint
	scfg  SessionConfig
	owner context.Context // its end is the owner's cancel
	ctx   context.Context // the session: calls and watches end with it
	stop  context.CancelCauseFunc
	subs  *subscriptions
	seq   atomic.Uint64 // PerRequest: request keys

	legacyInitialized bool // stdio serve loop only

	mu      sync.Mutex
	calls   map[string]*call
	legacy  map[string]Reply // PerRequest: legacy requests in flight, by id
	running int
	held    int
	wg      sync.WaitGroup
}

// NewSession starts a session of ep. Its calls run until they end or the
// session is shut down; owner is the owner's cancel (ownerCancel answers
// what it ends).
func (ep *Endpoint) NewSession(owner context.Context, scfg SessionConfig) *Session {
	s := &Session{Endpoint: ep, scfg: scfg, calls: make(map[string]*call), legacy: make(map[string]Reply), owner: owner}
	// The session outlives owner by as long as it takes to answer the
	// calls the owner's cancel ends.
	s.ctx, s.stop = context.WithCancelCause(context.WithoutCancel(owner))
	s.subs = &subscriptions{
		ctx: s.ctx, watch: ep.cfg.Watch, digest: s.projectionDigest, current: s.currentDigest, logf: s.logf,
		hint: scfg.Hint,
	}
	return s
}

// reply answers req with a result body, or with an error when the encoded
// response would be over the response limit.
func (s *Session) reply(req *Request, e era, r result) {
	m := Message{}
	if r.after != nil {
		m = s.splicedResponse(req.id, e, r)
	} else {
		m.Data = s.response(req.id, e, r)
	}
	if m.Len() > maxResponseBytes {
		s.replyError(req, newError(codeInternalError, "response too large"))
		return
	}
	req.rep.Respond(m)
}

// splicedResponse frames a result whose members end in r.wire and
// r.after: in parts around r.wire (not copied) where the transport writes
// parts, else in one buffer.
func (s *Session) splicedResponse(id jsontext.Value, e era, r result) Message {
	headLen := len(responseHead) + len(id) + len(resultOpen) + len(r.body)
	size := headLen + len(r.after) + len(s.info) + 160
	if !s.scfg.Spliced {
		size += len(r.wire)
	}
	b := make([]byte, 0, size)
	b = append(append(append(append(b, responseHead...), id...), resultOpen...), r.body...)
	if !s.scfg.Spliced {
		b = append(b, r.wire...)
		b = append(s.appendResultTail(append(b, r.after...), e, r), "}}\n"...)
		return Message{Data: b}
	}
	tail := append(s.appendResultTail(append(b, r.after...), e, r), "}}\n"...)[headLen:]
	return Message{Data: b[:headLen:headLen], More: [][]byte{r.wire, tail}}
}

func (s *Session) replyError(req *Request, e *rpcError) {
	req.rep.Respond(Message{Data: appendError(nil, req.id, e), Code: e.code})
}

// Handle dispatches one decoded request, answering through rep. It never
// waits for a tool call.
func (s *Session) Handle(req *Request, rep Reply) {
	req.rep = rep
	if req.id == nil {
		s.handleNotification(req)
		return
	}
	if s.scfg.PerRequest {
		req.key = "q" + itoa(s.seq.Add(1))
	} else {
		req.key = idKey(req.id)
	}
	if s.isLegacy(req) {
		s.handleLegacy(req)
		return
	}
	s.handleModern(req, nil)
}

// HandleEra dispatches a request the transport has classified itself
// (HTTP: by its headers): legacy or modern, whatever the session saw
// before. A modern request is checked against hdr, what the transport's
// framing repeats of it (nil: nothing). A notification is handled like
// Handle's. On a PerRequest session a tools/call without a progress token
// runs before HandleEra returns, its response already given to rep.
//
// On a PerRequest session a legacy request holds its id until the
// transport calls end (it answered the request, or gave up): another
// legacy request with that id is refused meanwhile, and a
// notifications/cancelled naming it cancels it. end is never nil.
func (s *Session) HandleEra(req *Request, rep Reply, legacy bool, hdr *Headers) (end func()) {
	req.rep = rep
	if req.id == nil {
		s.handleNotification(req)
		return func() {}
	}
	req.key = "q" + itoa(s.seq.Add(1))
	if !legacy {
		s.handleModern(req, hdr)
		return func() {}
	}
	end = func() {}
	if s.scfg.PerRequest {
		id := idKey(req.id)
		if !s.holdLegacyID(id, rep) {
			s.replyError(req, newError(codeInvalidRequest, msgIDInUse))
			return end
		}
		end = func() { s.releaseLegacyID(id, rep) }
	}
	s.handleLegacy(req)
	return end
}

// msgIDInUse refuses a request whose id an unanswered one of the session
// already has.
const msgIDInUse = "invalid request: the request id is already in use"

func (s *Session) holdLegacyID(id string, rep Reply) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, busy := s.legacy[id]; busy {
		return false
	}
	s.legacy[id] = rep
	return true
}

func (s *Session) releaseLegacyID(id string, rep Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.legacy[id] == rep {
		delete(s.legacy, id)
	}
}

// cancelLegacy ends the PerRequest legacy request of that id: through its
// Reply's Cancel when it has one (the transport then ends it as if its
// caller went away), otherwise by stopping its call unanswered.
func (s *Session) cancelLegacy(id jsontext.Value) {
	if id == nil || !validID(id) {
		return
	}
	s.mu.Lock()
	rep := s.legacy[idKey(id)]
	s.mu.Unlock()
	if c, ok := rep.(Canceller); ok {
		c.Cancel()
	}
}

func (s *Session) handleNotification(req *Request) {
	switch req.method {
	case "notifications/cancelled":
		if s.scfg.PerRequest {
			s.cancelLegacy(req.params.RequestID)
		} else {
			s.CancelRequest(req.params.RequestID)
		}
	case "notifications/initialized":
		// Legacy handshake acknowledgement; nothing to do.
	}
	// Other notifications are ignored, as JSON-RPC requires no answer.
}

// CancelRequest stops the call with that id, if it is still running or its
// response is not yet written; that response is then never sent.
func (s *Session) CancelRequest(id jsontext.Value) {
	if id == nil || !validID(id) {
		return
	}
	s.cancelKey(idKey(id))
}

func (s *Session) cancelKey(key string) {
	if s.subs.close(key) {
		return // a listen stream ends without a response
	}
	s.mu.Lock()
	c := s.calls[key]
	s.mu.Unlock()
	if c != nil {
		c.dropped.Store(true)
		c.cancel()
	}
}

// whenGone cancels the request once its caller goes away, until stop is
// called. It watches with a callback, not a goroutine.
func (s *Session) whenGone(req *Request) (stop func() bool) {
	ctx := req.rep.Context()
	if ctx == nil {
		return func() bool { return false }
	}
	return context.AfterFunc(ctx, func() { s.cancelKey(req.key) })
}

// Running reports the calls running and those holding a slot (running, or
// answered but not yet written).
func (s *Session) Running() (running, held int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running, s.held
}

// Shutdown stops every invocation without answering it and waits for them.
func (s *Session) Shutdown() {
	s.mu.Lock()
	if n := s.running; n > 0 && !s.scfg.PerRequest {
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

// OwnerCancel ends the session for the owner (the owner's cancel while the
// reply channel lives, docs/design.md, Outcomes): open listen streams get
// their final response, running calls are stopped (cancel, SIGTERM,
// SIGKILL, as docs/extension-protocol.md says) and each is
// answered cancelled with a stable reason; it waits for them.
func (s *Session) OwnerCancel(cause error) {
	s.mu.Lock()
	n := s.running
	s.mu.Unlock()
	streams := s.EndStreams()
	s.logf("stopping on the owner's cancel (%v): %d running call(s) are stopped and answered cancelled, %d listen stream(s) ended", cause, n, streams)
	s.stop(errOwnerCancel)
	s.wg.Wait()
}

// EndStreams ends every open listen stream with its final response and
// stops watching the store; it returns how many there were. Calls go on.
func (s *Session) EndStreams() int {
	streams := s.subs.end()
	for _, st := range streams {
		st.rep.Respond(Message{Data: s.appendListenEnd(nil, st.id)})
	}
	return len(streams)
}

// Wait waits for every call of the session to end and be answered.
func (s *Session) Wait() { s.wg.Wait() }
