package kernel

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The rukh.invoke/1 channel: newline-delimited JSON over a socket pair
// the child sees as file descriptor ChannelFD. docs/extension-protocol.md is
// the contract for extension authors.
const (
	InvokeProtocol = "rukh.invoke/1"
	ChannelFD      = 3

	// MaxReasonBytes bounds a report's reason and a progress message.
	MaxReasonBytes = 4096
	// channelOverhead is what a channel line may carry beyond the result
	// limit (envelope, reason, escaping).
	channelOverhead = 256 << 10
	// channelDepth bounds nesting of a whole channel line: the result's own
	// depth limit plus the report and commandResult wrappers, with room so
	// the result check, not the line check, names a too-deep result.
	channelDepth = 64
)

// Message types on the channel.
const (
	msgInvoke   = "invoke"
	msgProgress = "progress"
	msgReport   = "report"
	msgCancel   = "cancel"
)

func encodeCancel(reason string) []byte {
	b, _ := json.Marshal(struct {
		Type   string `json:"type"`
		Reason string `json:"reason"`
	}{msgCancel, reason})
	return append(b, '\n')
}

type progressMessage struct {
	Type     string   `json:"type"`
	Message  string   `json:"message,omitempty"`
	Progress *float64 `json:"progress,omitempty"`
	Total    *float64 `json:"total,omitempty"`
}

type reportMessage struct {
	Type          string         `json:"type"`
	InvocationID  *string        `json:"invocationId"`
	Outcome       Outcome        `json:"outcome"`
	Reason        string         `json:"reason,omitempty"`
	CommandResult jsontext.Value `json:"commandResult,omitzero"`
}

// channelEvent is one parsed, checked message, or the reason the channel
// broke the protocol.
type channelEvent struct {
	progress  *Progress
	report    *checkedReport
	violation string
}

// checkedReport is a report whose identity, outcome and result passed.
type checkedReport struct {
	outcome Outcome
	reason  string
	result  jsontext.Value // compacted; nil when absent
}

var strictUnmarshal = json.RejectUnknownMembers(true)

// parseChannelLine checks one line from the child as it arrives: strict
// JSON, a known message type, and for a report its invocation id, outcome
// and commandResult (kind, size, schema).
func parseChannelLine(line []byte, id string, rc *resultChecker) channelEvent {
	if m, ok := quickReport(line); ok {
		return checkReport(&m, id, rc)
	}
	return parseChannelLineFully(line, id, rc)
}

// parseChannelLineFully is parseChannelLine for every line: strict checks
// first, then the message decoded by its type.
func parseChannelLineFully(line []byte, id string, rc *resultChecker) channelEvent {
	bad := func(format string, args ...any) channelEvent {
		return channelEvent{violation: fmt.Sprintf(format, args...)}
	}
	if err := CheckJSON(line, JSONLimits{MaxDepth: channelDepth}); err != nil {
		return bad("invalid channel message: %v%s", err, lineHint(line, err))
	}
	if t := bytes.TrimLeft(line, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return bad("channel message is not a JSON object")
	}
	var head struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return bad("invalid channel message: %v", JSONError(err))
	}
	if head.Type == nil {
		return bad("channel message without \"type\"")
	}
	switch *head.Type {
	case msgProgress:
		var m progressMessage
		if err := json.Unmarshal(line, &m, strictUnmarshal); err != nil {
			return bad("invalid progress message: %v", JSONError(err))
		}
		if len(m.Message) > MaxReasonBytes {
			return bad("progress message is %d bytes, over the limit of %d", len(m.Message), MaxReasonBytes)
		}
		return channelEvent{progress: &Progress{Message: m.Message, Progress: m.Progress, Total: m.Total}}
	case msgReport:
		var m reportMessage
		if err := json.Unmarshal(line, &m, strictUnmarshal); err != nil {
			return bad("invalid report: %v", JSONError(err))
		}
		return checkReport(&m, id, rc)
	case msgInvoke, msgCancel:
		return bad("message type %q is sent by the core, not the program", *head.Type)
	default:
		return bad("unknown message type %s", strconv.Quote(*head.Type))
	}
}

