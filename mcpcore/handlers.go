package mcpcore

import (
	"context"
	"errors"
	"math"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
)

// The handlers below are era-neutral: they decide what a request means and
// produce a result body. era_modern.go and era_legacy.go only decide which
// requests reach them and how a body is decorated for the wire.

// era selects the wire decoration of a result.
type era int

const (
	eraModern era = iota // 2026-07-28, stateless
	eraLegacy            // 2025-11-25 / 2025-06-18, after initialize
)

// result is a result object's members (without braces) before the era adds
// its own; cacheable marks discover and list results.
type result struct {
	body       []byte
	cacheable  bool
	resultType string // modern era; "" is "complete"
	// buf, when set, is body's buffer from its start: body is buf[room:],
	// and response writes its head into the room instead of copying body.
	buf  []byte
	room int
	// wire, when set, follows body and after follows it: a list page's
	// tools as the catalogue holds them, written without a copy where the
	// transport takes a message in parts.
	wire, after []byte
}

// appendResult appends r's members with what its era adds.
func (s *Session) appendResult(b []byte, e era, r result) []byte {
	return s.appendResultTail(append(b, r.body...), e, r)
}

// appendResultTail appends what r's era adds after its members.
func (s *Session) appendResultTail(b []byte, e era, r result) []byte {
	if e == eraLegacy {
		return b // legacy results carry no members of their own
	}
	return s.appendModernTail(b, r)
}

const resultOpen = `,"result":{`

// listRoom is the room a list page's buffer keeps before the page for the
// response head, so the page is not copied again to frame it (an id
// longer than the room is framed by a copy).
const listRoom = 96

// response frames r as the answer to id in one buffer of about its final
// size: a list page's tools are copied once more, not three times.
func (s *Session) response(id jsontext.Value, e era, r result) []byte {
	if n := len(responseHead) + len(id) + len(resultOpen); r.buf != nil && n <= r.room {
		msg := r.buf[r.room-n:]
		copy(msg[copy(msg, responseHead):], id)
		copy(msg[len(responseHead)+len(id):], resultOpen)
		return append(s.appendResultTail(msg, e, r), "}}\n"...)
	}
	msg := make([]byte, 0, len(responseHead)+len(id)+len(r.body)+len(s.info)+160)
	msg = append(append(msg, responseHead...), id...)
	msg = s.appendResult(append(msg, resultOpen...), e, r)
	return append(msg, "}}\n"...)
}

// List page bounds (docs/design.md, Page bounds).
const (
	pageTools = 32
	pageBytes = 1 << 20

	maxPageHint = 64 << 10 // see Endpoint.pageSize
)

const listAgain = "; list again without a cursor"

// listToolsAgain ends the unknown-tool error: names change with publishes,
// so the one fix is a fresh list. It says nothing about whether the name
// ever existed.
const listToolsAgain = ": list tools again (tools/list) to get current names"

// unknownTool is the one answer for an unknown, stale or invisible name;
// a progressive endpoint points to its search, where most names come
// from.
func (s *Session) unknownTool(name string, progressive bool) *rpcError {
	if progressive {
		return newError(codeInvalidParams, "unknown tool "+strconv.Quote(name)+": search the tools again ("+s.discoveryName(policy.DiscoverySearch)+") to get current names")
	}
	return newError(codeInvalidParams, "unknown tool "+strconv.Quote(name)+listToolsAgain)
}

