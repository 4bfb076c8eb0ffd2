package mcpcore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
)

// Tools-changed delivery. A modern client opens subscriptions/listen with
// params.notifications.toolsListChanged; a legacy client gets the same hint,
// untagged, once it has initialized. Either way the store is watched only
// while someone listens, and a publish is announced only when it changes
// the launch endpoint's projection (the digest of its tool objects): in
// stable naming mode a publish may leave it as it was.
//
// The state below knows nothing of any transport: each stream answers
// through its request's Reply (Send must reach the client: the
// acknowledgement; Hint may drop: the notifications), and legacy hints go
// through the session's Hint.

// maxListenStreams bounds the open subscriptions/listen streams of one
// process; a client needs one, a few at most.
const maxListenStreams = 8

const metaSubscriptionID = "io.modelcontextprotocol/subscriptionId"

var (
	errListenFull = errors.New("too many open subscriptions/listen streams")
	errListenBusy = errors.New("the request id is already in use")
)

// listenStream is one open subscriptions/listen stream.
type listenStream struct {
	key   string
	id    jsontext.Value
	tools bool // toolsListChanged was asked for and is honoured
	rep   Reply
}

type subscriptions struct {
	ctx     context.Context // the session; the watch ends with it
	watch   func(ctx context.Context, fn func(active uint64))
	digest  func(n uint64) ([32]byte, bool) // the launch endpoint's tools in revision n
	current func() ([32]byte, bool)         // the same for the active revision
	hint    func(Message) bool              // legacy hints; nil: none; false: dropped (queue full)
	logf    func(string, ...any)

	mu      sync.Mutex
	streams []*listenStream // in the order they were opened
	legacy  bool            // a legacy client initialized: it gets untagged hints
	stop    context.CancelFunc
	gen     uint64 // which watch is current; an older one's reports are ignored
	last    [32]byte
	known   bool
	wg      sync.WaitGroup
}

// supported reports whether tools-changed hints can be delivered at all.
func (u *subscriptions) supported() bool { return u.watch != nil }

// supportedLegacy reports whether a legacy client can get them: it needs a
// session-wide channel.
func (u *subscriptions) supportedLegacy() bool { return u.watch != nil && u.hint != nil }

func (u *subscriptions) has(key string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.find(key) >= 0
}

func (u *subscriptions) find(key string) int {
	for i, st := range u.streams {
		if st.key == key {
			return i
		}
	}
	return -1
}

// open registers a stream and queues its acknowledgement, before any
// notification for it can be queued.
func (u *subscriptions) open(key string, id jsontext.Value, tools bool, rep Reply) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.find(key) >= 0 {
		return errListenBusy
	}
	if len(u.streams) >= maxListenStreams {
		return errListenFull
	}
	tools = tools && u.supported()
	u.streams = append(u.streams, &listenStream{key: key, id: id, tools: tools, rep: rep})
	rep.Send(Message{Data: appendAck(nil, id, tools)})
	u.startWatch()
	return nil
}

// close ends the stream with that key (the client cancelled it); it reports
// whether there was one. No response is sent for it.
func (u *subscriptions) close(key string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	i := u.find(key)
	if i < 0 {
		return false
	}
	u.streams = append(u.streams[:i], u.streams[i+1:]...)
	if !u.listening() && u.stop != nil {
		u.stop()
		u.stop = nil
	}
	return true
}

// listenLegacy starts untagged hints for a legacy client, once initialized.
func (u *subscriptions) listenLegacy() {
	if !u.supportedLegacy() {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.legacy = true
	u.startWatch()
}

// listening reports whether anyone wants tools hints; u.mu held.
func (u *subscriptions) listening() bool {
	if u.legacy {
		return true
	}
	for _, st := range u.streams {
		if st.tools {
			return true
		}
	}
	return false
}

// startWatch starts watching the store if someone listens and no watch
// runs; u.mu held. The baseline is the projection now, so a publish after
// the acknowledgement is never missed.
func (u *subscriptions) startWatch() {
	if u.stop != nil || !u.listening() || u.ctx.Err() != nil {
		return
	}
	u.last, u.known = u.current()
	ctx, cancel := context.WithCancel(u.ctx)
	u.stop = cancel
	u.gen++
	gen := u.gen
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		u.watch(ctx, func(n uint64) { u.changed(gen, n) })
	}()
}

// changed is the watch's report that revision n is active.
func (u *subscriptions) changed(gen, n uint64) {
	d, ok := u.digest(n)
	u.mu.Lock()
	defer u.mu.Unlock()
	if gen != u.gen || u.stop == nil {
		return
	}
	if ok && u.known && d == u.last {
		return // a publish that left this endpoint's tools as they were
	}
	// An unreadable revision is announced too: a hint costs a list, a
	// missed one a stale name.
	u.last, u.known = d, ok
	dropped := 0
	for _, st := range u.streams {
		if st.tools && !st.rep.Hint(Message{Data: appendToolsChanged(nil, st.id)}) {
			dropped++
		}
	}
	if u.legacy && !u.hint(Message{Data: appendToolsChanged(nil, nil)}) {
		dropped++
	}
	if dropped > 0 {
		u.logf("mcp: %d tools/list_changed notification(s) dropped: outgoing queue full", dropped)
	}
}

// shutdown stops the watch and waits for it; the streams end with the
// session, unanswered, like the calls still running.
func (u *subscriptions) shutdown() {
	u.mu.Lock()
	if u.stop != nil {
		u.stop()
		u.stop = nil
	}
	u.streams = nil
	u.legacy = false
	u.mu.Unlock()
	u.wg.Wait()
}

