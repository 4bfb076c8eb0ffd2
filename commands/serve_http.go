package commands

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/mcphttp"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
	"github.com/urfave/cli/v3"
	"golang.org/x/time/rate"
)

func (a *app) serveHTTPCmd() *cli.Command {
	return &cli.Command{
		Name:  "serve-http",
		Usage: "serve the published tools of every HTTP endpoint to many agents over MCP Streamable HTTP",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:8787", Usage: "the address to listen on (host:port; port 0 picks one)"},
			&cli.StringFlag{Name: "tls-cert", Usage: "serve HTTPS with this certificate (PEM)"},
			&cli.StringFlag{Name: "tls-key", Usage: "the certificate's private key (PEM)"},
			&cli.BoolFlag{Name: "insecure-http", Usage: "allow plain HTTP on a non-loopback address"},
			&cli.StringSliceFlag{Name: "allow-origin", Usage: "an Origin browsers may call from (repeatable)"},
			&cli.StringSliceFlag{Name: "allow-host", Usage: "a Host name clients reach this server by, besides the loopback names (repeatable)"},
			&cli.FloatFlag{Name: "rate", Value: 50, Usage: "requests per second each agent may make (0: unlimited)"},
			&cli.IntFlag{Name: "burst", Value: 100, Usage: "requests an agent may make at once above its rate"},
			&cli.StringFlag{Name: "metrics-listen", Usage: "serve Prometheus metrics on this separate address (host:port)"},
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() > 0 {
				return usageErr("serve-http takes no arguments")
			}
			cert, key := c.String("tls-cert"), c.String("tls-key")
			if (cert == "") != (key == "") {
				return usageErr("--tls-cert and --tls-key go together")
			}
			log := newVerbLog(a.stderr, "serve-http")
			defer log.close()
			a.h.Store.SnapshotReads() // many small reads: pread, no file lock or mapping
			ln, err := net.Listen("tcp", c.String("listen"))
			if err != nil {
				return listenErr("listen", c.String("listen"), err)
			}
			defer ln.Close()
			loopback := isLoopback(ln.Addr())
			if !loopback && cert == "" && !c.Bool("insecure-http") {
				return &kernel.Error{Code: kernel.CodeInvalid,
					Message: fmt.Sprintf("refusing plain HTTP on the non-loopback address %s: bearer tokens would cross the network in the clear", ln.Addr()),
					Hint:    "give --tls-cert and --tls-key, listen on 127.0.0.1, or accept the risk with --insecure-http (behind a TLS proxy)"}
			}
			m := newHTTPMetrics()
			aw := a.h.Store.NewAuditWriter(log.Logf)
			defer aw.Close() // after the drain: every call's record is queued by then
			eps, err := a.httpEndpoints(log, m, aw)
			if err != nil {
				return err
			}
			for _, e := range eps {
				if e.HTTPAuth == policy.HTTPAuthNone && !loopback {
					log.Logf("endpoint %q has httpAuth none, which is honoured only on a loopback listener: its callers need a bearer token here", e.Core.Endpoint)
				}
			}
			stopTasks, err := a.startHTTPTasks(eps, log.Logf)
			if err != nil {
				return err
			}
			defer stopTasks() // its running tasks are recorded cancelled
			rl := rate.Limit(c.Float("rate"))
			if c.Float("rate") <= 0 {
				rl = 0
			}
			h := mcphttp.New(mcphttp.Config{
				Endpoints:    eps,
				Loopback:     loopback,
				AllowHosts:   c.StringSlice("allow-host"),
				AllowOrigins: c.StringSlice("allow-origin"),
				Credentials:  newLoggedCredentials(a.h.Store, log.Logf),
				Refused: func(endpoint, tool, command string, cred *kernel.Credential, err error) {
					rec := store.AuditRecord{Time: time.Now(), Transport: kernel.TransportHTTP, Endpoint: endpoint,
						Tool: tool, Command: command, Outcome: auditRefused, Reason: refusalReason(err)}
					if cred != nil {
						c := cred.Caller(kernel.TransportHTTP, "")
						rec.Agent, rec.Credential = c.Agent, c.Credential
					}
					aw.Add(rec)
				},
				Rate:    rl,
				Burst:   int(c.Int("burst")),
				Logf:    log.Logf,
				Observe: m.rejected,
			})
			srv := &http.Server{
				Handler:           m.wrap(h),
				ReadHeaderTimeout: 5 * time.Second,
				IdleTimeout:       2 * time.Minute,
				MaxHeaderBytes:    64 << 10,
				ErrorLog:          nil,
			}
			scheme := "http"
			if cert != "" {
				pair, err := tls.LoadX509KeyPair(cert, key)
				if err != nil {
					return &kernel.Error{Code: kernel.CodeInvalid, Message: "cannot load the TLS certificate: " + err.Error(),
						Hint: "give a PEM certificate with --tls-cert and its key with --tls-key"}
				}
				srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
				scheme = "https"
			}
			if addr := c.String("metrics-listen"); addr != "" {
				mln, err := net.Listen("tcp", addr)
				if err != nil {
					return listenErr("metrics-listen", addr, err)
				}
				msrv := &http.Server{Handler: m.handler(h), ReadHeaderTimeout: 5 * time.Second}
				go msrv.Serve(mln)
				defer msrv.Close()
				log.Logf("metrics on http://%s/metrics", mln.Addr())
			}
			for _, e := range eps {
				log.Logf("endpoint %q on %s://%s%s%s/%s", e.Core.Endpoint, scheme, ln.Addr(), mcphttp.PathPrefix, e.Namespace, e.Core.Endpoint)
			}
			log.Logf("listening on %s://%s", scheme, ln.Addr())
			served := make(chan error, 1)
			go func() {
				if cert != "" {
					served <- srv.ServeTLS(ln, "", "")
				} else {
					served <- srv.Serve(ln)
				}
			}()
			select {
			case err := <-served:
				h.Close()
				return &kernel.Error{Code: kernel.CodeUnavailable, Message: "serving HTTP", Err: err}
			case <-ctx.Done():
			}
			// Drain: no new calls (the listener stays open and answers 503,
			// /readyz too, so a load balancer moves on); those in flight
			// finish until their deadline (the longest template's), then
			// whatever is left stops.
			n := h.Running()
			log.Logf("stopping: %d call(s) in flight finish first (at most %v)", n, drainBound(eps))
			h.Drain()
			dctx, cancel := context.WithTimeout(context.Background(), drainBound(eps))
			defer cancel()
			waitCalls(dctx, h)
			if err := srv.Shutdown(dctx); err != nil {
				log.Logf("calls still running at the drain bound are stopped")
				srv.Close()
			}
			h.Close()
			return nil
		},
	}
}