// listTools returns one page of the launch endpoint's tools from the active
// revision. It copies pre-encoded tool objects and runs nothing else.
func (s *Session) listTools(cursor jsontext.Value) (result, *rpcError) {
	var res result
	rerr := s.current(func(n uint64, c Catalog) error {
		pos := 0
		pages := 0
		if c != nil {
			pages = c.Pages()
		}
		if cursor != nil {
			cs, ok := stringParam(cursor)
			if !ok {
				return rpcFailure{newError(codeInvalidParams, "invalid params: cursor must be a string")}
			}
			cn, p, ok := s.cursors.decode(cs)
			if !ok {
				return rpcFailure{newError(codeInvalidParams, "invalid cursor"+listAgain)}
			}
			if c == nil || cn != n {
				return rpcFailure{newError(codeInvalidParams, "cursor is from another revision of the tool list"+listAgain)}
			}
			if p <= 0 || p >= pages {
				return rpcFailure{newError(codeInvalidParams, "invalid cursor"+listAgain)}
			}
			pos = p
		}
		if pw, ok := c.(PageWirer); ok {
			var wire []byte
			if pos < pages {
				var err error
				if wire, err = pw.PageWire(pos); err != nil {
					return err
				}
			}
			var after []byte
			if pos+1 >= pages {
				empty := len(wire) == 0
				if progressive(c) {
					after = s.appendDiscoveryTools(after, empty)
				}
				after = s.appendJobTools(after, empty && len(after) == 0)
			}
			after = append(after, ']')
			if pos+1 < pages {
				after = append(after, `,"nextCursor":"`...)
				after = append(after, s.cursors.encode(n, pos+1)...)
				after = append(after, '"')
			}
			res = result{body: []byte(`"tools":[`), cacheable: true, wire: wire, after: after}
			return nil
		}
		body := make([]byte, listRoom, int64(listRoom+len(s.info)+160)+min(max(4096, s.pageSize.Load()+512), maxPageHint))
		body = append(body, `"tools":[`...)
		if pos < pages {
			first := true
			if err := c.Page(pos, func(name string, tool []byte) error {
				if !first {
					body = append(body, ',')
				}
				first = false
				body = policy.AppendToolWire(body, name, tool)
				return nil
			}); err != nil {
				return err
			}
		}
		if pos+1 >= pages {
			if progressive(c) {
				body = s.appendDiscoveryTools(body, body[len(body)-1] == '[')
			}
			body = s.appendJobTools(body, body[len(body)-1] == '[')
		}
		body = append(body, ']')
		if pos+1 < pages {
			body = append(body, `,"nextCursor":"`...)
			body = append(body, s.cursors.encode(n, pos+1)...)
			body = append(body, '"')
		}
		s.pageSize.Store(int64(len(body) - listRoom))
		res = result{body: body[listRoom:], cacheable: true, buf: body, room: listRoom}
		return nil
	})
	if rerr != nil {
		return result{}, rerr // res may still be written by a read that timed out
	}
	return res, nil
}

// Reasons the adapter itself gives in a rejected envelope.
const (
	reasonOverload    = "too many concurrent calls"
	reasonInteractive = "the command requires interaction, which this endpoint does not support"
	reasonNotManaged  = "the command is not callable by a program"
	reasonTooLarge    = "the result is too large for an MCP response"
	reasonContinue    = "continuation data (inputResponses, requestState) is not accepted: this server never asks for input, so there is nothing to continue"
)

// pinReadAt is the state of the store a call's pin is checked as of: what
// its lookup found current, unless the call spends a one-time token. That
// spending is a store write after the lookup, which waits behind any other
// (an untrust among them), so such a pin reads the store as it is then.
func pinReadAt(lookup any, spend func() error) any {
	if spend != nil {
		return nil
	}
	return lookup
}

