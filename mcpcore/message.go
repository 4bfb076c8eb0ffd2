package mcpcore

import (
	"bytes"
	"errors"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
)

// JSON-RPC 2.0 and MCP error codes this adapter emits.
const (
	codeParseError         = -32700
	codeInvalidRequest     = -32600
	codeMethodNotFound     = -32601
	codeInvalidParams      = -32602
	codeInternalError      = -32603
	codeUnsupportedVersion = -32022
)

// Reader limits (docs/design.md, Limits).
const (
	maxLineBytes     = 1 << 20 // one incoming message, without its newline
	maxDepth         = 32
	maxMembers       = 4096
	maxResponseBytes = 2 << 20 // one encoded outgoing message
)

// rpcError is a JSON-RPC error object. data, when set, is compact JSON.
type rpcError struct {
	code    int
	message string
	data    []byte
}

func newError(code int, msg string) *rpcError { return &rpcError{code: code, message: msg} }

// Request is one checked incoming request or notification.
type Request struct {
	id     jsontext.Value // exact JSON text of the id; nil for a notification
	method string
	params params
	meta   map[string]jsontext.Value // params._meta; nil when absent
	// metaErr is set when params._meta is present but not an object.
	metaErr bool

	// Auth is what the transport authenticated the request as; the core
	// hands it to Config.Authorize and SessionConfig.Caller untouched.
	Auth any

	rep Reply  // how it is answered (Handle sets it)
	key string // its key among the session's calls and streams
}

// params holds every params member any handled method reads; the raw values
// are checked by the handler that uses them.
type params struct {
	Meta            jsontext.Value // _meta
	Cursor          jsontext.Value
	Name            jsontext.Value
	Arguments       jsontext.Value
	ProtocolVersion jsontext.Value
	RequestID       jsontext.Value
	TaskID          jsontext.Value // tasks/get, tasks/update, tasks/cancel
	Notifications   jsontext.Value
	// Continuation of an input_required result, which this server never
	// sends: present at all, the call is rejected before dispatch.
	InputResponses jsontext.Value
	RequestState   jsontext.Value
}

// set keeps the member name (exact, case and all) if params has it.
func (p *params) set(name []byte, v jsontext.Value) {
	switch string(name) {
	case "_meta":
		p.Meta = v
	case "cursor":
		p.Cursor = v
	case "name":
		p.Name = v
	case "arguments":
		p.Arguments = v
	case "protocolVersion":
		p.ProtocolVersion = v
	case "requestId":
		p.RequestID = v
	case "taskId":
		p.TaskID = v
	case "notifications":
		p.Notifications = v
	case "inputResponses":
		p.InputResponses = v
	case "requestState":
		p.RequestState = v
	}
}

// envelope is the JSON-RPC frame before its members are checked.
type envelope struct {
	JSONRPC, ID, Method, Params, Result, Error jsontext.Value
}

func (e *envelope) set(name []byte, v jsontext.Value) {
	switch string(name) {
	case "jsonrpc":
		e.JSONRPC = v
	case "id":
		e.ID = v
	case "method":
		e.Method = v
	case "params":
		e.Params = v
	case "result":
		e.Result = v
	case "error":
		e.Error = v
	}
}

// walker reads the members of objects already checked strictly (valid,
// no duplicate names); kept between requests.
type walker struct {
	dec jsontext.Decoder
	in  bytes.Buffer
}

var walkers = sync.Pool{New: func() any { return new(walker) }}

func getWalker() *walker { return walkers.Get().(*walker) }
func putWalker(w *walker) {
	// Let go of the last request's text (arguments and all) before the
	// walker waits in the pool.
	w.in = bytes.Buffer{}
	w.dec.Reset(&w.in)
	walkers.Put(w)
}