// checkReport checks a decoded report: its invocation, outcome, reason and
// commandResult.
func checkReport(m *reportMessage, id string, rc *resultChecker) channelEvent {
	bad := func(format string, args ...any) channelEvent {
		return channelEvent{violation: fmt.Sprintf(format, args...)}
	}
	if m.InvocationID == nil {
		return bad("report without invocationId")
	}
	if *m.InvocationID != id {
		return bad("report for invocation %q, want %q", *m.InvocationID, id)
	}
	if m.Outcome != Succeeded && m.Outcome != CommandFailed {
		return bad("report outcome %q is not %q or %q", m.Outcome, Succeeded, CommandFailed)
	}
	if len(m.Reason) > MaxReasonBytes {
		return bad("report reason is %d bytes, over the limit of %d", len(m.Reason), MaxReasonBytes)
	}
	r := &checkedReport{outcome: m.Outcome, reason: m.Reason}
	if m.CommandResult == nil {
		if m.Outcome == Succeeded && rc.kind != "" {
			return bad("succeeded report without commandResult")
		}
		return channelEvent{report: r}
	}
	v, err := rc.check(m.CommandResult)
	if err != nil {
		return bad("commandResult: %v", err)
	}
	r.result = v
	return channelEvent{report: r}
}

// quickReport reads the usual report line in one pass instead of three: one
// object whose members are type ("report"), invocationId, outcome and
// reason, all strings, and commandResult, an object nested within the
// channel's depth; each at most once (the decoder refuses a repeated name).
// ok false: anything else, which parseChannelLine's full checks then word;
// what this accepts they accept alike, decoded the same.
func quickReport(line []byte) (m reportMessage, ok bool) {
	ok = eachMember(line, func(d *jsontext.Decoder, name string) bool {
		if name == "commandResult" {
			v, err := d.ReadValue()
			if err != nil || v.Kind() != '{' || depthOf(v) >= channelDepth {
				return false
			}
			m.CommandResult = bytes.Clone(v) // v is the decoder's buffer
			return true
		}
		v, err := d.ReadToken()
		if err != nil || v.Kind() != '"' {
			return false
		}
		switch str := v.String(); name {
		case "type":
			m.Type = str
		case "invocationId":
			m.InvocationID = &str
		case "outcome":
			m.Outcome = Outcome(str)
		case "reason":
			m.Reason = str
		default:
			return false
		}
		return true
	})
	return m, ok && m.Type == msgReport
}

// eachMember calls member for each member of the one JSON object that is
// data, with the decoder at its value, which member reads; false when data
// is not one object or member returns false.
func eachMember(data []byte, member func(d *jsontext.Decoder, name string) bool) bool {
	d := jsontext.NewDecoder(bytes.NewReader(data))
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return false
	}
	for {
		tok, err := d.ReadToken()
		if err != nil {
			return false
		}
		if tok.Kind() == '}' {
			break
		}
		if !member(d, tok.String()) {
			return false
		}
	}
	_, err := d.ReadToken()
	return err == io.EOF
}

// depthOf is how deeply v (valid JSON) nests objects and arrays; {} is 1.
func depthOf(v []byte) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// lineHint explains a line that is not one whole JSON object: the usual
// cause is a program that pretty-prints its messages or splits one across
// writes, and the JSON error alone ("unexpected end of JSON input") does
// not say so.
func lineHint(line []byte, err error) string {
	const rule = " (the channel carries one complete JSON object per line, ending in a newline"
	t, msg := bytes.TrimSpace(line), err.Error()
	switch {
	case len(t) == 0:
		return rule + "; this line is empty)"
	case strings.Contains(msg, "several top-level"):
		return rule + "; this line holds more than one value)"
	case strings.Contains(msg, "unexpected end of JSON input"):
		return rule + "; this line starts a value it does not finish: pretty-printed or truncated JSON?)"
	case t[0] != '{' && t[0] != '[':
		return rule + "; this line does not start with '{': part of a pretty-printed or split message?)"
	}
	return ""
}

