package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/mcpstdio"
	"github.com/rukh-dev/rukh/policy"
)

// StdioOptions are what one serve-mcp process serves, and where.
type StdioOptions struct {
	Home     *home.Home
	Endpoint string // the profile endpoint bound for the whole process
	Stdin    io.Reader
	Stdout   io.Writer
	// IsolateStdout: Stdout is the process's fd 1, which from the start of
	// serving only protocol messages may reach (mcpstdio.IsolateStdout).
	IsolateStdout bool
	Version       string // the server version told to clients
	// Logf writes one log line, Line one complete line as it is; neither
	// may block.
	Logf func(format string, args ...any)
	Line func(line string)
}

// ErrCancelled ends a serving process the owner cancelled (a signal):
// calls in flight were answered cancelled.
var ErrCancelled = errors.New("serving cancelled")

// Logged is an error that ended serving and was reported through the log
// already: a stderr nobody reads must not keep the process from exiting.
type Logged struct{ Err error }

func (e *Logged) Error() string { return e.Err.Error() }
func (e *Logged) Unwrap() error { return e.Err }

// Stdio serves o.Endpoint's published tools to one agent over MCP stdio
// until the client closes stdin or ctx ends. An error before serving
// started is returned as it is; then ErrCancelled or a *Logged.
func Stdio(ctx context.Context, o StdioOptions) error {
	h := o.Home
	h.Store.SnapshotReads() // many small reads: pread, no file lock or mapping
	p := newProcess(h, o.Version, o.Logf)
	cache := &catalogCache{h: h, reads: p.reads, endpoint: o.Endpoint}
	launch, err := cache.prime()
	if err != nil {
		return err
	}
	if launch != nil && !launch.Serves(policy.TransportStdio) {
		return kernel.Errorf(kernel.CodeInvalid, "endpoint %q is not served on stdio: its transports are %s", o.Endpoint, strings.Join(launch.Transports, ", ")).
			WithHint(`add "stdio" to the endpoint's "transports" in the profile ('rukh policy set') and publish, or serve it over HTTP with 'rukh serve-http'`)
	}
	exists, err := h.Store.Exists()
	if err != nil {
		return err
	}
	var secret []byte // no store: a per-process cursor key, and no store is created
	if exists {
		if secret, err = h.Store.Secret(); err != nil {
			return err
		}
	}
	if launch == nil {
		sayNothingPublished(o, exists)
	}
	out := o.Stdout
	if o.IsolateStdout {
		// From here on only protocol messages reach the real fd 1.
		f, err := mcpstdio.IsolateStdout()
		if err != nil {
			return err
		}
		defer f.Close()
		out = f
	}
	p.aw = h.Store.NewAuditWriter(o.Logf)
	defer p.aw.Close() // after Serve: every call's record is queued by then
	cfg := mcpstdio.Config{Config: p.endpoint(o.Endpoint, launch, cache, secret, nil)}
	stopTasks, err := p.startTasks([]*mcpcore.Config{&cfg.Config})
	if err != nil {
		return err
	}
	defer stopTasks() // before the audit writer closes: a stopped task is audited too
	err = mcpstdio.Serve(ctx, o.Stdin, out, cfg)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ErrCancelled
	}
	o.Logf("%v", err)
	return &Logged{Err: err}
}

// sayNothingPublished tells the owner, on stderr, why an agent would see no
// tools: the MCP client most likely started rukh without the owner's
// RUKH_HOME (clients pass a bare environment), on a home nobody published in.
func sayNothingPublished(o StdioOptions, exists bool) {
	st := o.Home.Store
	if st.Shared() {
		where := st.Path()
		o.Logf("nothing is published in the store %s: serving no tools until something is", where)
		o.Line("rukh: hint: run 'rukh publish' with RUKH_STORE=" + where + " on any machine that shares it\n")
		return
	}
	home := st.Home()
	if exists {
		o.Logf("nothing is published in %s: serving no tools until something is", home)
	} else {
		o.Logf("no rukh store in %s (nothing was ever installed or published there): serving no tools, and creating none", home)
	}
	o.Line(fmt.Sprintf("rukh: hint: run 'rukh publish' in that home (RUKH_HOME=%s), or give this server the owner's home: "+
		"set RUKH_HOME in the MCP client's config for it ('rukh mcp-config' prints one)\n", home))
}