// members calls fn with each member of obj, a JSON object: its name
// unquoted and its value as a slice of obj, which the caller may keep.
func (w *walker) members(obj []byte, fn func(name []byte, v jsontext.Value)) error {
	w.in = *bytes.NewBuffer(obj)
	w.dec.Reset(&w.in, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	tok, err := w.dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != '{' {
		return errors.New("not an object")
	}
	var unq []byte
	for w.dec.PeekKind() != '}' {
		name, err := w.dec.ReadValue()
		if err != nil {
			return err
		}
		if name.Kind() != '"' || len(name) < 2 {
			return errors.New("a member name is not a string")
		}
		key := name[1 : len(name)-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			if unq, err = jsontext.AppendUnquote(unq[:0], name); err != nil {
				return err
			}
			key = unq
		}
		v, err := w.dec.ReadValue()
		if err != nil {
			return err
		}
		end := int(w.dec.InputOffset())
		if end < len(v) || end > len(obj) {
			return errors.New("a member value is out of place")
		}
		fn(key, jsontext.Value(obj[end-len(v):end:end]))
	}
	return nil
}

// decodeLine turns one line into a request. It returns (nil, nil) for a line
// that needs no answer (blank, or a response from the client), and an error
// together with the id to answer with (nil = JSON null) otherwise.
func decodeLine(line []byte) (*Request, jsontext.Value, *rpcError) {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return nil, nil, nil
	}
	if err := kernel.CheckJSON(trimmed, kernel.JSONLimits{MaxDepth: maxDepth, MaxMembers: maxMembers}); err != nil {
		return nil, nil, newError(codeParseError, "parse error: "+err.Error())
	}
	switch trimmed[0] {
	case '{':
	case '[':
		return nil, nil, newError(codeInvalidRequest, "invalid request: batches are not supported")
	default:
		return nil, nil, newError(codeInvalidRequest, "invalid request: a message must be a JSON object")
	}
	// Checked strictly above, so the text is one valid object without
	// duplicate names: one walk of it, over a copy that the request's raw
	// values share, replaces a decode per level.
	buf := bytes.Clone(trimmed)
	var env envelope
	w := getWalker()
	defer putWalker(w)
	if err := w.members(buf, env.set); err != nil {
		return nil, nil, newError(codeInvalidRequest, "invalid request: "+err.Error())
	}
	if env.Method == nil && (env.Result != nil || env.Error != nil) {
		// A response, whatever its id: an error response to a line the
		// client could not parse carries "id": null, and answering it would
		// start an error ping-pong. This server sends no requests.
		return nil, nil, nil
	}
	var id jsontext.Value
	if env.ID != nil {
		if !validID(env.ID) {
			return nil, nil, newError(codeInvalidRequest, "invalid request: id must be a string or an integer")
		}
		id = env.ID
	}
	if v, ok := stringParam(env.JSONRPC); !ok || v != "2.0" {
		// Compared as decoded text: "\u0032.0" is "2.0".
		return nil, id, newError(codeInvalidRequest, `invalid request: jsonrpc must be "2.0"`)
	}
	if env.Method == nil {
		return nil, id, newError(codeInvalidRequest, "invalid request: missing method")
	}
	method, ok := stringParam(env.Method)
	if !ok {
		return nil, id, newError(codeInvalidRequest, "invalid request: method must be a string")
	}
	req := &Request{id: id, method: method}
	if env.Params != nil {
		// A notification is never answered, not even with an error.
		if env.Params.Kind() != '{' {
			if id == nil {
				return nil, nil, nil
			}
			return nil, id, newError(codeInvalidParams, "invalid params: params must be an object")
		}
		if err := w.members(env.Params, req.params.set); err != nil {
			if id == nil {
				return nil, nil, nil
			}
			return nil, id, newError(codeInvalidParams, "invalid params: "+err.Error())
		}
		if m := req.params.Meta; m != nil {
			if m.Kind() != '{' {
				req.metaErr = true
			} else {
				req.meta = map[string]jsontext.Value{}
				if w.members(m, func(name []byte, v jsontext.Value) { req.meta[string(name)] = v }) != nil {
					req.metaErr = true
					req.meta = nil
				}
			}
		}
	}
	return req, nil, nil
}

// validID reports whether v is a JSON string or an integer literal (MCP ids
// are never null, and a fraction or exponent is not an integer's text).
func validID(v jsontext.Value) bool {
	switch v.Kind() {
	case '"':
		return true
	case '0':
		for i, c := range v {
			if c == '-' && i == 0 {
				continue
			}
			if c < '0' || c > '9' {
				return false
			}
		}
		return true
	}
	return false
}

// idKey is a map key for a request id, so that a string "1" and a number 1
// stay distinct while the same text always matches.
func idKey(v jsontext.Value) string {
	if v.Kind() == '"' {
		var s string
		if json.Unmarshal(v, &s) == nil {
			return "s" + s
		}
	}
	return "n" + string(v)
}

// stringParam decodes a JSON string; ok is false for any other kind.
func stringParam(v jsontext.Value) (string, bool) {
	if v.Kind() != '"' || len(v) < 2 {
		return "", false
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1]), true
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

const responseHead = `{"jsonrpc":"2.0","id":`

// appendError frames an error response; a nil id is written as null.
func appendError(dst []byte, id jsontext.Value, e *rpcError) []byte {
	dst = append(dst, responseHead...)
	if id == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, id...)
	}
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.code), 10)
	dst = append(dst, `,"message":`...)
	dst = appendString(dst, e.message)
	if e.data != nil {
		dst = append(dst, `,"data":`...)
		dst = append(dst, e.data...)
	}
	return append(dst, "}}\n"...)
}

// appendString appends s as a JSON string. Invalid UTF-8 (which can only come
// from a bug) is replaced rather than breaking the frame.
func appendString(dst []byte, s string) []byte {
	out, err := jsontext.AppendQuote(dst, s)
	if err != nil {
		out, _ = jsontext.AppendQuote(dst, []byte(bytes.ToValidUTF8([]byte(s), []byte("\uFFFD"))))
	}
	return out
}
