package commands

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/mcpstdio"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
	"github.com/urfave/cli/v3"
)

func (a *app) serveMCPCmd() *cli.Command {
	return &cli.Command{
		Name:  "serve-mcp",
		Usage: "serve the published tools of an endpoint to an agent over MCP stdio",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "endpoint", Value: "local", Usage: "the profile endpoint this server is bound to for its whole life"},
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() > 0 {
				return usageErr("serve-mcp takes no arguments")
			}
			// SIGHUP is the owner's cancel too, like SIGINT and SIGTERM
			// (Main): calls in flight are answered cancelled, then we exit.
			ctx, stopHUP := signal.NotifyContext(ctx, syscall.SIGHUP)
			defer stopHUP()
			// A client that closes our stderr must not kill the server with
			// SIGPIPE before it stops its children: handled (not ignored, so
			// children still get the default), writes just fail.
			sigpipe := make(chan os.Signal, 1)
			signal.Notify(sigpipe, syscall.SIGPIPE)
			defer signal.Stop(sigpipe)
			log := newStderrLog(a.stderr)
			defer log.close()
			endpoint := c.String("endpoint")
			a.h.Store.SnapshotReads() // many small reads: pread, no file lock or mapping
			cache := &serveCache{a: a, endpoint: endpoint}
			launch, err := cache.prime()
			if err != nil {
				return err
			}
			if launch != nil && !launch.Serves(policy.TransportStdio) {
				return &kernel.Error{Code: kernel.CodeInvalid,
					Message: fmt.Sprintf("endpoint %q is not served on stdio: its transports are %s", endpoint, strings.Join(launch.Transports, ", ")),
					Hint:    `add "stdio" to the endpoint's "transports" in the profile ('rukh policy set') and publish, or serve it over HTTP with 'rukh serve-http'`}
			}
			exists, err := a.h.Store.Exists()
			if err != nil {
				return err
			}
			var secret []byte // no store: a per-process cursor key, and no store is created
			if exists {
				if secret, err = a.h.Store.Secret(); err != nil {
					return err
				}
			}
			if launch == nil {
				a.sayNothingPublished(log, exists)
			}
			out := a.stdout
			if a.stdout == os.Stdout {
				// From here on only protocol messages reach the real fd 1.
				f, err := mcpstdio.IsolateStdout()
				if err != nil {
					return err
				}
				defer f.Close()
				out = f
			}
			aw := a.h.Store.NewAuditWriter(log.Logf)
			defer aw.Close() // after Serve: every call's record is queued by then
			audit := newServeAudit(&home.PinningInvoker{Home: a.h, Inner: a.h.Runner, Logf: log.Logf, Pinned: pinnedOf}, aw, endpoint)
			diagnostics := func(inv *kernel.Invocation, res kernel.Result) {
				audit.done(inv, res)
				if err := a.h.SaveDiagnostics(endpoint, inv, res); err != nil {
					log.Logf("diagnostics of %s were lost: %v", inv.ID, err)
				}
			}
			runner, stopTasks, err := a.startTasks(launch, audit, diagnostics, log.Logf)
			if err != nil {
				return err
			}
			defer stopTasks() // before the audit writer closes: a stopped task is audited too
			cfg := mcpstdio.Config{Config: mcpcore.Config{
				Endpoint:      endpoint,
				Launch:        launch,
				ServerName:    "rukh",
				ServerVersion: version(),
				Active:        a.h.Store.Active,
				View:          cache.view,
				Watch:         a.h.Store.WatchActive,
				Secret:        secret,
				Invoker:       audit,
				Diagnostics:   diagnostics,
				Logf:          log.Logf,
			}}
			if runner != nil {
				cfg.Tasks = &taskHost{r: runner, st: a.h.Store}
			}
			err = mcpstdio.Serve(ctx, a.stdin, out, cfg)
			switch {
			case err == nil:
				return nil
			case ctx.Err() != nil:
				return &exitError{code: ExitCancelled}
			}
			// Reported through the log: a stderr nobody reads must not
			// keep the process from exiting.
			log.Logf("%v", err)
			return &exitError{code: exitCode(err)}
		},
	}
}

// launch fixes serve-mcp's launch binding from the active revision's
// endpoint record, refusing an endpoint the published profile does not name
// (a typo would otherwise serve an agent no tools). Nothing published: nil.
func (a *app) launch(endpoint string) (*policy.Launch, error) {
	var l *policy.Launch
	_, err := a.h.ViewActive(func(ix *store.Index) (err error) {
		if l, err = policy.LaunchOf(ix.Profile(), endpoint); err != nil {
			return err
		}
		if l == nil {
			return noEndpoint(ix, endpoint)
		}
		return nil
	})
	return l, err
}

func noEndpoint(ix *store.Index, endpoint string) error {
	var names []string
	for _, e := range ix.Endpoints() {
		names = append(names, e.Name)
	}
	return &kernel.Error{Code: kernel.CodeNotFound, Message: "the published profile has no endpoint " + strconv.Quote(endpoint),
		Hint: "published endpoints: " + strings.Join(names, ", ")}
}

// serveView reads, for a request, the one page or tool record it needs
// from the store, or answers it from what the last requests read while the
// store is unchanged (serve_cache.go). The launch binding and the first list
// page are read at start.
func (a *app) serveView(endpoint string) func(uint64, func(uint64, mcpstdio.Catalog) error) error {
	return a.primedCache(endpoint).view
}