// waitCalls returns when no call runs any more, or at ctx's end.
func waitCalls(ctx context.Context, h *mcphttp.Handler) {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for h.Running() > 0 {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// drainBound is how long a drain waits: the longest call deadline of any
// served template, plus a moment to write the answers.
func drainBound(eps []mcphttp.Endpoint) time.Duration {
	d := time.Duration(policy.DefaultTimeoutMs) * time.Millisecond
	for _, e := range eps {
		if e.Core.Launch != nil {
			d = max(d, e.Core.Launch.Template.Limits().Timeout)
		}
	}
	return d + 2*time.Second
}

// listenErr says why the address of --flag could not be listened on. Each
// reason is the owner's to fix, not a store to wait for: a taken or
// forbidden address is refused (exit 1), a malformed one a usage error.
func listenErr(flag, addr string, err error) error {
	e := &kernel.Error{Code: kernel.CodeInvalid, Message: fmt.Sprintf("cannot listen on %s", addr),
		Hint: fmt.Sprintf("choose another address with --%s (host:port; port 0 picks a free one)", flag)}
	var oe *net.OpError
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		e.Code, e.Message = kernel.CodeConflict, e.Message+": the address is already in use"
		e.Hint = fmt.Sprintf("another process listens there: choose another address with --%s (port 0 picks a free one)", flag)
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		e.Code, e.Message = kernel.CodeDenied, e.Message+": permission denied"
		e.Hint = fmt.Sprintf("ports below 1024 need privileges: choose another address with --%s", flag)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		e.Message += ": the address is not one of this host's"
	case errors.As(err, &oe) && oe.Op == "listen" && oe.Source == nil && oe.Addr == nil:
		// Not an address at all (no port, an unknown host name).
		e.Code, e.Message = kernel.CodeUsage, e.Message+": "+oe.Err.Error()
	default:
		e.Message += ": " + err.Error()
	}
	return e
}

func isLoopback(addr net.Addr) bool {
	ta, ok := addr.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// httpEndpoints are the endpoints of the active revision served on http,
// each with the launch binding it has now, for the life of the process.
func (a *app) httpEndpoints(log *stderrLog, m *httpMetrics, aw *store.AuditWriter) ([]mcphttp.Endpoint, error) {
	exists, err := a.h.Store.Exists()
	if err != nil {
		return nil, err
	}
	if !exists {
		log.Logf("no rukh store in %s: serving no endpoints", a.h.Store.Home())
		return nil, nil
	}
	secret, err := a.h.Store.Secret()
	if err != nil {
		return nil, err
	}
	var launches []*policy.Launch
	var rev string
	published, err := a.h.ViewActive(func(ix *store.Index) error {
		rev = ix.Revision()
		for _, e := range ix.Endpoints() {
			l, err := policy.LaunchOf(ix.Profile(), e.Name)
			if err != nil {
				return err
			}
			if l != nil {
				launches = append(launches, l)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !published {
		log.Logf("nothing is published in %s: serving no endpoints until restarted after a publish", a.h.Store.Home())
		return nil, nil
	}
	var eps []mcphttp.Endpoint
	var skipped []string
	for _, l := range launches {
		if !l.Serves(policy.TransportHTTP) {
			skipped = append(skipped, l.Endpoint)
			continue
		}
		endpoint := l.Endpoint
		audit := newServeAudit(&home.PinningInvoker{Home: a.h, Inner: a.h.Runner, Logf: log.Logf, Pinned: pinnedOf}, aw, endpoint)
		eps = append(eps, mcphttp.Endpoint{
			Namespace: l.Namespace,
			HTTPAuth:  l.HTTPAuth,
			Core: mcpcore.Config{
				Endpoint: endpoint, Launch: l,
				ServerName: "rukh", ServerVersion: version(),
				Active: a.h.Store.Active, View: a.serveView(endpoint), Watch: a.h.Store.WatchActive,
				Secret: secret,
				Invoker: timedInvoker{audit, func(inv *kernel.Invocation, res kernel.Result, d time.Duration) {
					m.called(endpoint, inv, res, d)
				}},
				Diagnostics: func(inv *kernel.Invocation, res kernel.Result) {
					audit.done(inv, res)
					if err := a.h.SaveDiagnostics(endpoint, inv, res); err != nil {
						log.Logf("diagnostics of %s were lost: %v", inv.ID, err)
					}
				},
				Logf: log.Logf,
			},
		})
	}
	if len(eps) == 0 {
		log.Logf("no endpoint of revision %s lists \"http\" in its transports (endpoints: %s): serving none", rev, strings.Join(skipped, ", "))
		log.Line("rukh: hint: add \"http\" to an endpoint's \"transports\" in the profile ('rukh policy set'), publish, and restart serve-http\n")
	}
	return eps, nil
}

// auditRefused is the audit outcome of a call its credential did not
// authorise: nothing ran.
const auditRefused = "refused"

// refusalReason is a refusal as its audit record says it.
func refusalReason(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, store.ErrTokenSpent):
		return "the one-time token was already spent (a replay)"
	}
	var ke *kernel.Error
	if errors.Is(err, policy.ErrInsufficientScope) && errors.As(err, &ke) {
		return "insufficient scope: " + ke.Message
	}
	return err.Error()
}

// loggedCredentials is the store's credentials, telling the owner why a
// token was refused (naming it by its kind and the first 8 hex digits of
// its hash, never showing it), and answering a static key or short-lived
// token it authenticated before from memory while the store file's stamp
// is the one taken before that read: any write (a revocation, a rotation,
// a removed agent, a consumed token) changes the stamp, except this
// process's own audit records. Expiry is checked
// on every hit; one-time tokens are always read.
type loggedCredentials struct {
	s    *store.Store
	logf func(format string, args ...any)

	mu    sync.Mutex
	stamp store.Stamp
	known map[kernel.TokenHash]kernel.Credential
}

// authCacheSize bounds the credentials kept for one stamp.
const authCacheSize = 1024

func newLoggedCredentials(s *store.Store, logf func(string, ...any)) *loggedCredentials {
	return &loggedCredentials{s: s, logf: logf}
}

func (c *loggedCredentials) Authenticate(token string) (kernel.Credential, error) {
	st, stamped := c.s.Stamp()
	h := store.HashToken(token)
	if stamped {
		c.mu.Lock()
		cred, hit := c.known[h]
		if c.stamp != st && c.s.Unchanged(c.stamp, st) {
			c.stamp = st // only our own audit records were added since
		}
		hit = hit && c.stamp == st
		c.mu.Unlock()
		if hit && (cred.ExpiresAt.IsZero() || time.Now().Before(cred.ExpiresAt)) {
			return cred, nil
		}
	}
	cred, err := c.s.Authenticate(token)
	if err != nil {
		name := "a malformed token"
		if kind, h, perr := store.ParseToken(token); perr == nil {
			name = kernel.Credential{Kind: kind, Hash: h}.LogID()
		}
		c.logf("refused a request: %s: %v", name, err)
		return cred, err
	}
	if stamped && cred.Kind != kernel.CredentialOneTime {
		c.mu.Lock()
		if c.stamp != st || c.known == nil {
			c.stamp, c.known = st, map[kernel.TokenHash]kernel.Credential{}
		}
		if len(c.known) < authCacheSize {
			c.known[h] = cred
		}
		c.mu.Unlock()
	}
	return cred, nil
}

func (c *loggedCredentials) ConsumeOnce(h kernel.TokenHash, command string) (kernel.Credential, error) {
	return c.s.ConsumeOnce(h, command)
}

// timedInvoker tells done of every invocation and how long it took.
type timedInvoker struct {
	kernel.Invoker
	done func(inv *kernel.Invocation, res kernel.Result, d time.Duration)
}

func (t timedInvoker) Invoke(ctx context.Context, inv *kernel.Invocation) kernel.Result {
	start := time.Now()
	res := t.Invoker.Invoke(ctx, inv)
	t.done(inv, res, time.Since(start))
	return res
}
