package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/mcphttp"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
	"golang.org/x/time/rate"
)

// HTTPOptions are what one serve-http process serves, and where. Errors
// name the serve-http flags each option comes from.
type HTTPOptions struct {
	Home    *home.Home
	Listen  string // host:port; port 0 picks one
	TLSCert string // with TLSKey: serve HTTPS
	TLSKey  string
	// InsecureHTTP allows plain HTTP on a non-loopback address.
	InsecureHTTP bool
	AllowOrigins []string
	AllowHosts   []string
	Rate         float64 // requests per second per agent; 0 or less: unlimited
	Burst        int
	// MetricsListen, when set, serves Prometheus metrics on this separate
	// address.
	MetricsListen string
	// PublicURL is the scheme and host clients reach this server by
	// (ParsePublicURL): the base of OAuth endpoints' resource and metadata
	// URLs. Empty: http(s)://the listener's address.
	PublicURL string
	// OAuthRefresh is the least time between two fetches of an identity
	// provider's keys or discovery document (0: oauth.DefaultMinRefresh).
	OAuthRefresh time.Duration
	Version      string // the server version told to clients
	// Logf writes one log line, Line one complete line as it is; neither
	// may block.
	Logf func(format string, args ...any)
	Line func(line string)
}

// HTTP serves every HTTP endpoint of the active revision to many agents
// over MCP Streamable HTTP until ctx ends, then drains: no new calls, and
// those in flight finish until the longest deadline of a served template.
func HTTP(ctx context.Context, o HTTPOptions) error {
	st := o.Home.Store
	st.SnapshotReads() // many small reads: pread, no file lock or mapping
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return listenErr("listen", o.Listen, err)
	}
	defer ln.Close()
	loopback := isLoopback(ln.Addr())
	if !loopback && o.TLSCert == "" && !o.InsecureHTTP {
		return kernel.Errorf(kernel.CodeInvalid, "refusing plain HTTP on the non-loopback address %s: bearer tokens would cross the network in the clear", ln.Addr()).
			WithHint("give --tls-cert and --tls-key, listen on 127.0.0.1, or accept the risk with --insecure-http (behind a TLS proxy)")
	}
	m := newHTTPMetrics()
	p := newProcess(o.Home, o.Version, o.Logf)
	p.aw = st.NewAuditWriter(o.Logf)
	defer p.aw.Close() // after the drain: every call's record is queued by then
	eps, err := p.httpEndpoints(m, o.Line)
	if err != nil {
		return err
	}
	cores := make([]*mcpcore.Config, len(eps))
	for i := range eps {
		if eps[i].HTTPAuth == policy.HTTPAuthNone && !loopback {
			o.Logf("endpoint %q has httpAuth none, which is honoured only on a loopback listener: its callers need a bearer token here", eps[i].Core.Endpoint)
		}
		cores[i] = &eps[i].Core
	}
	stopTasks, err := p.startTasks(cores)
	if err != nil {
		return err
	}
	defer stopTasks() // its running tasks are recorded cancelled
	rl := rate.Limit(o.Rate)
	if o.Rate <= 0 {
		rl = 0
	}
	h := mcphttp.New(mcphttp.Config{
		Endpoints:    eps,
		Loopback:     loopback,
		AllowHosts:   o.AllowHosts,
		AllowOrigins: o.AllowOrigins,
		Credentials:  newLoggedCredentials(st, o.Logf),
		Refused:      refused(p.aw),
		Rate:         rl,
		Burst:        o.Burst,
		Logf:         o.Logf,
		Observe:      m.rejected,
	})
	scheme := "http"
	if o.TLSCert != "" {
		scheme = "https"
	}
	public := o.PublicURL
	if public == "" {
		public = scheme + "://" + ln.Addr().String()
	}
	// Each endpoint's authentication as its launch binding has it, then as
	// each newly published revision does: an unchanged oauth block keeps
	// its verifier and so the identity provider's keys it fetched.
	vs := newOAuthVerifiers(public, func(k verifierKey) (mcphttp.TokenVerifier, error) { return newTokenVerifier(k, o.OAuthRefresh, o.Logf) })
	launches := map[string]*policy.Launch{}
	for _, e := range eps {
		if e.Core.Launch != nil {
			launches[e.Core.Endpoint] = e.Core.Launch
		}
	}
	if err := vs.applyAuth(h, eps, launches); err != nil {
		h.Close()
		return err
	}
	if len(eps) > 0 {
		wctx, stopWatch := context.WithCancel(ctx)
		watched := make(chan struct{})
		go func() { defer close(watched); p.watchAuth(wctx, vs, h, eps) }()
		defer func() { stopWatch(); <-watched }()
	}
	srv := &http.Server{
		Handler:           m.wrap(h),
		ReadHeaderTimeout: 5 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          nil,
	}
	if o.TLSCert != "" {
		pair, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
		if err != nil {
			return kernel.Errorf(kernel.CodeInvalid, "%s", "cannot load the TLS certificate: "+err.Error()).
				WithHint("give a PEM certificate with --tls-cert and its key with --tls-key")
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	}
	if addr := o.MetricsListen; addr != "" {
		mln, err := net.Listen("tcp", addr)
		if err != nil {
			return listenErr("metrics-listen", addr, err)
		}
		msrv := &http.Server{Handler: m.handler(h), ReadHeaderTimeout: 5 * time.Second}
		go msrv.Serve(mln)
		defer msrv.Close()
		o.Logf("metrics on http://%s/metrics", mln.Addr())
	}
	for _, e := range eps {
		o.Logf("endpoint %q on %s://%s%s", e.Core.Endpoint, scheme, ln.Addr(), EndpointPath(e.Namespace, e.Core.Endpoint))
		if l := e.Core.Launch; l != nil && l.OAuth != nil {
			o.Logf("endpoint %q takes access tokens of %s; its metadata: %s%s%s", e.Core.Endpoint, l.OAuth.Issuer, public, mcphttp.MetadataPrefix, EndpointPath(e.Namespace, e.Core.Endpoint))
			if o.PublicURL == "" && !loopback {
				o.Logf("endpoint %q: its resource URL is the listener's address; behind a proxy, give --public-url so tokens name the address clients use", e.Core.Endpoint)
			}
		}
	}
	o.Logf("listening on %s://%s", scheme, ln.Addr())
	dropStartupPages()
	served := make(chan error, 1)
	go func() {
		if o.TLSCert != "" {
			served <- srv.ServeTLS(ln, "", "")
		} else {
			served <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-served:
		h.Close()
		return kernel.Errorf(kernel.CodeUnavailable, "serving HTTP").Wrap(err)
	case <-ctx.Done():
	}
	// Drain: no new calls (the listener stays open and answers 503,
	// /readyz too, so a load balancer moves on); those in flight
	// finish until their deadline (the longest template's), then
	// whatever is left stops.
	n := h.Running()
	o.Logf("stopping: %d call(s) in flight finish first (at most %v)", n, drainBound(eps))
	h.Drain()
	dctx, cancel := context.WithTimeout(context.Background(), drainBound(eps))
	defer cancel()
	waitCalls(dctx, h)
	if err := srv.Shutdown(dctx); err != nil {
		o.Logf("calls still running at the drain bound are stopped")
		srv.Close()
	}
	h.Close()
	return nil
}

// EndpointPath is where serve-http serves an endpoint of a namespace.
func EndpointPath(namespace, endpoint string) string {
	return mcphttp.PathPrefix + namespace + "/" + endpoint
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
	e := kernel.Errorf(kernel.CodeInvalid, "cannot listen on %s", addr).
		WithHint(fmt.Sprintf("choose another address with --%s (host:port; port 0 picks a free one)", flag))
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
// each with the launch binding it has now, for the life of the process;
// line writes the owner's hint when there are none.
func (p *process) httpEndpoints(m *httpMetrics, line func(string)) ([]mcphttp.Endpoint, error) {
	st := p.h.Store
	exists, err := st.Exists()
	if err != nil {
		return nil, err
	}
	if !exists {
		p.logf("no rukh store in %s: serving no endpoints", st.Home())
		return nil, nil
	}
	secret, err := st.Secret()
	if err != nil {
		return nil, err
	}
	var launches []*policy.Launch
	var rev string
	published, err := p.h.ViewActive(func(ix *store.Index) error {
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
		p.logf("nothing is published in %s: serving no endpoints until restarted after a publish", st.Home())
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
		timed := func(inv kernel.Invoker) kernel.Invoker {
			return timedInvoker{inv, func(inv *kernel.Invocation, res kernel.Result, d time.Duration) {
				m.called(endpoint, inv, res, d)
			}}
		}
		eps = append(eps, mcphttp.Endpoint{
			Namespace: l.Namespace,
			HTTPAuth:  l.HTTPAuth,
			Core:      p.endpoint(endpoint, l, primedCache(p.h, p.reads, endpoint), secret, timed),
		})
	}
	if len(eps) == 0 {
		p.logf("no endpoint of revision %s lists \"http\" in its transports (endpoints: %s): serving none", rev, strings.Join(skipped, ", "))
		line("rukh: hint: add \"http\" to an endpoint's \"transports\" in the profile ('rukh policy set'), publish, and restart serve-http\n")
	}
	return eps, nil
}