// resultChecker checks a commandResult against the declared kind and
// schema. kind "" means the command declares no result (a v1 command):
// then a report must not carry one.
type resultChecker struct {
	kind     string
	schema   *ResultSchema
	maxBytes int
}

func newResultChecker(decl *ResultDecl, maxBytes int) (*resultChecker, error) {
	rc := &resultChecker{maxBytes: maxBytes}
	if decl == nil {
		return rc, nil
	}
	rc.kind = decl.Kind
	switch decl.Kind {
	case ResultText:
	case ResultStructured:
		s, err := CompileResultSchema(decl.Schema)
		if err != nil {
			return nil, err
		}
		rc.schema = s
	default:
		return nil, Errorf(CodeInvalid, "unknown result kind %q", decl.Kind)
	}
	return rc, nil
}

// check returns the compacted commandResult when it passes.
func (rc *resultChecker) check(raw jsontext.Value) (jsontext.Value, error) {
	if rc.kind == "" {
		return nil, errors.New("the command declares no result")
	}
	if len(raw) > rc.maxBytes {
		return nil, fmt.Errorf("%d bytes, over the limit of %d", len(raw), rc.maxBytes)
	}
	if k := raw.Kind(); k != '{' {
		return nil, fmt.Errorf("must be an object, not %s", kindName(k))
	}
	cr, ok := quickResult(raw)
	if !ok {
		if err := json.Unmarshal(raw, &cr, strictUnmarshal); err != nil {
			return nil, JSONError(err)
		}
	}
	if cr.Kind == nil {
		return nil, errors.New("missing \"kind\"")
	}
	if *cr.Kind != rc.kind {
		return nil, fmt.Errorf("kind %q, declared %q", *cr.Kind, rc.kind)
	}
	switch rc.kind {
	case ResultText:
		if cr.Data != nil {
			return nil, errors.New("unknown member \"data\" in a text result")
		}
		if cr.Text == nil {
			return nil, errors.New("missing \"text\"")
		}
		if cr.Text.Kind() != '"' {
			return nil, fmt.Errorf("text must be a string, not %s", kindName(cr.Text.Kind()))
		}
	case ResultStructured:
		if cr.Text != nil {
			return nil, errors.New("unknown member \"text\" in a structured result")
		}
		if cr.Data == nil {
			return nil, errors.New("missing \"data\"")
		}
		if err := rc.schema.Check(cr.Data, rc.maxBytes); err != nil {
			return nil, prefixData(err)
		}
	}
	v := append(jsontext.Value(nil), raw...)
	if err := v.Compact(); err != nil {
		return nil, JSONError(err)
	}
	return v, nil
}

// commandResult is the object a report carries as its result.
type commandResult struct {
	Kind *string        `json:"kind"`
	Text jsontext.Value `json:"text,omitzero"`
	Data jsontext.Value `json:"data,omitzero"`
}

// quickResult decodes the usual commandResult in one pass without
// reflection: an object of a string kind and a text or data value, each
// at most once. ok false: anything else, for the strict decoder to word.
func quickResult(raw []byte) (cr commandResult, ok bool) {
	ok = eachMember(raw, func(d *jsontext.Decoder, name string) bool {
		switch name {
		case "kind":
			k, err := d.ReadToken()
			if err != nil || k.Kind() != '"' {
				return false
			}
			s := k.String()
			cr.Kind = &s
		case "text", "data":
			v, err := d.ReadValue()
			if err != nil || v.Kind() == 'n' {
				return false
			}
			if name == "text" {
				cr.Text = bytes.Clone(v)
			} else {
				cr.Data = bytes.Clone(v)
			}
		default:
			return false
		}
		return true
	})
	if !ok {
		return commandResult{}, false
	}
	return cr, true
}

// prefixData locates a data error inside commandResult.
func prefixData(err error) error {
	var ke *Error
	if errors.As(err, &ke) {
		c := *ke
		c.Path = "/data" + c.Path
		return &c
	}
	return err
}