// end stops the watch like shutdown and returns the streams that were
// open, in the order they were opened, so the server can end each with its
// final response.
func (u *subscriptions) end() []*listenStream {
	u.mu.Lock()
	streams := append([]*listenStream(nil), u.streams...)
	u.mu.Unlock()
	u.shutdown()
	return streams
}

// appendListenEnd frames the final response a server sends for a
// subscriptions/listen request when it ends the stream itself.
func (s *Session) appendListenEnd(dst []byte, id jsontext.Value) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"result":{"resultType":"complete","_meta":{"`+metaSubscriptionID+`":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"`+metaServerInfo+`":`...)
	dst = append(dst, s.info...)
	return append(dst, "}}}\n"...)
}

// parseFilter checks params.notifications of subscriptions/listen and
// reports whether tools changes were asked for. Known members must have
// their spec types; members this server does not know are not honoured
// (left out of the acknowledgement), as the spec says.
func parseFilter(v jsontext.Value) (tools bool, rerr *rpcError) {
	if v == nil || v.Kind() != '{' {
		return false, newError(codeInvalidParams, "invalid params: notifications must be an object")
	}
	var members map[string]jsontext.Value
	if err := json.Unmarshal(v, &members); err != nil {
		return false, newError(codeInvalidParams, "invalid params: notifications: "+err.Error())
	}
	for name, m := range members {
		switch name {
		case "toolsListChanged", "promptsListChanged", "resourcesListChanged":
			if k := m.Kind(); k != 't' && k != 'f' {
				return false, newError(codeInvalidParams, "invalid params: notifications."+name+" must be a boolean")
			}
		case "taskIds":
			var ids []string
			if m.Kind() != '[' || json.Unmarshal(m, &ids) != nil {
				return false, newError(codeInvalidParams, "invalid params: notifications.taskIds must be an array of strings")
			}
		case "resourceSubscriptions":
			var uris []string
			if m.Kind() != '[' || json.Unmarshal(m, &uris) != nil {
				return false, newError(codeInvalidParams, "invalid params: notifications.resourceSubscriptions must be an array of strings")
			}
		}
	}
	return members["toolsListChanged"].Kind() == 't', nil
}

// appendAck frames notifications/subscriptions/acknowledged with the
// honoured subset: tools changes or nothing (no prompts, no resources).
func appendAck(dst []byte, id jsontext.Value, tools bool) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"`+metaSubscriptionID+`":`...)
	dst = append(dst, id...)
	dst = append(dst, `},"notifications":{`...)
	if tools {
		dst = append(dst, `"toolsListChanged":true`...)
	}
	return append(dst, "}}}\n"...)
}

// appendToolsChanged frames notifications/tools/list_changed, tagged with
// the stream's id, or untagged (id nil) for a legacy client.
func appendToolsChanged(dst []byte, id jsontext.Value) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"`...)
	if id != nil {
		dst = append(dst, `,"params":{"_meta":{"`+metaSubscriptionID+`":`...)
		dst = append(dst, id...)
		dst = append(dst, "}}"...)
	}
	return append(dst, "}\n"...)
}

// emptyDigest is the digest of an endpoint with no tools (or nothing
// published): going from one to the other changes nothing a client sees.
var emptyDigest = sha256.Sum256(nil)

// projectionDigest is the digest of the launch endpoint's tools in
// revision n; false when the revision cannot be read.
func (s *Session) projectionDigest(n uint64) ([32]byte, bool) {
	if n == 0 {
		return emptyDigest, true
	}
	var d [32]byte
	err := s.cfg.View(n, func(_ uint64, c Catalog) (err error) {
		if c == nil {
			d = emptyDigest
			return nil
		}
		if d, err = c.Digest(); err == nil && progressive(c) {
			d = sha256.Sum256(append(d[:], "+discovery"...)) // the discovery tools follow the pages
		}
		return err
	})
	if err != nil {
		s.logf("mcp: loading revision %d: %v", n, err)
		return [32]byte{}, false
	}
	return d, true
}

func (s *Session) currentDigest() ([32]byte, bool) {
	n, err := s.cfg.Active()
	if err != nil && kernel.ErrorCode(err) != kernel.CodeNotFound {
		s.logf("mcp: reading the active revision: %v", err)
		return [32]byte{}, false
	}
	return s.projectionDigest(n)
}

// listen handles subscriptions/listen: it answers only with an error; an
// open stream gets its acknowledgement now, and a response only when the
// server ends it (the owner's cancel).
func (s *Session) listen(req *Request) {
	tools, rerr := parseFilter(req.params.Notifications)
	if rerr != nil {
		s.replyError(req, rerr)
		return
	}
	if rerr := s.taskIDsWithout(req); rerr != nil {
		s.replyError(req, rerr)
		return
	}
	key := req.key
	s.mu.Lock()
	_, busy := s.calls[key]
	s.mu.Unlock()
	err := errListenBusy
	if !busy {
		err = s.subs.open(key, req.id, tools, req.rep)
	}
	switch err {
	case nil:
		s.whenGone(req) // until the stream ends with its request
	case errListenBusy:
		s.replyError(req, newError(codeInvalidRequest, msgIDInUse))
	case errListenFull:
		s.replyError(req, newError(codeInvalidRequest, fmt.Sprintf("invalid request: too many open subscriptions/listen streams (at most %d); cancel one with notifications/cancelled", maxListenStreams)))
	}
}