// callTool resolves, checks and admits one tools/call and starts it. It
// answers at once for anything that ends before extension code would run;
// otherwise the call's goroutine answers when the invocation ends. Each
// phase answers the request itself when it ends the call.
func (s *Session) callTool(req *Request, e era) {
	name, token, ok := s.callParams(req)
	if !ok || s.callJobTool(req, e, name) || s.callDiscoveryTool(req, e, name) {
		return
	}
	bc, revN, at, ok := s.resolveCall(req, name)
	if !ok {
		return
	}
	commit, invID, kreq, ok := s.checkCall(req, e, name, bc)
	if !ok {
		return
	}
	if s.taskPolicy().Allows(bc.Command.ID) && s.startTask(req, e, name, revN, bc, s.taskInvocation(req, invID, bc, kreq)) {
		return
	}
	ad, ok := s.admitCall(req, e, invID, Pinned{Revision: revN, Tool: name, Release: bc.Release, ReadAt: pinReadAt(at, commit)})
	if !ok || !s.commitCall(req, bc.Command.ID, commit, ad) {
		return
	}
	s.startCall(req, e, ad, token, &kernel.Invocation{
		ID:          invID,
		Command:     bc.Command,
		Dir:         bc.Dir,
		Request:     kreq,
		Interactive: false,
		Caller:      s.caller(req, ad.bound),
		Limits:      ad.bound.Template.Limits(),
		Stdout:      kernel.NewDiagnostics(ad.bound.Template.DiagnosticsBytes),
		Stderr:      kernel.NewDiagnostics(ad.bound.Template.DiagnosticsBytes),
		Package:     bc.Release.Name,
		Settings:    bc.Settings,
	})
}

// callParams reads the tool name and the progress token, if any.
func (s *Session) callParams(req *Request) (name string, token jsontext.Value, ok bool) {
	name, ok = stringParam(req.params.Name)
	if !ok {
		s.replyError(req, newError(codeInvalidParams, "invalid params: name must be a string"))
		return "", nil, false
	}
	if t, has := req.meta["progressToken"]; has {
		if k := t.Kind(); k != '"' && k != '0' {
			s.replyError(req, newError(codeInvalidParams, "invalid params: progressToken must be a string or a number"))
			return "", nil, false
		}
		token = t
	}
	return name, token, true
}

// resolveCall finds the command the name means in the active revision,
// which the call is then pinned to.
func (s *Session) resolveCall(req *Request, name string) (bc *Resolved, revN uint64, at any, ok bool) {
	prog := false
	rerr := s.currentFrom(func(n uint64, c Catalog) error {
		revN, bc, prog, at = n, nil, false, nil
		if c == nil || !c.HasEndpoint() {
			return nil
		}
		if rc, ok := c.(ReadAtCatalog); ok {
			at = rc.ReadAt()
		}
		prog = progressive(c)
		var err error
		if bc, err = c.Resolve(name); errors.Is(err, ErrNotCached) {
			return err
		} else if err != nil {
			s.logf("mcp: %v", err)
			return rpcFailure{newError(codeInternalError, "the active revision is inconsistent")}
		}
		return nil
	}, true)
	if rerr != nil {
		s.replyError(req, rerr)
		return nil, 0, nil, false
	}
	if bc == nil {
		// Unknown, stale and invisible names all get this one answer.
		s.replyError(req, s.unknownTool(name, prog))
		return nil, 0, nil, false
	}
	return bc, revN, at, true
}

// checkCall runs every check that needs no slot: the id, the credential,
// the era's rules, then the rejections that run nothing (mode,
// continuation, interaction, input).
func (s *Session) checkCall(req *Request, e era, name string, bc *Resolved) (commit func() error, invID string, kreq kernel.Request, ok bool) {
	s.mu.Lock()
	_, busy := s.calls[req.key]
	s.mu.Unlock()
	if busy || s.subs.has(req.key) {
		s.replyError(req, newError(codeInvalidRequest, msgIDInUse))
		return nil, "", kreq, false
	}
	cmd := bc.Command
	if s.cfg.Authorize != nil {
		var err error
		if commit, err = s.cfg.Authorize(req, cmd.ID, bc.Security); err != nil {
			s.refuse(req, err)
			return nil, "", kreq, false
		}
	}
	if rerr := s.refuseDirect(req, e, name, cmd.ID); rerr != nil {
		s.replyError(req, rerr)
		return nil, "", kreq, false
	}
	invID = s.newID()
	reason := ""
	switch {
	case cmd.Execute.Mode != "" && cmd.Execute.Mode != kernel.ModeManaged:
		reason = reasonNotManaged
	case req.params.InputResponses != nil || req.params.RequestState != nil:
		reason = reasonContinue
	case cmd.Machine != nil && cmd.Machine.Interaction == kernel.InteractionRequired:
		reason = reasonInteractive
	default:
		var err error
		if kreq, err = kernel.RequestFromJSON(cmd, req.params.Arguments); err != nil {
			reason = inputReason(err)
		}
	}
	if reason != "" {
		s.reply(req, e, s.rejected(invID, reason))
		return nil, "", kreq, false
	}
	return commit, invID, kreq, true
}

