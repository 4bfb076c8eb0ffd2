// Package rukhext is the SDK for writing Rukh extensions in Go. It speaks
// the rukh.invoke/1 channel (docs/extension-protocol.md): it reads the
// invoke message from the channel descriptor, runs the handler registered
// for the command, sends progress and exactly one report, and exits 0 after
// a succeeded report and 1 after a command_failed one.
//
//	func main() {
//		ext := rukhext.New()
//		ext.Handle("notes.add", func(ctx context.Context, call *rukhext.Call) (rukhext.Result, error) {
//			return rukhext.Structured(map[string]any{"id": 7}), nil // matches the declared result schema
//		})
//		ext.Main()
//	}
//
// rukhext imports only the standard library and go-json-experiment/json;
// it never imports other Rukh packages, so extensions stay independent of
// the core's internals.
package rukhext

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Protocol is the channel protocol this package speaks.
const Protocol = "rukh.invoke/1"

// MaxReasonBytes is the longest reason or progress message the core
// accepts; longer ones are cut at a character boundary.
const MaxReasonBytes = 4096

// maxLine bounds the invoke message and any core message (the core's input
// limit is 256 KiB; the envelope adds little).
const maxLine = 1 << 20

// Exit statuses of Main.
const (
	ExitSucceeded     = 0 // a succeeded report was sent
	ExitCommandFailed = 1 // a command_failed report was sent
	ExitProtocolError = 2 // no report: not started by rukh, a broken channel or an unknown command
)

// HandlerFunc runs one command. Returning a non-nil error reports
// command_failed with the error's text; otherwise the Result is reported.
// ctx is cancelled when the core sends cancel, when SIGTERM arrives or when
// the channel closes; context.Cause(ctx) says which. A panic is not
// recovered: the program crashes and the core reports execution_failed.
type HandlerFunc func(ctx context.Context, call *Call) (Result, error)

// Extension maps command identities to handlers.
type Extension struct {
	handlers map[string]HandlerFunc
}

// New returns an Extension with no handlers.
func New() *Extension {
	return &Extension{handlers: map[string]HandlerFunc{}}
}

// Handle registers h for the command identity (the manifest's command id,
// such as "notes.add"). Registering an identity twice panics.
func (e *Extension) Handle(command string, h HandlerFunc) {
	if _, dup := e.handlers[command]; dup {
		panic("rukhext: duplicate handler for " + strconv.Quote(command))
	}
	e.handlers[command] = h
}

// Main serves one invocation on the channel named by RUKH_CHANNEL_FD and
// exits the process: 0 after a succeeded report, 1 after command_failed, 2
// when no report could be sent (the reason goes to stderr).
func (e *Extension) Main() {
	os.Exit(e.main())
}

func (e *Extension) main() int {
	if p := os.Getenv("RUKH_PROTOCOL"); p != Protocol {
		fmt.Fprintf(os.Stderr, "this program is a Rukh extension speaking %s; run it through rukh (RUKH_PROTOCOL is %q)\n", Protocol, p)
		return ExitProtocolError
	}
	fd, err := strconv.Atoi(os.Getenv("RUKH_CHANNEL_FD"))
	if err != nil || fd < 3 {
		fmt.Fprintf(os.Stderr, "rukhext: invalid RUKH_CHANNEL_FD %q\n", os.Getenv("RUKH_CHANNEL_FD"))
		return ExitProtocolError
	}
	ch := os.NewFile(uintptr(fd), "rukh-channel")
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	code, err := e.Serve(ctx, ch)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rukhext:", err)
	}
	return code
}

