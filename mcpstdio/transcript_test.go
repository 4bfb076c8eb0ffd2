package mcpstdio

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rogpeppe/go-internal/txtar"
	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/mcpcore/mcpcoretest"
	"github.com/rukh-dev/rukh/policy"
)

var update = flag.Bool("update", false, "rewrite the -- server -- section of golden transcripts")

// transcripts are the core's golden transcripts; each runs over stdio
// (TestTranscripts) and over HTTP (TestTranscriptsHTTP).
const transcripts = "../mcpcore/testdata/transcripts/*.txtar"

// TestTranscripts replays the core's transcripts over stdio. Each archive
// has:
//
//	comment        what the transcript guards
//	-- config --   optional "key value" lines: endpoint NAME, active N,
//	               fillers N (tools on endpoint "many"), tasks MAX [jobs]
//	               [required] (a task policy on "local": setTaskProfile);
//	               stdio-only REASON: not run over HTTP, for that reason;
//	               http-differs REASON: over HTTP the server's messages
//	               are -- server-http --, for that reason
//	-- client --   one JSON-RPC message per line, or a directive:
//	                 # text            a comment
//	                 #raw "go-quoted"  these exact bytes (no newline added)
//	                 #sized N LINE     LINE with @FILL@ padded so the line is N bytes
//	                 #sleep DURATION   let (fake) time pass
//	                 #active N         switch the active revision (a publish:
//	                                   the store watch reports it; revision 4
//	                                   has revision 3's "local" tools; 5
//	                                   changes the namespace of "local", 6
//	                                   its subject, 7 makes it http-only, 8
//	                                   removes it, 9 is like 3)
//	                 #owner-cancel     end Serve's ctx, as a signal does
//	                 #hold / #release  stop / resume the client reading stdout
//	                 #watching N       fail unless N store watches run
//	               In lines, @REP(n,text)@ repeats text n times and $CURSOR is
//	               the last nextCursor the server sent.
//	-- server --   the server's messages, indented; "#serve: …" when Serve
//	               returned an error.
//
// The server runs in-process inside a synctest bubble, so every client line
// is fully processed (and timers are fake) before the next one is sent.
// -update rewrites -- server -- from the stdio run, and -- server-http --
// (http-differs only) from the HTTP run.
func TestTranscripts(t *testing.T) { runTranscripts(t, transportStdio) }

const (
	transportStdio = "stdio"
	transportHTTP  = "http"
)

func runTranscripts(t *testing.T, transport string) {
	files, err := filepath.Glob(transcripts)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no transcripts")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			runTranscript(t, file, transport)
		})
	}
}

func section(a *txtar.Archive, name string) (*txtar.File, bool) {
	for i := range a.Files {
		if a.Files[i].Name == name {
			return &a.Files[i], true
		}
	}
	return nil, false
}