// admission is one call holding its slots: its context, pinned to the
// revision it resolved in, and the launch binding it runs under.
type admission struct {
	c     *call
	ctx   context.Context
	key   string
	bound *policy.Launch
}

// admitCall takes a running and a held slot, or rejects the call when the
// template's bounds are full.
func (s *Session) admitCall(req *Request, e era, invID string, pin Pinned) (*admission, bool) {
	// admit fixed the launch binding: its template bounds every call for
	// the life of the process; later publishes change tools, not
	// limits.
	s.bmu.Lock()
	bound := s.binding
	s.bmu.Unlock()
	ad := &admission{c: &call{}, key: req.key, bound: bound}
	s.mu.Lock()
	maxConc, maxHeld := limits(bound.Template)
	if s.running >= maxConc || s.held >= maxHeld {
		s.mu.Unlock()
		s.reply(req, e, s.rejected(invID, reasonOverload))
		return nil, false
	}
	ad.ctx, ad.c.cancel = context.WithCancel(s.ctx)
	ad.ctx = withPinned(ad.ctx, pin)
	s.calls[ad.key] = ad.c
	s.running++
	s.held++
	s.wg.Add(1)
	s.mu.Unlock()
	return ad, true
}

// unadmit gives the slots back for a call that will not start.
func (s *Session) unadmit(ad *admission) {
	ad.c.cancel()
	s.mu.Lock()
	delete(s.calls, ad.key)
	s.running--
	s.held--
	s.mu.Unlock()
	s.wg.Done()
}

// commitCall is the last word before the start: a caller that left while
// its call waited (for the store, to spend its token) gets nothing
// started, no child and no token spent for it; a one-time credential is
// spent here.
func (s *Session) commitCall(req *Request, command string, commit func() error, ad *admission) bool {
	if callerGone(req) {
		s.unadmit(ad)
		s.logf("a call of %s was not started: its caller went away first", command)
		return false
	}
	if commit == nil {
		return true
	}
	// The credential is spent only by a call about to run (a one-time
	// token): after every check and the admission, before the start.
	if err := commit(); err != nil {
		s.unadmit(ad)
		s.refuse(req, err)
		return false
	}
	if callerGone(req) {
		s.unadmit(ad)
		s.logf("a call of %s was not started: its caller went away while its one-time token was spent", command)
		return false
	}
	return true
}

// startCall runs the admitted invocation, with progress when the request
// asked for it.
func (s *Session) startCall(req *Request, e era, ad *admission, token jsontext.Value, inv *kernel.Invocation) {
	var ps *progressSink
	if token != nil {
		ps = &progressSink{s: s, rep: req.rep, token: token, c: ad.c}
		inv.OnProgress = ps.send
	}
	ad.c.unwatch = s.whenGone(req)
	if ps == nil && s.scfg.PerRequest {
		// The transport's goroutine has nothing to do but wait for this
		// one response (HandleEra): the call runs on it, without a hand-off.
		s.runCall(ad.ctx, ad.key, req, e, ad.c, inv, ps, true)
		return
	}
	go s.runCall(ad.ctx, ad.key, req, e, ad.c, inv, ps, false)
}

// callerGone reports whether the request's caller is gone (a closed HTTP
// request, a cancelled one): its answer would go nowhere.
func callerGone(req *Request) bool {
	ctx := req.rep.Context()
	return ctx != nil && ctx.Err() != nil
}