// primedCache is a serveCache that holds the first list page.
func (a *app) primedCache(endpoint string) *serveCache {
	c := &serveCache{a: a, endpoint: endpoint}
	_ = c.view(0, func(_ uint64, cat mcpstdio.Catalog) error {
		if cat == nil {
			return nil
		}
		cat.Launch() // decodes the profile: kept with the revision
		if !cat.HasEndpoint() || cat.Pages() == 0 {
			return nil
		}
		return cat.Page(0, func(string, []byte) error { return nil })
	}) // a failure here is the first request's to report
	return c
}

// storeCatalog is mcpstdio.Catalog over one indexed revision, valid during
// one store read.
type storeCatalog struct {
	a        *app
	ix       *store.Index
	endpoint string
	ep       store.EndpointInfo
	has      bool

	launchOnce sync.Once
	launch     *policy.Launch
}

func (c *storeCatalog) HasEndpoint() bool { return c.has }

func (c *storeCatalog) Launch() *policy.Launch {
	c.launchOnce.Do(func() {
		l, err := policy.LaunchOf(c.ix.Profile(), c.endpoint)
		if err == nil {
			c.launch = l
		}
	})
	return c.launch
}

func (c *storeCatalog) Template() policy.Template {
	m, err := policy.DecodeEndpointMeta(c.ep.Meta)
	if err != nil {
		return policy.Template{}
	}
	return m.Template
}
func (c *storeCatalog) Pages() int       { return c.ep.Pages }
func (c *storeCatalog) Revision() string { return c.ix.Revision() }
func (c *storeCatalog) Digest() ([32]byte, error) {
	return mcpstdio.DigestPages(c)
}

func (c *storeCatalog) Endpoints() []string {
	var names []string
	for _, e := range c.ix.Endpoints() {
		names = append(names, e.Name)
	}
	return names
}

func (c *storeCatalog) Page(i int, fn func(name string, body []byte) error) error {
	return c.ix.Page(c.ep.Name, i, fn)
}

func (c *storeCatalog) Resolve(name string) (*mcpstdio.Resolved, error) {
	t, ok, err := c.ix.Tool(c.ep.Name, name)
	if err != nil || !ok {
		return nil, err
	}
	raw, err := c.ix.Decl(t.Decl)
	if err != nil {
		return nil, err
	}
	bc, err := policy.DecodeCommand(raw)
	if err != nil {
		return nil, fmt.Errorf("revision %s: tool %q: declaration: %v", c.ix.Revision(), name, err)
	}
	m, err := policy.DecodeEndpointMeta(c.ep.Meta)
	if err != nil {
		return nil, fmt.Errorf("revision %s: endpoint %s: %v", c.ix.Revision(), c.ep.Name, err)
	}
	name, version, _ := strings.Cut(bc.Release, "@")
	rel := &policy.BoundRelease{Name: name, Version: version, Digest: bc.Digest, Development: bc.Development}
	return &mcpstdio.Resolved{Command: &bc.Declaration, Dir: c.a.h.CopyDir(bc.Digest, bc.Development), Release: rel, Template: m.Template, Security: t.Security}, nil
}

// sayNothingPublished tells the owner, on stderr, why an agent would see no
// tools: the MCP client most likely started rukh without the owner's
// RUKH_HOME (clients pass a bare environment), on a home nobody published in.
func (a *app) sayNothingPublished(log *stderrLog, exists bool) {
	if a.h.Store.Shared() {
		where := a.h.Store.Path()
		log.Logf("nothing is published in the store %s: serving no tools until something is", where)
		log.Line("rukh: hint: run 'rukh publish' with RUKH_STORE=" + where + " on any machine that shares it\n")
		return
	}
	home := a.h.Store.Home()
	if exists {
		log.Logf("nothing is published in %s: serving no tools until something is", home)
	} else {
		log.Logf("no rukh store in %s (nothing was ever installed or published there): serving no tools, and creating none", home)
	}
	log.Line(fmt.Sprintf("rukh: hint: run 'rukh publish' in that home (RUKH_HOME=%s), or give this server the owner's home: "+
		"set RUKH_HOME in the MCP client's config for it ('rukh mcp-config' prints one)\n", home))
}

// stderrLog writes serve-mcp's log lines without ever blocking the server:
// a client that does not read our stderr must not stall deadlines,
// cancellation or shutdown. Lines that do not fit are counted and dropped.
type stderrLog struct {
	verb    string
	lines   chan string
	dropped atomic.Int64
	done    chan struct{}
}

func newStderrLog(w io.Writer) *stderrLog { return newVerbLog(w, "serve-mcp") }

func newVerbLog(w io.Writer, verb string) *stderrLog {
	l := &stderrLog{verb: verb, lines: make(chan string, 256), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for line := range l.lines {
			if n := l.dropped.Swap(0); n > 0 {
				fmt.Fprintf(w, "rukh: %s: %d log line(s) dropped: stderr is not being read\n", l.verb, n)
			}
			io.WriteString(w, line)
		}
	}()
	return l
}

func (l *stderrLog) Logf(format string, args ...any) {
	l.Line(fmt.Sprintf("rukh: "+l.verb+": "+format+"\n", args...))
}

// Line queues one complete line as it is.
func (l *stderrLog) Line(line string) {
	select {
	case l.lines <- line:
	default:
		l.dropped.Add(1)
	}
}

// close flushes what is queued, waiting at most a moment: a stuck stderr
// must not keep the process from exiting.
func (l *stderrLog) close() {
	close(l.lines)
	select {
	case <-l.done:
	case <-time.After(200 * time.Millisecond):
	}
}
