package transcript

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// Harness is one in-process server with a scripted client. The fields are
// the test's to read and, before Start, to set.
type Harness struct {
	In       *io.PipeWriter // the client's end of what the server reads
	InR      *io.PipeReader // the server's end
	Out      *GatedWriter   // what the server wrote, as the client read it
	Active   *atomic.Uint64 // the active revision
	Done     chan error     // Serve's error, once it returned
	Invoker  *Invoker
	Cancel   func()                  // ends Serve's ctx (without a cause)
	Owner    context.CancelCauseFunc // the owner's cancel (a signal)
	ServeErr error                   // Serve's error, once Finished
	Finished bool                    // Serve returned and ServeErr is set
	Loads    *atomic.Int64           // revisions the server loaded
	Tasks    *Tasks                  // nil: no task policy

	wmu     sync.Mutex
	changed chan struct{} // closed and replaced by #active
	watches *atomic.Int64 // store watches running
}

// NewHarness is a harness at revision 1 whose server is not started yet.
func NewHarness() *Harness {
	h := &Harness{Out: &GatedWriter{}, Active: new(atomic.Uint64), Done: make(chan error, 1),
		Invoker: &Invoker{}, Loads: new(atomic.Int64), changed: make(chan struct{}), watches: new(atomic.Int64)}
	h.Active.Store(1)
	h.InR, h.In = io.Pipe()
	return h
}

// Start runs serve on the harness's streams until its ctx ends (Cancel,
// Owner) or it returns.
func (h *Harness) Start(serve func(ctx context.Context, in io.Reader, out io.Writer) error) {
	ctx, cancel := context.WithCancelCause(context.Background())
	h.Cancel, h.Owner = func() { cancel(nil) }, cancel
	go func() { h.Done <- serve(ctx, h.InR, h.Out) }()
}