func runTranscript(t *testing.T, file, transport string) {
	a, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(bytes.TrimSpace(a.Comment)) == 0 {
		t.Fatalf("%s: the comment must say what the transcript guards", file)
	}
	client, ok := section(a, "client")
	if !ok {
		t.Fatalf("%s: no -- client -- section", file)
	}
	endpoint, active, fillers, tasks := "local", uint64(1), 70, ""
	golden := "server"
	if cfg, ok := section(a, "config"); ok {
		for _, line := range strings.Split(string(cfg.Data), "\n") {
			k, v, _ := strings.Cut(strings.TrimSpace(line), " ")
			switch k {
			case "":
			case "endpoint":
				endpoint = v
			case "active":
				active, _ = strconv.ParseUint(v, 10, 64)
			case "fillers":
				fillers, _ = strconv.Atoi(v)
			case "tasks":
				tasks = v
			case "stdio-only", "http-differs":
				if v == "" {
					t.Fatalf("%s: %s needs its reason", file, k)
				}
				if transport != transportHTTP {
					break
				}
				if k == "stdio-only" {
					t.Skipf("stdio only: %s", v)
				}
				golden = "server-http"
			default:
				t.Fatalf("unknown config key %q", k)
			}
		}
	}
	var got []byte
	synctest.Test(t, func(t *testing.T) {
		h := startHarness(t, endpoint, active, fillers, tasks, transport)
		for _, line := range strings.Split(string(client.Data), "\n") {
			if h.serveDone() {
				break
			}
			h.do(t, line)
			synctest.Wait()
		}
		got = h.finish(t)
	})

	srv, ok := section(a, golden)
	if *update && (transport == transportStdio || golden != "server") {
		if ok {
			srv.Data = got
		} else {
			a.Files = append(a.Files, txtar.File{Name: golden, Data: got})
		}
		if err := os.WriteFile(file, txtar.Format(a), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !ok {
		t.Fatalf("%s: no -- %s -- section (run with -update)", file, golden)
	}
	if want := srv.Data; !bytes.Equal(got, want) {
		t.Errorf("server output differs (-want +got):\n%s", lineDiff(string(want), string(got)))
	}
}

// harness is one in-process server with a scripted client.
type harness struct {
	cw       *io.PipeWriter
	cr       *io.PipeReader
	out      *gatedWriter
	active   *atomic.Uint64
	done     chan error
	invoker  *fakeInvoker
	cancel   func()
	owner    context.CancelCauseFunc // the owner's cancel (a signal)
	serveErr error
	finished bool
	loads    *atomic.Int64
	tasks    *fakeTasks // nil: no task policy

	wmu     sync.Mutex
	changed chan struct{} // closed and replaced by #active
	watches *atomic.Int64 // store watches running
}

func startHarness(t *testing.T, endpoint string, active uint64, fillers int, tasks, transport string) *harness {
	h := &harness{out: newGatedWriter(), active: new(atomic.Uint64), done: make(chan error, 1),
		invoker: &fakeInvoker{}, loads: new(atomic.Int64), changed: make(chan struct{}), watches: new(atomic.Int64)}
	h.active.Store(active)
	h.cr, h.cw = io.Pipe()
	revs := map[uint64]*policy.Binding{}
	for rev := uint64(1); rev <= 3; rev++ {
		revs[rev] = mcpcoretest.Binding(rev, fillers, mcpcoretest.Template)
	}
	// A publish that changes another endpoint only (or, in stable naming
	// mode, renames nothing): "local" lists exactly what it did in r3.
	revs[4] = mcpcoretest.Binding(3, fillers, mcpcoretest.Template)
	revs[4].Revision = "r4"
	revs[4].Endpoints[2].Tools = nil
	for rev, edit := range map[uint64]func(b *policy.Binding){
		5: func(b *policy.Binding) { b.Endpoints[0].Namespace = "test-ns2"; mcpcoretest.SetProfile(b, nil) },
		6: func(b *policy.Binding) { b.Endpoints[0].Subject = "ci-bot"; mcpcoretest.SetProfile(b, nil) },
		7: func(b *policy.Binding) { mcpcoretest.SetProfile(b, map[string][]string{"local": {"http"}}) },
		8: func(b *policy.Binding) { b.Endpoints = b.Endpoints[1:]; mcpcoretest.SetProfile(b, nil) },
		9: func(b *policy.Binding) {},
	} {
		revs[rev] = mcpcoretest.Binding(rev, fillers, mcpcoretest.Template)
		edit(revs[rev])
	}
	if transport == transportHTTP {
		servedOverHTTP(revs)
	}
	if tasks != "" {
		words := strings.Fields(tasks)
		max, _ := strconv.Atoi(words[0])
		for _, b := range revs {
			setTaskProfile(b, max, slices.Contains(words, "jobs"), slices.Contains(words, "required"))
		}
		h.tasks = newFakeTasks(h.invoker)
	}
	cfg := Config{Config: mcpcore.Config{
		Endpoint: endpoint, ServerName: "rukh", ServerVersion: "test",
		Active: func() (uint64, error) { return h.active.Load(), nil },
		Load: mcpcoretest.BindingsFor(endpoint, func(n uint64) (*policy.Binding, error) {
			h.loads.Add(1)
			if b, ok := revs[n]; ok {
				return b, nil
			}
			return nil, fmt.Errorf("no revision %d", n)
		}),
		Watch: func(ctx context.Context, fn func(uint64)) {
			h.watches.Add(1)
			defer h.watches.Add(-1)
			for {
				h.wmu.Lock()
				changed := h.changed
				h.wmu.Unlock()
				fn(h.active.Load())
				select {
				case <-ctx.Done():
					return
				case <-changed:
				}
			}
		},
		Secret:  []byte("test secret"),
		Invoker: h.invoker,
		Logf:    t.Logf,
		NewID:   counterIDs(),
	}}
	if h.tasks != nil {
		cfg.Tasks = h.tasks
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	h.cancel, h.owner = func() { cancel(nil) }, cancel
	if transport == transportHTTP {
		go func() { h.done <- serveHTTP(ctx, h.cr, h.out, cfg.Config) }()
		return h
	}
	go func() { h.done <- Serve(ctx, h.cr, h.out, cfg) }()
	return h
}

func counterIDs() func() string {
	var n atomic.Int64
	return func() string { return fmt.Sprintf("inv_%04d", n.Add(1)) }
}

func (h *harness) serveDone() bool {
	if h.finished {
		return true
	}
	select {
	case err := <-h.done:
		h.serveErr, h.finished = err, true
		h.cr.Close() // unblock a client write nobody will read
		return true
	default:
		return false
	}
}

var (
	repRE   = regexp.MustCompile(`@REP\((\d+),(.*?)\)@`)
	cursorR = regexp.MustCompile(`"nextCursor":"([^"]*)"`)
)

func (h *harness) do(t *testing.T, line string) {
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
		ms := cursorR.FindAllSubmatch(h.out.bytes(), -1)
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
		h.active.Store(n)
		h.wmu.Lock()
		close(h.changed)
		h.changed = make(chan struct{})
		h.wmu.Unlock()
		return
	case "#owner-cancel":
		h.owner(errors.New("terminated signal received"))
		return
	case "#watching":
		if got := strconv.FormatInt(h.watches.Load(), 10); got != arg {
			t.Errorf("%s: %d store watches running, want %s", line, h.watches.Load(), arg)
		}
		return
	case "#hold":
		h.out.hold()
		return
	case "#release":
		h.out.release()
		return
	default:
		if strings.HasPrefix(line, "#") {
			t.Fatalf("unknown directive %q", line)
		}
		data = []byte(line + "\n")
	}
	if _, err := h.cw.Write(data); err != nil && !h.serveDone() {
		t.Fatalf("writing to the server: %v", err)
	}
}

// finish closes stdin, waits for Serve and returns the formatted output.
func (h *harness) finish(t *testing.T) []byte {
	h.cw.Close()
	h.out.release()
	if !h.finished {
		h.serveErr = <-h.done
		h.finished = true
	}
	h.cancel()
	if h.tasks != nil {
		h.tasks.close()
	}
	h.cr.Close()
	h.out.closeAll()
	synctest.Wait()
	return formatOutput(t, h.out.bytes(), h.serveErr)
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

// gatedWriter is the client's end of stdout: it records what it reads and
// can stop reading (#hold), so the server's writes block.
type gatedWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	gate chan struct{} // nil: reading; otherwise closed on release
}

func newGatedWriter() *gatedWriter { return &gatedWriter{} }

func (g *gatedWriter) Write(p []byte) (int, error) {
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

func (g *gatedWriter) hold() {
	g.mu.Lock()
	if g.gate == nil {
		g.gate = make(chan struct{})
	}
	g.mu.Unlock()
}

func (g *gatedWriter) release() {
	g.mu.Lock()
	if g.gate != nil {
		close(g.gate)
		g.gate = nil
	}
	g.mu.Unlock()
}

func (g *gatedWriter) closeAll() { g.release() }

func (g *gatedWriter) bytes() []byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]byte(nil), g.buf.Bytes()...)
}

// lineDiff is a small line-oriented diff, enough to read a golden failure.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	i, j := 0, 0
	for i < len(w) || j < len(g) {
		switch {
		case i < len(w) && j < len(g) && w[i] == g[j]:
			i++
			j++
		default:
			// Find the next resynchronisation point.
			found := false
			for k := 1; k < 40 && !found; k++ {
				if i+k < len(w) && j < len(g) && w[i+k] == g[j] {
					for ; k > 0; k-- {
						fmt.Fprintf(&b, "-%s\n", w[i])
						i++
					}
					found = true
				} else if j+k < len(g) && i < len(w) && g[j+k] == w[i] {
					for ; k > 0; k-- {
						fmt.Fprintf(&b, "+%s\n", g[j])
						j++
					}
					found = true
				}
			}
			if !found {
				if i < len(w) {
					fmt.Fprintf(&b, "-%s\n", w[i])
					i++
				}
				if j < len(g) {
					fmt.Fprintf(&b, "+%s\n", g[j])
					j++
				}
			}
		}
	}
	return b.String()
}
