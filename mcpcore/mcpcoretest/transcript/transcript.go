package transcript

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/rogpeppe/go-internal/txtar"
	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/mcpcore/mcpcoretest"
	"github.com/rukh-dev/rukh/policy"
)

// Serve serves one session of the core configured by cfg: it reads what
// the client sends from in and writes what the client reads to out, until
// in ends or ctx does (the owner's stop).
type Serve func(ctx context.Context, in io.Reader, out io.Writer, cfg mcpcore.Config) error

// Transport is what a run of the transcripts goes over.
type Transport struct {
	// HTTP: every endpoint is also served over HTTP, stdio-only
	// transcripts are skipped and http-differs ones compare
	// -- server-http --.
	HTTP  bool
	Serve Serve
}

// Run replays every transcript matching glob over tr, each as a subtest.
// Each archive has:
//
//	comment        what the transcript guards
//	-- config --   optional "key value" lines: endpoint NAME, active N,
//	               fillers N (tools on endpoint "many"), tasks MAX [jobs]
//	               [required] (a task policy on "local": setTaskProfile),
//	               discovery [DIRECT…] ("local" is progressive, listing the
//	               commands or packages named: setDiscoveryProfile);
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
//	                 #hold / #release  stop / resume the client reading
//	                 #watching N       fail unless N store watches run
//	                 #ended N          fail unless N invocations returned
//	               In lines, @REP(n,text)@ repeats text n times and $CURSOR is
//	               the last nextCursor the server sent.
//	-- server --   the server's messages, indented; "#serve: …" when Serve
//	               returned an error.
//
// The server runs in-process inside a synctest bubble, so every client line
// is fully processed (and timers are fake) before the next one is sent.
// With update, a run rewrites what it compares instead: the stdio run
// -- server --, the HTTP run -- server-http -- (http-differs only).
func Run(t *testing.T, glob string, tr Transport, update bool) {
	files, err := filepath.Glob(glob)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no transcripts")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			runTranscript(t, file, tr, update)
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

func runTranscript(t *testing.T, file string, tr Transport, update bool) {
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
	var discovery []string // nil: direct
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
			case "discovery":
				discovery = append([]string{}, strings.Fields(v)...)
			case "stdio-only", "http-differs":
				if v == "" {
					t.Fatalf("%s: %s needs its reason", file, k)
				}
				if !tr.HTTP {
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
		h := startHarness(t, endpoint, active, fillers, tasks, discovery, tr)
		for _, line := range strings.Split(string(client.Data), "\n") {
			if h.ServeDone() {
				break
			}
			h.Do(t, line)
			synctest.Wait()
		}
		got = h.Finish(t)
	})

	srv, ok := section(a, golden)
	if update && (!tr.HTTP || golden != "server") {
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

func startHarness(t *testing.T, endpoint string, active uint64, fillers int, tasks string, discovery []string, tr Transport) *Harness {
	h := NewHarness()
	h.Active.Store(active)
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
	if tr.HTTP {
		servedOverHTTP(revs)
	}
	if discovery != nil {
		for _, b := range revs {
			setDiscoveryProfile(b, discovery)
		}
	}
	if tasks != "" {
		words := strings.Fields(tasks)
		max, _ := strconv.Atoi(words[0])
		for _, b := range revs {
			setTaskProfile(b, max, slices.Contains(words, "jobs"), slices.Contains(words, "required"))
		}
		h.Tasks = NewTasks(h.Invoker)
	}
	cfg := mcpcore.Config{
		Endpoint: endpoint, ServerName: "rukh", ServerVersion: "test",
		Active: func() (uint64, error) { return h.Active.Load(), nil },
		Load: mcpcoretest.BindingsFor(endpoint, func(n uint64) (*policy.Binding, error) {
			h.Loads.Add(1)
			if b, ok := revs[n]; ok {
				return b, nil
			}
			return nil, fmt.Errorf("no revision %d", n)
		}),
		Watch:   h.Watch,
		Secret:  []byte("test secret"),
		Invoker: h.Invoker,
		Logf:    t.Logf,
		NewID:   CounterIDs(),
	}
	if h.Tasks != nil {
		cfg.Tasks = h.Tasks
	}
	h.Start(func(ctx context.Context, in io.Reader, out io.Writer) error { return tr.Serve(ctx, in, out, cfg) })
	return h
}

// setDiscoveryProfile makes endpoint "local" of b progressive, listing
// the commands or packages of direct.
func setDiscoveryProfile(b *policy.Binding, direct []string) {
	var p map[string]map[string]map[string]any
	if err := jsonv2.Unmarshal(b.Profile, &p); err != nil {
		panic(err)
	}
	if p["endpoints"]["local"] == nil {
		return // a revision without the endpoint
	}
	d := map[string]any{"mode": policy.DiscoveryProgressive}
	if len(direct) > 0 {
		d["direct"] = direct
	}
	p["endpoints"]["local"]["discovery"] = d
	data, err := jsonv2.Marshal(p, jsonv2.Deterministic(true))
	if err != nil {
		panic(err)
	}
	b.Profile = data
}

// servedOverHTTP serves every endpoint of every revision on both
// transports, unless the revision names its transports itself.
func servedOverHTTP(revs map[uint64]*policy.Binding) {
	for _, b := range revs {
		var p map[string]any
		if err := jsonv2.Unmarshal(b.Profile, &p); err != nil {
			panic(err)
		}
		eps, _ := p["endpoints"].(map[string]any)
		for _, e := range eps {
			ep := e.(map[string]any)
			if _, ok := ep["transports"]; !ok {
				ep["transports"] = []string{policy.TransportStdio, policy.TransportHTTP}
			}
		}
		data, err := jsonv2.Marshal(p, jsonv2.Deterministic(true))
		if err != nil {
			panic(err)
		}
		b.Profile = data
	}
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