// Watch is a store watch that reports the active revision now and after
// every #active.
func (h *Harness) Watch(ctx context.Context, fn func(uint64)) {
	h.watches.Add(1)
	defer h.watches.Add(-1)
	for {
		h.wmu.Lock()
		changed := h.changed
		h.wmu.Unlock()
		fn(h.Active.Load())
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}

// CounterIDs is an invocation id source: inv_0001, inv_0002, …
func CounterIDs() func() string {
	var n atomic.Int64
	return func() string { return fmt.Sprintf("inv_%04d", n.Add(1)) }
}

// ServeDone reports whether Serve returned, and records its error.
func (h *Harness) ServeDone() bool {
	if h.Finished {
		return true
	}
	select {
	case err := <-h.Done:
		h.ServeErr, h.Finished = err, true
		h.InR.Close() // unblock a client write nobody will read
		return true
	default:
		return false
	}
}

// Send does each line, letting the bubble settle after each.
func (h *Harness) Send(t *testing.T, lines ...string) {
	t.Helper()
	for _, l := range lines {
		h.Do(t, l)
		synctest.Wait()
	}
}

var (
	repRE   = regexp.MustCompile(`@REP\((\d+),(.*?)\)@`)
	cursorR = regexp.MustCompile(`"nextCursor":"([^"]*)"`)
)

// Do sends one client line or runs one directive (see [Run]).
func (h *Harness) Do(t *testing.T, line string) {
	t.Helper()
	line = strings.TrimRight(line, "\r")
	if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "# ") || line == "#" {
		return
	}
	line = repRE.ReplaceAllStringFunc(line, func(m string) string {
		sm := repRE.FindStringSubmatch(m)
		n, _ := strconv.Atoi(sm[1])
		return strings.Repeat(sm[2], n)
	})
	if strings.Contains(line, "$CURSOR") {
		ms := cursorR.FindAllSubmatch(h.Out.Bytes(), -1)
		if len(ms) == 0 {
			t.Fatalf("$CURSOR used before the server sent a nextCursor")
		}
		line = strings.ReplaceAll(line, "$CURSOR", string(ms[len(ms)-1][1]))
	}
	var data []byte
	switch directive, arg, _ := strings.Cut(line, " "); directive {
	case "#raw":
		s, err := strconv.Unquote(arg)
		if err != nil {
			t.Fatalf("#raw %s: %v", arg, err)
		}
		data = []byte(s)
	case "#sized":
		nText, tmpl, _ := strings.Cut(arg, " ")
		n, err := strconv.Atoi(nText)
		if err != nil || !strings.Contains(tmpl, "@FILL@") {
			t.Fatalf("bad #sized %q", arg)
		}
		fill := n - (len(tmpl) - len("@FILL@"))
		data = []byte(strings.Replace(tmpl, "@FILL@", strings.Repeat("a", fill), 1) + "\n")
	case "#sleep":
		d, err := time.ParseDuration(arg)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(d)
		return
	case "#active":
		n, err := strconv.ParseUint(arg, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		h.Active.Store(n)
		h.wmu.Lock()
		close(h.changed)
		h.changed = make(chan struct{})
		h.wmu.Unlock()
		return
	case "#owner-cancel":
		h.Owner(errors.New("terminated signal received"))
		return
	case "#watching":
		if got := strconv.FormatInt(h.watches.Load(), 10); got != arg {
			t.Errorf("%s: %d store watches running, want %s", line, h.watches.Load(), arg)
		}
		return
	case "#ended":
		if got := strconv.Itoa(len(h.Invoker.Invocations())); got != arg {
			t.Errorf("%s: %s invocations returned, want %s", line, got, arg)
		}
		return
	case "#hold":
		h.Out.Hold()
		return
	case "#release":
		h.Out.Release()
		return
	default:
		if strings.HasPrefix(line, "#") {
			t.Fatalf("unknown directive %q", line)
		}
		data = []byte(line + "\n")
	}
	if _, err := h.In.Write(data); err != nil && !h.ServeDone() {
		t.Fatalf("writing to the server: %v", err)
	}
}

// End closes the client's stream, waits for Serve, stops what is left
// (Serve's ctx, the tasks) and lets the bubble settle; it returns Serve's
// error.
func (h *Harness) End() error {
	h.In.Close()
	h.Out.Release()
	if !h.Finished {
		h.ServeErr = <-h.Done
		h.Finished = true
	}
	h.Cancel()
	if h.Tasks != nil {
		h.Tasks.Close()
	}
	h.InR.Close()
	h.Out.Release()
	synctest.Wait()
	return h.ServeErr
}

// Finish is End, then the output as a transcript's -- server -- section.
func (h *Harness) Finish(t *testing.T) []byte {
	err := h.End()
	return formatOutput(t, h.Out.Bytes(), err)
}

func formatOutput(t *testing.T, raw []byte, serveErr error) []byte {
	var b bytes.Buffer
	for _, line := range bytes.SplitAfter(raw, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if line[len(line)-1] != '\n' {
			fmt.Fprintf(&b, "#unterminated: %q\n", line)
			continue
		}
		v := jsontext.Value(bytes.TrimSuffix(line, []byte("\n")))
		if bytes.ContainsAny(v, "\r\n") {
			t.Errorf("a message contains a raw line break: %q", v)
		}
		if err := v.Format(jsontext.Multiline(true), jsontext.WithIndent("  ")); err != nil {
			fmt.Fprintf(&b, "#invalid JSON (%v): %q\n", err, line)
			continue
		}
		b.Write(v)
		b.WriteByte('\n')
	}
	if serveErr != nil {
		fmt.Fprintf(&b, "#serve: %v\n", serveErr)
	}
	return b.Bytes()
}

// GatedWriter is the client's end of the server's output: it records what
// it reads and can stop reading (#hold), so the server's writes block.
type GatedWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	gate chan struct{} // nil: reading; otherwise closed on release
}

// Write records p, once reading.
func (g *GatedWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	gate := g.gate
	g.mu.Unlock()
	if gate != nil {
		<-gate
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.Write(p)
}

// Hold stops reading: the server's writes block until Release.
func (g *GatedWriter) Hold() {
	g.mu.Lock()
	if g.gate == nil {
		g.gate = make(chan struct{})
	}
	g.mu.Unlock()
}

// Release resumes reading.
func (g *GatedWriter) Release() {
	g.mu.Lock()
	if g.gate != nil {
		close(g.gate)
		g.gate = nil
	}
	g.mu.Unlock()
}

// Bytes is what was read so far.
func (g *GatedWriter) Bytes() []byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]byte(nil), g.buf.Bytes()...)
}
