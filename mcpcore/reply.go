package mcpcore

import (
	"context"
	"io"
	"strconv"
	"sync/atomic"

	"github.com/go-json-experiment/json/jsontext"
)

// Message is one framed outgoing JSON-RPC message (ending in a newline).
type Message struct {
	Data []byte
	// More, when set, follows Data on the wire: the message is Data and
	// then each of More in order. Only a session whose transport asked for
	// it (SessionConfig.Spliced) gets a message in parts; the parts may be
	// shared with other messages and are never written to.
	More [][]byte
	// Code is the JSON-RPC error code of an error response, 0 otherwise;
	// a transport may map it to its own status.
	Code int
	// Refused is set when Config.Authorize refused a call; Data then holds
	// a JSON-RPC error a transport may send instead of its own refusal.
	Refused error
	// Drop, when set and true at the moment the message would be written,
	// means it is not written (the client cancelled the request).
	Drop *atomic.Bool
	// Done, when set, runs once the message is written, dropped or refused.
	Done func()
}

// Len is the message's length on the wire.
func (m *Message) Len() int {
	n := len(m.Data)
	for _, p := range m.More {
		n += len(p)
	}
	return n
}

// Bytes is the whole message in one slice: Data itself unless it comes in
// parts.
func (m *Message) Bytes() []byte {
	if len(m.More) == 0 {
		return m.Data
	}
	b := make([]byte, 0, m.Len())
	b = append(b, m.Data...)
	for _, p := range m.More {
		b = append(b, p...)
	}
	return b
}

// WriteTo writes the message, part by part.
func (m *Message) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(m.Data)
	total := int64(n)
	for _, p := range m.More {
		if err != nil {
			break
		}
		n, err = w.Write(p)
		total += int64(n)
	}
	return total, err
}

// Finish runs Done once.
func (m *Message) Finish() {
	if m.Done != nil {
		m.Done()
		m.Done = nil
	}
}

// Reply is how the core answers one request; each transport implements it.
type Reply interface {
	// Respond sends the request's final response. A request the client
	// cancelled gets none.
	Respond(m Message)
	// Send sends a message that must reach the client before the final
	// response (a subscriptions/listen acknowledgement).
	Send(m Message)
	// Hint sends a request-scoped notification (progress, list_changed)
	// that may be dropped; false: it was.
	Hint(m Message) bool
	// Context, when not nil, ends once the caller went away: the request
	// is cancelled and nothing more is sent for it. Nil: the transport
	// cancels through notifications/cancelled instead.
	Context() context.Context
}

// Canceller is a Reply the core can end itself: on a PerRequest session,
// the legacy request a notifications/cancelled names is ended through
// Cancel, which must end its Context as the caller going away would.
type Canceller interface {
	Cancel()
}

// Decode checks one incoming message and turns it into a request. It
// returns (nil, nil, nil) for a message that needs no answer (blank, or a
// response from the client), and an error together with the id to answer
// with (nil = JSON null) otherwise; AppendError frames it.
func Decode(msg []byte) (*Request, jsontext.Value, *Error) {
	return decodeLine(msg)
}

// Error is a JSON-RPC error object.
type Error = rpcError

// NewError makes a JSON-RPC error.
func NewError(code int, msg string) *Error { return newError(code, msg) }

// Code is the error's JSON-RPC code.
func (e *rpcError) Code() int { return e.code }

// AppendError frames an error response; a nil id is written as null.
func AppendError(dst []byte, id jsontext.Value, e *Error) []byte { return appendError(dst, id, e) }

// Exported JSON-RPC and MCP error codes, for transports.
const (
	CodeParseError         = codeParseError
	CodeInvalidRequest     = codeInvalidRequest
	CodeMethodNotFound     = codeMethodNotFound
	CodeInvalidParams      = codeInvalidParams
	CodeInternalError      = codeInternalError
	CodeUnsupportedVersion = codeUnsupportedVersion
	CodeHeaderMismatch     = -32020
)

// Limits every transport applies (docs/design.md, Limits).
const (
	MaxMessageBytes  = maxLineBytes
	MaxResponseBytes = maxResponseBytes
)

// ID is the request's id as JSON text; nil for a notification.
func (r *Request) ID() jsontext.Value { return r.id }

// Method is the request's method.
func (r *Request) Method() string { return r.method }

// Name is params.name when it is a string.
func (r *Request) Name() (string, bool) { return stringParam(r.params.Name) }

// MetaVersion is params._meta's protocol version when it is a string;
// present reports whether the key is there at all.
func (r *Request) MetaVersion() (version string, present bool) {
	v, ok := r.meta[metaProtocolVersion]
	if !ok {
		return "", false
	}
	s, _ := stringParam(v)
	return s, true
}

// CancelledID is a notifications/cancelled's params.requestId.
func (r *Request) CancelledID() jsontext.Value { return r.params.RequestID }

// HasProgressToken reports whether the request asks for progress.
func (r *Request) HasProgressToken() bool {
	_, ok := r.meta["progressToken"]
	return ok
}

// IsModern reports whether a request carries the modern protocol version
// key; such a request is never legacy.
func IsModern(r *Request) bool {
	_, ok := r.meta[metaProtocolVersion]
	return ok
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