// Serve runs one invocation over ch: it reads the invoke message, runs the
// handler, and writes the report. It returns the exit status Main would
// use, and an error when no report was sent. Cancelling ctx cancels the
// handler's context.
func (e *Extension) Serve(ctx context.Context, ch io.ReadWriter) (int, error) {
	r := bufio.NewReaderSize(ch, 64<<10)
	line, err := readLine(r)
	if err != nil {
		return ExitProtocolError, fmt.Errorf("reading the invoke message: %w", err)
	}
	var m struct {
		Type         string                    `json:"type"`
		InvocationID string                    `json:"invocationId"`
		Command      string                    `json:"command"`
		Input        map[string]jsontext.Value `json:"input"`
		Explicit     []string                  `json:"explicit"`
		Interactive  bool                      `json:"interactive"`
		DeadlineMs   int64                     `json:"deadlineMs"`
		Caller       Caller                    `json:"caller"`
		Settings     jsontext.Value            `json:"settings"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return ExitProtocolError, fmt.Errorf("decoding the invoke message: %w", err)
	}
	if m.Type != "invoke" {
		return ExitProtocolError, fmt.Errorf("first message is %q, want \"invoke\"", m.Type)
	}
	settings, err := decodeSettings(m.Settings)
	if err != nil {
		return ExitProtocolError, fmt.Errorf("decoding the invoke message: %w", err)
	}
	h, ok := e.handlers[m.Command]
	if !ok {
		return ExitProtocolError, fmt.Errorf("no handler for command %q", m.Command)
	}
	w := &writer{w: ch}
	call := &Call{
		InvocationID: m.InvocationID,
		Command:      m.Command,
		Interactive:  m.Interactive,
		caller:       m.Caller,
		deadline:     time.Now().Add(time.Duration(m.DeadlineMs) * time.Millisecond),
		input:        m.Input,
		explicit:     m.Explicit,
		settings:     settings,
		w:            w,
	}
	hctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go watch(r, cancel)

	res, err := h(hctx, call)
	if err != nil {
		res = Failed(err.Error(), nil)
	}
	rep := report{Type: "report", InvocationID: m.InvocationID, Outcome: "succeeded"}
	code := ExitSucceeded
	if res.failed {
		rep.Outcome, rep.Reason, code = "command_failed", clip(res.reason), ExitCommandFailed
	}
	if res.kind != "" {
		cr, err := res.encode()
		if err != nil {
			rep = report{Type: "report", InvocationID: m.InvocationID, Outcome: "command_failed", Reason: clip("cannot encode the result: " + err.Error())}
			code = ExitCommandFailed
		} else {
			rep.CommandResult = cr
		}
	}
	if err := w.send(rep); err != nil {
		return ExitProtocolError, fmt.Errorf("sending the report: %w", err)
	}
	return code, nil
}

// ErrChannelClosed is the cause of a handler's context when the core
// closed the channel.
var ErrChannelClosed = errors.New("rukh closed the channel")

// CancelError is the cause of a handler's context when the core sent
// cancel; Reason is the core's stable reason ("deadline exceeded",
// "cancelled", …).
type CancelError struct{ Reason string }

func (e *CancelError) Error() string { return "cancelled by rukh: " + e.Reason }

// watch reads core messages after invoke and cancels on cancel or EOF.
func watch(r *bufio.Reader, cancel context.CancelCauseFunc) {
	for {
		line, err := readLine(r)
		if err != nil {
			cancel(ErrChannelClosed)
			return
		}
		var m struct {
			Type   string `json:"type"`
			Reason string `json:"reason"`
		}
		if json.Unmarshal(line, &m) == nil && m.Type == "cancel" {
			cancel(&CancelError{Reason: m.Reason})
		}
	}
}

func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		if len(line)+len(frag) > maxLine {
			return nil, errors.New("message too long")
		}
		line = append(line, frag...)
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF) && len(line) > 0:
			return line, nil
		default:
			return nil, err
		}
	}
}

// writer serialises messages from the handler's goroutines.
type writer struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *writer) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err = w.w.Write(append(b, '\n'))
	return err
}

type report struct {
	Type          string         `json:"type"`
	InvocationID  string         `json:"invocationId"`
	Outcome       string         `json:"outcome"`
	Reason        string         `json:"reason,omitempty"`
	CommandResult jsontext.Value `json:"commandResult,omitzero"`
}

// clip cuts s to MaxReasonBytes at a character boundary.
func clip(s string) string {
	if len(s) <= MaxReasonBytes {
		return s
	}
	s = s[:MaxReasonBytes]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// Result is what a handler returns: a text or structured result, possibly
// marked as a command failure.
type Result struct {
	kind   string
	text   string
	data   any
	failed bool
	reason string
}

// Text is a succeeded text result.
func Text(s string) Result { return Result{kind: "text", text: s} }

// Structured is a succeeded structured result; v is encoded as JSON when
// the report is sent and must match the command's declared result schema.
func Structured(v any) Result { return Result{kind: "structured", data: v} }

// Failed is a command_failed outcome with a reason and optionally a result
// (nil for none).
func Failed(reason string, result *Result) Result {
	r := Result{failed: true, reason: reason}
	if result != nil {
		r.kind, r.text, r.data = result.kind, result.text, result.data
	}
	return r
}

func (r Result) encode() (jsontext.Value, error) {
	switch r.kind {
	case "text":
		return json.Marshal(struct {
			Kind string `json:"kind"`
			Text string `json:"text"`
		}{"text", r.text})
	default:
		data, err := json.Marshal(r.data, json.Deterministic(true))
		if err != nil {
			return nil, err
		}
		return json.Marshal(struct {
			Kind string         `json:"kind"`
			Data jsontext.Value `json:"data"`
		}{"structured", data})
	}
}

// Call is one invocation as the handler sees it. Accessors return the
// zero value when a parameter is absent or of another type; Has tells
// absent from zero.
type Call struct {
	InvocationID string
	Command      string
	// Interactive is false whenever no person can answer prompts (always
	// under MCP).
	Interactive bool

	caller   Caller
	deadline time.Time
	input    map[string]jsontext.Value
	explicit []string
	settings Settings
	w        *writer
}

// Caller says who asked for the invocation, as the core knows it (from
// the endpoint the core serves, never from anything a client claims).
// Fields the core did not send are empty; newer cores may fill more.
type Caller struct {
	// Transport is "cli" (a person at the terminal), "stdio" (an agent
	// through rukh serve-mcp) or "http" (an agent through rukh serve-http).
	Transport string `json:"transport"`
	// Endpoint is the profile endpoint that served the call; empty on the
	// CLI.
	Endpoint string `json:"endpoint"`
	// Subject is the endpoint's subject ("owner" on the CLI); for an
	// identity provider's token (Credential "oauth"), the token's subject.
	Subject string `json:"subject"`
	// Agent is the agent an HTTP endpoint authenticated ("anonymous" on
	// an endpoint without authentication); empty on the CLI and stdio.
	Agent string `json:"agent"`
	// Credential is the kind of credential the agent presented:
	// "static", "short-lived" or "one-time" (Rukh's own tokens), or
	// "oauth" (an access token of the endpoint's identity provider);
	// empty otherwise. The token itself never reaches an extension.
	Credential string `json:"credential"`
	// Issuer is the identity provider that issued an "oauth" credential.
	Issuer string `json:"issuer"`
}

// Caller returns who asked for this invocation.
func (c *Call) Caller() Caller { return c.caller }

// Deadline is when the core stops the invocation: it sends cancel then, and
// kills the process a little later.
func (c *Call) Deadline() time.Time { return c.deadline }

// Has reports whether the input carries the parameter (given or defaulted).
func (c *Call) Has(name string) bool {
	_, ok := c.input[name]
	return ok
}

// Explicit reports whether the caller gave the parameter (rather than a
// default applying).
func (c *Call) Explicit(name string) bool {
	for _, id := range c.explicit {
		if id == name {
			return true
		}
	}
	return false
}

// Raw returns the parameter's exact JSON text, or nil.
func (c *Call) Raw(name string) jsontext.Value { return c.input[name] }

// Decode unmarshals the parameter into v.
func (c *Call) Decode(name string, v any) error {
	return decode(c.input, "parameter", name, v)
}

// String returns a string parameter.
func (c *Call) String(name string) string { return str(c.input[name]) }

// Int returns an integer parameter exactly (never through float64).
func (c *Call) Int(name string) int64 { return integer(c.input[name]) }

// Float returns a number parameter.
func (c *Call) Float(name string) float64 { return float(c.input[name]) }

// Bool returns a boolean parameter.
func (c *Call) Bool(name string) bool { return c.input[name].Kind() == 't' }

// Decimal returns a decimal parameter as its canonical text ("1.5");
// parse it with math/big or a decimal library to stay exact.
func (c *Call) Decimal(name string) string { return decimal(c.input[name]) }

// List returns a list parameter's items: string (also for decimals), bool,
// int64 for integral numbers and float64 for other numbers.
func (c *Call) List(name string) []any { return list(c.input[name]) }

// Strings returns a list of strings (or decimals); other items are skipped.
func (c *Call) Strings(name string) []string { return strs(c.input[name]) }

// Settings returns the owner's values of the settings the command's
// package declares (docs/settings.md): typed like input, defaults applied,
// an endpoint's own value over the package's. Empty when the package
// declares none. The core has already refused the call when a required
// setting has no value, so a required id is always present here.
func (c *Call) Settings() Settings { return c.settings }

// Settings maps setting ids to their values' exact JSON text, as the core
// sent them. Its getters read a value as Call's read a parameter: they
// return the zero value when the id is absent or of another type; Has
// tells absent from zero. Sensitive values arrive in the clear here, as
// the extension needs them: never log or echo them.
type Settings map[string]jsontext.Value

// Has reports whether the setting has a value (stored or defaulted).
func (s Settings) Has(id string) bool {
	_, ok := s[id]
	return ok
}

// Raw returns the setting's exact JSON text, or nil.
func (s Settings) Raw(id string) jsontext.Value { return s[id] }

// Decode unmarshals the setting into v.
func (s Settings) Decode(id string, v any) error { return decode(s, "setting", id, v) }

// String returns a string setting.
func (s Settings) String(id string) string { return str(s[id]) }

// Int returns an integer setting exactly (never through float64).
func (s Settings) Int(id string) int64 { return integer(s[id]) }

// Float returns a number setting.
func (s Settings) Float(id string) float64 { return float(s[id]) }

// Bool returns a boolean setting.
func (s Settings) Bool(id string) bool { return s[id].Kind() == 't' }

// Decimal returns a decimal setting as its canonical text ("1.5").
func (s Settings) Decimal(id string) string { return decimal(s[id]) }

// List returns a list setting's items, typed as Call.List types them.
func (s Settings) List(id string) []any { return list(s[id]) }

// Strings returns a list setting's strings (or decimals); other items are
// skipped.
func (s Settings) Strings(id string) []string { return strs(s[id]) }

// decodeSettings checks the invoke message's settings member: absent, or an
// object whose values are what a declared setting can hold (a string, a
// boolean, a number, or a list of those). Anything else is a core this SDK
// does not understand, refused rather than guessed at.
func decodeSettings(raw jsontext.Value) (Settings, error) {
	if raw == nil {
		return nil, nil
	}
	if k := raw.Kind(); k != '{' {
		return nil, fmt.Errorf("settings is %s, want an object of setting values", kindName(k))
	}
	var m map[string]jsontext.Value
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	for id, v := range m {
		switch v.Kind() {
		case '"', 't', 'f', '0':
		case '[':
			var items []jsontext.Value
			if err := json.Unmarshal(v, &items); err != nil {
				return nil, fmt.Errorf("setting %q: %w", id, err)
			}
			for i, it := range items {
				switch it.Kind() {
				case '"', 't', 'f', '0':
				default:
					return nil, fmt.Errorf("setting %q: item %d is %s, want a string, boolean or number", id, i, kindName(it.Kind()))
				}
			}
		default:
			return nil, fmt.Errorf("setting %q is %s, want a string, boolean, number or list", id, kindName(v.Kind()))
		}
	}
	return Settings(m), nil
}

func kindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case '0':
		return "a number"
	}
	return "not a JSON value"
}

func decode(m map[string]jsontext.Value, what, name string, v any) error {
	raw, ok := m[name]
	if !ok {
		return fmt.Errorf("no %s %q", what, name)
	}
	return json.Unmarshal(raw, v)
}

func str(raw jsontext.Value) string {
	var s string
	if raw.Kind() == '"' {
		json.Unmarshal(raw, &s)
	}
	return s
}

func integer(raw jsontext.Value) int64 {
	n, _ := strconv.ParseInt(string(raw), 10, 64)
	return n
}

func float(raw jsontext.Value) float64 {
	if raw.Kind() != '0' {
		return 0
	}
	f, _ := strconv.ParseFloat(string(raw), 64)
	return f
}

func decimal(raw jsontext.Value) string {
	switch raw.Kind() {
	case '"':
		return str(raw)
	case '0':
		return string(raw)
	}
	return ""
}

func list(raw jsontext.Value) []any {
	var items []jsontext.Value
	if raw.Kind() != '[' || json.Unmarshal(raw, &items) != nil {
		return nil
	}
	out := make([]any, 0, len(items))
	for _, it := range items {
		switch it.Kind() {
		case '"':
			out = append(out, str(it))
		case 't', 'f':
			out = append(out, it.Kind() == 't')
		case '0':
			if n, err := strconv.ParseInt(string(it), 10, 64); err == nil {
				out = append(out, n)
			} else {
				f, _ := strconv.ParseFloat(string(it), 64)
				out = append(out, f)
			}
		default:
			out = append(out, nil)
		}
	}
	return out
}

func strs(raw jsontext.Value) []string {
	var out []string
	for _, v := range list(raw) {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Progress sends a progress message. progress and total are in the same
// unit; a total of 0 or less is left out (unknown). Progress never extends
// the deadline.
func (c *Call) Progress(message string, progress, total float64) error {
	m := struct {
		Type     string   `json:"type"`
		Message  string   `json:"message,omitempty"`
		Progress float64  `json:"progress"`
		Total    *float64 `json:"total,omitempty"`
	}{Type: "progress", Message: clip(message), Progress: progress}
	if total > 0 {
		m.Total = &total
	}
	return c.w.send(m)
}