// refuse answers a call its credential does not authorise: nothing runs,
// and the transport says no its own way (Message.Refused).
func (s *Session) refuse(req *Request, err error) {
	req.rep.Respond(Message{Data: appendError(nil, req.id, newError(codeInvalidRequest, err.Error())), Code: codeInvalidRequest, Refused: err})
}

// limits returns the template's concurrency bounds; zero takes the template
// defaults (docs/profile.md), and holding is never allowed below running.
func limits(t policy.Template) (maxConc, maxHeld int) {
	maxConc, maxHeld = t.MaxConcurrent, t.MaxHeld
	if maxConc <= 0 {
		maxConc = policy.DefaultMaxConcurrent
	}
	if maxHeld <= 0 {
		maxHeld = policy.DefaultMaxHeld
	}
	return maxConc, max(maxHeld, maxConc)
}

// inputReason is the safe diagnostic for a failed input check: the kernel's
// message and JSON pointer, never anything internal.
func inputReason(err error) string {
	if kernel.ErrorCode(err) == kernel.CodeInternal {
		return "invalid input"
	}
	return "invalid input: " + err.Error()
}

func (s *Session) rejected(invID, reason string) result {
	return callResult(&kernel.Result{InvocationID: invID, Outcome: kernel.Rejected, Reason: reason})
}

func (s *Session) runCall(ctx context.Context, key string, req *Request, e era, c *call, inv *kernel.Invocation, ps *progressSink, inline bool) {
	id := req.id
	defer s.wg.Done()
	res := s.invoke(ctx, inv)
	c.unwatch()
	if res.Outcome == kernel.Cancelled && context.Cause(ctx) == errOwnerCancel && res.Reason != "deadline exceeded" {
		res.Reason = ReasonOwnerCancel // one stable reason, whatever the invoker said
	}
	c.cancel()
	if ps != nil {
		ps.close()
	}
	s.mu.Lock()
	s.running--
	s.mu.Unlock()
	if s.cfg.Diagnostics != nil {
		// Saved after the response is queued: owner bookkeeping never adds
		// to a call's latency. wg (held until we return) keeps it in shutdown.
		// Inline, the transport writes the response only once we return.
		defer func() {
			if !inline || (s.cfg.Quick != nil && s.cfg.Quick(inv, res)) {
				s.cfg.Diagnostics(inv, res)
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.cfg.Diagnostics(inv, res)
			}()
		}()
	}
	release := func() {
		s.mu.Lock()
		delete(s.calls, key)
		s.held--
		s.mu.Unlock()
	}
	if c.dropped.Load() {
		release()
		return
	}
	msg := s.response(id, e, callResult(&res))
	if len(msg) > maxResponseBytes {
		s.logf("mcp: invocation %s: %d-byte response over the limit", inv.ID, len(msg))
		tooLarge := kernel.Result{InvocationID: inv.ID, Outcome: kernel.ExecutionFailed, Reason: reasonTooLarge}
		msg = s.response(id, e, callResult(&tooLarge))
	}
	req.rep.Respond(Message{Data: msg, Drop: &c.dropped, Done: release})
}

// invoke runs the invocation and normalises what comes back, so a broken
// invoker can neither crash the server nor emit a malformed envelope.
func (s *Session) invoke(ctx context.Context, inv *kernel.Invocation) (res kernel.Result) {
	defer func() {
		if p := recover(); p != nil {
			s.logf("mcp: invocation %s: invoker panicked: %v", inv.ID, p)
			res = kernel.Result{InvocationID: inv.ID, Outcome: kernel.ExecutionFailed, Reason: "internal error"}
		}
	}()
	res = s.cfg.Invoker.Invoke(ctx, inv)
	res.InvocationID = inv.ID
	switch res.Outcome {
	case kernel.Succeeded, kernel.CommandFailed, kernel.ExecutionFailed, kernel.Rejected, kernel.Cancelled:
	default:
		s.logf("mcp: invocation %s: invoker returned outcome %q", inv.ID, res.Outcome)
		res = kernel.Result{InvocationID: inv.ID, Outcome: kernel.ExecutionFailed, Reason: "internal error"}
	}
	if len(res.CommandResult) > 0 {
		v := res.CommandResult.Clone()
		if v.Kind() != '{' || v.Compact(jsontext.AllowDuplicateNames(false), jsontext.AllowInvalidUTF8(false)) != nil {
			s.logf("mcp: invocation %s: invoker returned a malformed commandResult", inv.ID)
			return kernel.Result{InvocationID: inv.ID, Outcome: kernel.ExecutionFailed, Reason: "internal error"}
		}
		res.CommandResult = v
	}
	if res.Outcome == kernel.Succeeded && len(res.CommandResult) == 0 {
		s.logf("mcp: invocation %s: succeeded without a commandResult", inv.ID)
		return kernel.Result{InvocationID: inv.ID, Outcome: kernel.ExecutionFailed, Reason: "internal error"}
	}
	return res
}

// callResult is the tools/call result for a final envelope: the envelope as
// structuredContent and as one text block; isError unless it succeeded.
func callResult(r *kernel.Result) result {
	env := appendEnvelope(nil, r)
	body := make([]byte, 0, 3*len(env)+64)
	body = append(body, `"content":[{"type":"text","text":`...)
	body = appendString(body, string(env))
	body = append(body, `}],"structuredContent":`...)
	body = append(body, env...)
	body = append(body, `,"isError":`...)
	body = strconv.AppendBool(body, r.Outcome != kernel.Succeeded)
	return result{body: body}
}

// appendEnvelope writes the closed core envelope
// {invocationId, outcome, reason?, commandResult?}.
func appendEnvelope(dst []byte, r *kernel.Result) []byte {
	dst = append(dst, `{"invocationId":`...)
	dst = appendString(dst, r.InvocationID)
	dst = append(dst, `,"outcome":`...)
	dst = appendString(dst, string(r.Outcome))
	if r.Reason != "" {
		dst = append(dst, `,"reason":`...)
		dst = appendString(dst, r.Reason)
	}
	if len(r.CommandResult) > 0 {
		dst = append(dst, `,"commandResult":`...)
		dst = append(dst, r.CommandResult...)
	}
	return append(dst, '}')
}

// progressSink turns a call's progress into notifications/progress: only
// while the call runs, only strictly increasing finite values, and dropped
// rather than queued when the outgoing queue is full.
type progressSink struct {
	s     *Session
	rep   Reply
	token jsontext.Value
	c     *call

	mu      sync.Mutex
	last    float64
	sent    bool
	closed  bool
	dropped int // notifications the full queue refused, logged once at close
}

func (p *progressSink) send(pr kernel.Progress) {
	if pr.Progress == nil || !finite(*pr.Progress) {
		return
	}
	v := *pr.Progress
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.c.dropped.Load() || (p.sent && v <= p.last) {
		return
	}
	p.last, p.sent = v, true
	msg := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`)
	msg = append(msg, p.token...)
	msg = append(msg, `,"progress":`...)
	msg = kernel.AppendJSONFloat(msg, v)
	if pr.Total != nil && finite(*pr.Total) {
		msg = append(msg, `,"total":`...)
		msg = kernel.AppendJSONFloat(msg, *pr.Total)
	}
	if pr.Message != "" {
		msg = append(msg, `,"message":`...)
		msg = appendString(msg, pr.Message)
	}
	msg = append(msg, "}}\n"...)
	if len(msg) > maxResponseBytes {
		return
	}
	if !p.rep.Hint(Message{Data: msg, Drop: &p.c.dropped}) {
		p.dropped++
	}
}

func (p *progressSink) close() {
	p.mu.Lock()
	p.closed = true
	dropped := p.dropped
	p.mu.Unlock()
	if dropped > 0 {
		p.s.logf("mcp: %d progress notification(s) dropped: outgoing queue full", dropped)
	}
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
