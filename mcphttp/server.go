package mcphttp

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/policy"
	"golang.org/x/time/rate"
)

// writeTimeout bounds one blocked write to a client (docs/design.md,
// Limits).
const writeTimeout = 2 * time.Second

// BodyTimeout is how long a request's body may take to arrive once its
// headers have: the transport's bound on finishing a message.
const BodyTimeout = 2 * time.Second

// refusalLinger and refusalDrain bound what is read of a refused
// request's body after its answer was sent.
const (
	refusalLinger = time.Second
	refusalDrain  = 4 << 20
)

// keepAliveEvery spaces the comments that keep an idle listen stream open.
const keepAliveEvery = 15 * time.Second

// PathPrefix is where endpoints live: PathPrefix + namespace + "/" + endpoint.
const PathPrefix = "/mcp/v1/"

// Endpoint is one served endpoint.
type Endpoint struct {
	Core      mcpcore.Config // its Transport is set to http
	Namespace string
	HTTPAuth  string // policy.HTTPAuthBearer, HTTPAuthNone, HTTPAuthOAuth or HTTPAuthRukhOAuth
	// OAuth is how an endpoint with httpAuth oauth or rukh+oauth checks
	// its identity provider's tokens; nil otherwise. Handler.SetAuth
	// changes both as revisions are published.
	OAuth *OAuthEndpoint
}

// Config is one serve-http process's endpoints, listener facts and seams.
type Config struct {
	Endpoints []Endpoint
	// Loopback reports that the listener accepts only loopback connections:
	// only then is "httpAuth": "none" honoured.
	Loopback bool
	// AllowHosts are the Host header values accepted besides the loopback
	// names (localhost, 127.0.0.1, [::1], with or without a port).
	AllowHosts []string
	// AllowOrigins are the Origin values accepted besides the request's own
	// (http or https and an accepted Host).
	AllowOrigins []string
	// Credentials authenticates bearer tokens and consumes one-time ones;
	// nil: only anonymous endpoints are reachable.
	Credentials Credentials
	// Refused, when set, is told of every tools/call its credential did
	// not authorise (nothing ran): the tool name, the command, who asked;
	// and of every request whose credential Credentials refused but
	// identified (a spent one-time token), with the tool its headers name
	// and no command.
	Refused func(endpoint, tool, command string, cred *kernel.Credential, err error)
	// Rate and Burst bound each agent's requests (0: unlimited).
	Rate  rate.Limit
	Burst int
	Logf  func(format string, args ...any)
	// Observe, when set, is told of every request refused before anything
	// ran (reason: "auth", "scope", "rate", "origin", "host", …).
	Observe func(endpoint, reason string)
	// BodyTimeout bounds reading a request's body (0: BodyTimeout).
	BodyTimeout time.Duration
}

// Handler serves every configured endpoint on one http.Handler.
type Handler struct {
	cfg      Config
	eps      map[string]*endpoint // namespace + "/" + endpoint
	mux      *http.ServeMux
	draining atomic.Bool
	ctx      context.Context // the owner's: sessions end with it
	// claims are the one-time tokens a request of this process is about
	// to spend (hash → its request): a concurrent request with the same
	// token is refused at once, not admitted only to be turned away for
	// the limits its twin's call now fills.
	claims sync.Map
	stop   context.CancelFunc
	now    func() time.Time // clock seam of the idle sessions' sweep
}

// admission is what a request was admitted with (its mcpcore Auth): its
// credential and the endpoint's OAuth settings of that moment.
type admission struct {
	cred  *kernel.Credential
	oauth *OAuthEndpoint
}

type endpoint struct {
	core *mcpcore.Endpoint
	cfg  Endpoint
	auth atomic.Pointer[endpointAuth]

	mu        sync.Mutex
	sessions  map[string]*agentSession // by agent
	lastSweep time.Time                // of idle sessions
}

// agentSession is one agent's session of an endpoint: its concurrency
// bounds (the template's, per agent), its legacy request ids in flight (the
// core's) and its rate limiter.
type agentSession struct {
	s   *mcpcore.Session
	lim *rate.Limiter
	// Guarded by the endpoint's mu: the requests using it now, and since
	// when none has.
	active    int
	idleSince time.Time
}

// An agent's session unused this long, with nothing running, is dropped
// (an identity provider's agents are as many as it issues names to); the
// sessions are looked over at most every sessionSweepEvery.
const (
	sessionIdle       = 10 * time.Minute
	sessionSweepEvery = time.Minute
)

// New prepares a Handler; Close ends it.
func New(cfg Config) *Handler {
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = BodyTimeout
	}
	h := &Handler{cfg: cfg, eps: map[string]*endpoint{}, mux: http.NewServeMux(), now: time.Now}
	h.ctx, h.stop = context.WithCancel(context.Background())
	for _, e := range cfg.Endpoints {
		e.Core.Transport = policy.TransportHTTP
		ep := &endpoint{cfg: e, sessions: map[string]*agentSession{}}
		ep.setAuth(e.HTTPAuth, e.OAuth)
		auth := e.Core.Authorize
		ep.cfg.Core.Authorize = func(req *mcpcore.Request, command, level string) (func() error, error) {
			var inner func() error
			if auth != nil {
				var err error
				if inner, err = auth(req, command, level); err != nil {
					return nil, err
				}
			}
			a, _ := req.Auth.(*admission)
			var cred *kernel.Credential
			if a != nil {
				cred = a.cred
			}
			refused := func(err error) error {
				cfg.Logf("refused a call of %s on endpoint %q by %s: %v", command, e.Core.Endpoint, logID(cred), err)
				if errors.Is(err, policy.ErrInsufficientScope) {
					h.observe(e.Core.Endpoint, "scope")
				} else {
					h.observe(e.Core.Endpoint, "auth")
				}
				if cfg.Refused != nil {
					tool, _ := req.Name()
					cfg.Refused(e.Core.Endpoint, tool, command, cred, err)
				}
				return err
			}
			var consume func() error
			var err error
			if cred != nil && cred.Kind == kernel.CredentialOAuth {
				// The settings it was admitted with: a publish since
				// then applies to the next request.
				err = authorizeOAuth(a.oauth, *cred, command, level)
			} else {
				consume, err = authorize(cfg.Credentials, cred, command, level)
			}
			if err != nil {
				return nil, refused(err)
			}
			if consume != nil {
				if other, taken := h.claims.LoadOrStore(cred.Hash, req); taken && other != req {
					return nil, refused(errClaimed)
				}
			}
			if inner == nil && consume == nil {
				return nil, nil
			}
			return func() error {
				if inner != nil {
					if err := inner(); err != nil {
						return err
					}
				}
				if consume != nil {
					if err := consume(); err != nil {
						return refused(err)
					}
				}
				return nil
			}, nil
		}
		ep.core = mcpcore.NewEndpoint(ep.cfg.Core)
		h.eps[e.Namespace+"/"+e.Core.Endpoint] = ep
	}
	h.mux.HandleFunc(PathPrefix+"{namespace}/{endpoint}", h.serveMCP)
	h.mux.HandleFunc("GET "+MetadataPrefix+PathPrefix+"{namespace}/{endpoint}", h.serveMetadata)
	h.mux.HandleFunc("OPTIONS "+MetadataPrefix+PathPrefix+"{namespace}/{endpoint}", h.serveMetadata)
	h.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { plain(w, http.StatusOK, "ok") })
	h.mux.HandleFunc("GET /readyz", h.ready)
	return h
}

func (h *Handler) ready(w http.ResponseWriter, r *http.Request) {
	if h.draining.Load() {
		plain(w, http.StatusServiceUnavailable, "draining")
		return
	}
	for _, ep := range h.eps {
		if _, err := ep.cfg.Core.Active(); err != nil && kernel.ErrorCode(err) != kernel.CodeNotFound {
			plain(w, http.StatusServiceUnavailable, "the store is unavailable")
			return
		}
	}
	plain(w, http.StatusOK, "ready")
}

// ServeHTTP checks Host and Origin on every request (DNS rebinding), then
// routes it. Nothing is redirected: a path that is not in its one clean,
// unescaped form is not found.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 {
		// Until its body is read, a request holds its connection at most
		// BodyTimeout, whoever sent it. One answered without reading it
		// (a refusal) is answered at once, then what of the body comes
		// within refusalLinger is read and dropped before the connection
		// closes: a client still writing its body would otherwise get a
		// reset that loses the answer, and one that withholds it waits
		// for nothing.
		rc := http.NewResponseController(w)
		rc.SetReadDeadline(time.Now().Add(h.cfg.BodyTimeout))
		if r.ProtoMajor == 1 {
			w.Header()["Connection"] = connectionClose
		}
		b := &body{ReadCloser: r.Body, rc: rc}
		r.Body = b
		defer func() {
			if b.eof {
				return
			}
			rc.Flush()
			rc.SetReadDeadline(time.Now().Add(min(refusalLinger, h.cfg.BodyTimeout)))
			io.CopyN(io.Discard, b, refusalDrain)
			rc.SetReadDeadline(time.Now())
		}()
	}
	if !h.hostAllowed(r.Host) {
		h.observe("", "host")
		plain(w, http.StatusForbidden, "forbidden: Host "+strconv.Quote(r.Host)+" is not served here (serve-http --allow-host)")
		return
	}
	if origins := r.Header.Values("Origin"); len(origins) > 0 && !isMetadata(r) {
		// A browser sends one Origin; several are refused outright, so no
		// value goes unchecked whichever one a proxy or a framework reads.
		if len(origins) > 1 {
			h.observe("", "origin")
			plain(w, http.StatusForbidden, "forbidden: more than one Origin header")
			return
		}
		if o := origins[0]; !h.originAllowed(o, r.Host) {
			h.observe("", "origin")
			plain(w, http.StatusForbidden, "forbidden: Origin "+strconv.Quote(o)+" is not allowed (serve-http --allow-origin)")
			return
		}
	}
	if p := r.URL.Path; p == "" || p[0] != '/' || path.Clean(p) != p || r.URL.RawPath != "" {
		http.NotFound(w, r)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// body is a request body that tells whether it was read to its end, and
// the response's controller, which clears the body's deadline once it is.
type body struct {
	io.ReadCloser
	rc  *http.ResponseController
	eof bool
}

// Header values set on every request, shared: net/http copies a handler's
// header before it writes it, and never changes a value in place.
var (
	connectionClose = []string{"close"}
	contentJSON     = []string{"application/json"}
)

func (b *body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

func (h *Handler) observe(endpoint, reason string) {
	if h.cfg.Observe != nil {
		h.cfg.Observe(endpoint, reason)
	}
}

var loopbackHosts = []string{"localhost", "127.0.0.1", "::1"}

func (h *Handler) hostAllowed(host string) bool {
	name := host
	if n, _, err := net.SplitHostPort(host); err == nil {
		name = n
	}
	name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
	if slices.Contains(loopbackHosts, strings.ToLower(name)) {
		return true
	}
	for _, a := range h.cfg.AllowHosts {
		if strings.EqualFold(a, host) || strings.EqualFold(a, name) {
			return true
		}
	}
	return false
}

func (h *Handler) originAllowed(origin, host string) bool {
	if slices.Contains(h.cfg.AllowOrigins, origin) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return strings.EqualFold(u.Host, host)
}

// serveMCP answers one MCP request. What precedes the call (admission,
// the body, its decoding) runs in functions of its own, so their frames
// are gone from the connection's goroutine while the call runs: its stack
// is whatever the deepest moment needs, and keeps that size until a
// collection (docs/performance.md).
func (h *Handler) serveMCP(w http.ResponseWriter, r *http.Request) {
	ep, cred, auth := h.admit(w, r)
	if ep == nil {
		return
	}
	as := ep.session(h, sessionKey(cred))
	defer ep.release(h, as)
	req, legacy, hdr := h.request(w, r, ep, as, cred)
	if req == nil {
		return
	}
	req.Auth = &admission{cred: cred, oauth: auth.oauth}
	if req.ID() == nil {
		as.s.HandleEra(req, nil, legacy, nil) // notifications/cancelled ends a legacy request
		w.WriteHeader(http.StatusAccepted)
		return
	}
	rep := newReply(r.Context())
	defer rep.cancel()
	defer h.claims.CompareAndDelete(cred.Hash, req) // spent by now, or free again
	// A call that may report progress answers on an event stream
	// (docs/http.md), even when no progress comes; anything else as JSON
	// unless a notification precedes its response.
	stream := req.Method() == "tools/call" && req.HasProgressToken()
	end := as.s.HandleEra(req, rep, legacy, hdr)
	defer end()
	h.write(w, r, rep, legacy, stream, auth.oauth)
}

// admit finds the request's endpoint and credential, or answers; a nil
// endpoint means it was answered.
func (h *Handler) admit(w http.ResponseWriter, r *http.Request) (*endpoint, *kernel.Credential, *endpointAuth) {
	ep := h.eps[r.PathValue("namespace")+"/"+r.PathValue("endpoint")]
	if ep == nil {
		http.NotFound(w, r)
		return nil, nil, nil
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		plain(w, http.StatusMethodNotAllowed, "method not allowed: MCP requests are POSTed (no GET stream, no sessions)")
		return nil, nil, nil
	}
	if h.draining.Load() {
		w.Header().Set("Retry-After", "1")
		plain(w, http.StatusServiceUnavailable, "the server is stopping")
		return nil, nil, nil
	}
	auth := ep.auth.Load()
	cred, ok := h.authenticate(w, r, ep, auth)
	if !ok {
		return nil, nil, nil
	}
	return ep, cred, auth
}

// request reads and decodes the body of an admitted request, or answers
// (a nil request): its agent's rate, its headers, its size.
func (h *Handler) request(w http.ResponseWriter, r *http.Request, ep *endpoint, as *agentSession, cred *kernel.Credential) (*mcpcore.Request, bool, *mcpcore.Headers) {
	if as.lim != nil {
		res := as.lim.Reserve()
		if d := res.Delay(); d > 0 {
			res.Cancel()
			h.observe(ep.cfg.Core.Endpoint, "rate")
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(d.Seconds()))))
			plain(w, http.StatusTooManyRequests, "too many requests for agent "+strconv.Quote(cred.Agent))
			return nil, false, nil
		}
	}
	body, ok := h.readBody(w, r)
	if !ok {
		return nil, false, nil
	}
	if len(bytes.TrimSpace(body)) == 0 {
		writeJSON(w, http.StatusBadRequest, mcpcore.AppendError(nil, nil, mcpcore.NewError(mcpcore.CodeParseError, "parse error: the request body is empty")))
		return nil, false, nil
	}
	req, id, rerr := mcpcore.Decode(body)
	if rerr != nil {
		writeJSON(w, http.StatusBadRequest, mcpcore.AppendError(nil, id, rerr))
		return nil, false, nil
	}
	if req == nil {
		w.WriteHeader(http.StatusAccepted) // a response from the client: nothing to answer
		return nil, false, nil
	}
	legacy := !mcpcore.IsModern(req)
	if legacy {
		if v := r.Header.Get("MCP-Protocol-Version"); v != "" && !mcpcore.IsLegacyVersion(v) {
			legacy = false // a modern request that lacks its _meta: the core says -32602
		}
	}
	var hdr *mcpcore.Headers
	if !legacy && req.ID() != nil {
		hdr = readHeaders(r)
	}
	return req, legacy, hdr
}

// readBody checks the body's declared type, encoding and size and reads
// it whole, or answers.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := parseMediaType(ct); err != nil || mt != "application/json" {
			plain(w, http.StatusUnsupportedMediaType, "unsupported media type: Content-Type must be application/json")
			return nil, false
		}
	} else {
		plain(w, http.StatusUnsupportedMediaType, "unsupported media type: Content-Type must be application/json")
		return nil, false
	}
	for _, ce := range r.Header.Values("Content-Encoding") {
		if !strings.EqualFold(strings.TrimSpace(ce), "identity") {
			plain(w, http.StatusUnsupportedMediaType, "unsupported media type: the body must not be encoded (no Content-Encoding)")
			return nil, false
		}
	}
	if !acceptable(r.Header.Values("Accept")) {
		plain(w, http.StatusNotAcceptable, "not acceptable: Accept must list application/json and text/event-stream")
		return nil, false
	}
	if r.ContentLength > mcpcore.MaxMessageBytes {
		plain(w, http.StatusRequestEntityTooLarge, "request too large: at most 1 MiB per message")
		return nil, false
	}
	rb := r.Body
	tracked, _ := rb.(*body)
	var body []byte
	var err error
	if r.ContentLength > 0 {
		// A declared length is within the bound already: exactly that
		// much is read, whatever the body holds beyond it.
		body = make([]byte, r.ContentLength)
		_, err = io.ReadFull(rb, body)
	} else {
		if r.ContentLength < 0 { // of unknown length (chunked)
			rb = http.MaxBytesReader(w, rb, mcpcore.MaxMessageBytes)
		}
		body, err = io.ReadAll(rb)
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			plain(w, http.StatusRequestEntityTooLarge, "request too large: at most 1 MiB per message")
			return nil, false
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			plain(w, http.StatusRequestTimeout, "request timeout: the body did not arrive in time")
		}
		return nil, false // the client went away
	}
	if r.ContentLength != 0 {
		// Read whole: the connection may serve the next request, and
		// stays open as long as the call takes.
		delete(w.Header(), "Connection")
		if tracked != nil {
			tracked.rc.SetReadDeadline(time.Time{})
		} else {
			http.NewResponseController(w).SetReadDeadline(time.Time{})
		}
	}
	return body, true
}

// authenticate finds the request's credential, or answers 401. The token
// itself goes no further than Credentials.Authenticate or the endpoint's
// verifier: on an OAuth endpoint a rukh_… token goes to Credentials only
// with httpAuth rukh+oauth, any other to the verifier.
func (h *Handler) authenticate(w http.ResponseWriter, r *http.Request, ep *endpoint, auth *endpointAuth) (*kernel.Credential, bool) {
	name := ep.cfg.Core.Endpoint
	if auth.httpAuth == policy.HTTPAuthNone && h.cfg.Loopback {
		c := kernel.Anonymous(name)
		return &c, true
	}
	token, ok := bearer(r)
	o := auth.oauth
	if isOAuth(auth.httpAuth) && (!ok || !strings.HasPrefix(token, "rukh_") || o == nil || !o.AcceptRukh) {
		return h.authenticateOAuth(w, r, ep, o, token, ok)
	}
	if !ok || h.cfg.Credentials == nil {
		h.refuseMissing(w, name, o)
		return nil, false
	}
	cred, err := h.cfg.Credentials.Authenticate(token)
	if err == nil && cred.Endpoint != name {
		err = h.otherEndpoint(name, &cred)
	}
	if err != nil {
		h.refuseToken(w, r, name, o, &cred, err)
		return nil, false
	}
	return &cred, true
}

// authenticateOAuth is authenticate on an endpoint with httpAuth oauth or
// rukh+oauth for any request but one with a Rukh token it accepts.
func (h *Handler) authenticateOAuth(w http.ResponseWriter, r *http.Request, ep *endpoint, o *OAuthEndpoint, token string, ok bool) (*kernel.Credential, bool) {
	name := ep.cfg.Core.Endpoint
	switch {
	case !ok:
		h.observe(name, "auth")
		if o == nil {
			oauthUnavailable(w, oauthRetryAfter, "the endpoint's identity provider is not configured yet; retry")
			return nil, false
		}
		unauthorizedOAuth(w, o, nil, "unauthorized: send Authorization: Bearer <token> with an access token of the identity provider its metadata names ("+o.MetadataURL+")")
		return nil, false
	case !strings.HasPrefix(token, "rukh_"):
		if o == nil {
			h.observe(name, "unavailable")
			oauthUnavailable(w, oauthRetryAfter, "the endpoint's identity provider is not configured yet; retry")
			return nil, false
		}
		return h.verify(w, r, ep, o, token)
	default: // o == nil || !o.AcceptRukh
		h.observe(name, "auth")
		h.cfg.Logf("refused a request on endpoint %q: a Rukh token, and its httpAuth is oauth", name)
		err := errors.New("this endpoint accepts only access tokens of its identity provider, not Rukh tokens")
		if o == nil {
			unauthorized(w, "unauthorized: "+err.Error())
		} else {
			unauthorizedOAuth(w, o, err, "unauthorized: "+err.Error())
		}
		return nil, false
	}
}

// refuseMissing answers a request without a bearer token (or with one
// where no credentials are kept).
func (h *Handler) refuseMissing(w http.ResponseWriter, name string, o *OAuthEndpoint) {
	h.observe(name, "auth")
	if o != nil {
		unauthorizedOAuth(w, o, nil, "unauthorized: send Authorization: Bearer <token> (an access token of the identity provider, or one of 'rukh agent add' or 'rukh agent token')")
		return
	}
	unauthorized(w, "unauthorized: send Authorization: Bearer <token> (the owner gives one with 'rukh agent add' or 'rukh agent token')")
}

// otherEndpoint refuses a token of another endpoint: as good as none here.
func (h *Handler) otherEndpoint(name string, cred *kernel.Credential) error {
	h.cfg.Logf("refused a request on endpoint %q: %s is agent %q's, for endpoint %q", name, cred.LogID(), cred.Agent, cred.Endpoint)
	return errOtherEndpoint
}

// refuseToken answers a request whose bearer token Credentials refused
// (err), or could not check.
func (h *Handler) refuseToken(w http.ResponseWriter, r *http.Request, name string, o *OAuthEndpoint, cred *kernel.Credential, err error) {
	if kernel.ErrorCode(err) == kernel.CodeUnavailable {
		// The store could not say: the token may be good, so no 401.
		h.cfg.Logf("refused a request on endpoint %q: %v", name, err)
		w.Header().Set("Retry-After", "1")
		plain(w, http.StatusServiceUnavailable, "the store is unavailable; retry")
		return
	}
	h.observe(name, "auth")
	if cred.Agent != "" && cred.Endpoint == name && h.cfg.Refused != nil {
		// A credential the store knows and refuses (a spent one-time
		// token replayed): the attempt is recorded against its agent,
		// with the tool its headers name; the body is never read.
		h.cfg.Refused(name, headerTool(r), "", cred, err)
	}
	if o != nil {
		unauthorizedOAuth(w, o, errors.New("the Rukh token is not valid for this endpoint"), "unauthorized: the bearer token is not valid for this endpoint")
		return
	}
	unauthorized(w, "unauthorized: the bearer token is not valid for this endpoint")
}

// headerTool is the tool a modern tools/call's Mcp-Name header names, ""
// for anything else or anything that cannot be a tool name.
func headerTool(r *http.Request) string {
	if m, _ := header(r, "Mcp-Method"); m != "tools/call" {
		return ""
	}
	v, _ := header(r, "Mcp-Name")
	name, ok := decodeHeaderValue(v)
	if !ok || len(name) > 128 {
		return ""
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c <= ' ' || c > '~' {
			return ""
		}
	}
	return name
}

var errOtherEndpoint = errors.New("a token for another endpoint")

func logID(c *kernel.Credential) string {
	if c == nil {
		return "no credential"
	}
	return "agent " + strconv.Quote(c.Agent) + " (" + c.LogID() + ")"
}

// acceptable reports whether an Accept header admits JSON or an event
// stream; no header admits anything.
func acceptable(values []string) bool {
	if len(values) == 0 {
		return true
	}
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			mt, _, _ := parseMediaType(strings.TrimSpace(part))
			switch mt {
			case "application/json", "text/event-stream", "*/*", "application/*", "text/*":
				return true
			}
		}
	}
	return false
}

// parseMediaType is mime.ParseMediaType without its allocations for a
// bare type, which is what clients send.
func parseMediaType(v string) (string, map[string]string, error) {
	switch v {
	case "application/json", "text/event-stream":
		return v, nil, nil
	}
	return mime.ParseMediaType(v)
}

// readHeaders reads the standard headers a modern request repeats of its
// body; the core checks them.
func readHeaders(r *http.Request) *mcpcore.Headers {
	var hdr mcpcore.Headers
	hdr.Method.Value, hdr.Method.Sent = header(r, "Mcp-Method")
	hdr.Version.Value, hdr.Version.Sent = header(r, "MCP-Protocol-Version")
	if v, ok := header(r, "Mcp-Name"); ok {
		hdr.Name.Sent = true
		hdr.Name.Value, ok = decodeHeaderValue(v)
		hdr.Name.Bad = !ok
	}
	return &hdr
}

// header is a single header value, trimmed of optional whitespace.
func header(r *http.Request, name string) (string, bool) {
	v := r.Header.Values(name)
	if len(v) != 1 {
		return "", false
	}
	return strings.TrimSpace(v[0]), true
}

// decodeHeaderValue undoes the =?base64?…?= encoding of non-ASCII values.
func decodeHeaderValue(v string) (string, bool) {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			return "", false
		}
	}
	if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") && len(v) >= len("=?base64??=") {
		b, err := base64.StdEncoding.DecodeString(v[len("=?base64?") : len(v)-2])
		if err != nil {
			return "", false
		}
		return string(b), true
	}
	return v, true
}

// write answers one request from its reply: the final response as JSON
// when it comes first, otherwise an event stream of the notifications and
// then the response. The caller going away cancels the request.
func (h *Handler) write(w http.ResponseWriter, r *http.Request, rep *reply, legacy, stream bool, o *OAuthEndpoint) {
	// Whichever way it ends (a select picks at random when the response
	// is queued as the caller goes), what it did not write is finished.
	defer rep.close()
	st := &sse{w: w}
	if stream && len(rep.final) == 0 {
		// Not answered at once (an error or a rejection stays JSON).
		if st.start() != nil {
			rep.cancel()
			return
		}
	}
	// The keep-alive ticks only once a stream has started: a JSON answer
	// (most requests, often queued before this runs) needs none.
	var ka *time.Ticker
	var kaC <-chan time.Time
	defer func() {
		if ka != nil {
			ka.Stop()
		}
	}()
	send := func(m *mcpcore.Message) bool {
		defer m.Finish()
		if m.Drop != nil && m.Drop.Load() {
			return true
		}
		if err := st.event(m.Bytes()); err != nil {
			rep.cancel()
			return false
		}
		return true
	}
	for {
		if st.started && ka == nil {
			ka = time.NewTicker(keepAliveEvery)
			kaC = ka.C
		}
		select {
		case m := <-rep.out:
			if !send(m) {
				return
			}
		case m := <-rep.final:
			for drained := false; !drained; {
				select {
				case n := <-rep.out:
					if !send(n) {
						m.Finish()
						return
					}
				default:
					drained = true
				}
			}
			h.final(w, st, m, legacy, o)
			return
		case <-kaC:
			if st.keepAlive() != nil {
				rep.cancel()
				return
			}
		case <-rep.ctx.Done(): // the client went away, or the stream did
			return
		}
	}
}

func (h *Handler) final(w http.ResponseWriter, st *sse, m mcpcore.Message, legacy bool, o *OAuthEndpoint) {
	defer m.Finish()
	if m.Drop != nil && m.Drop.Load() {
		return
	}
	if st.started {
		st.event(m.Bytes())
		return
	}
	if m.Refused != nil {
		if kernel.ErrorCode(m.Refused) == kernel.CodeUnavailable {
			w.Header().Set("Retry-After", "1")
			plain(w, http.StatusServiceUnavailable, "the store is unavailable; retry")
			return
		}
		if errors.Is(m.Refused, policy.ErrInsufficientScope) {
			msg := "forbidden: " + m.Refused.Error()
			if hint := kernel.ErrorHint(m.Refused); hint != "" {
				msg += "\nhint: " + hint
			}
			var sr *scopeRefusal
			switch {
			case errors.As(m.Refused, &sr) && o != nil:
				forbiddenOAuth(w, o, sr.scope, m.Refused, msg)
			default:
				forbiddenScope(w, msg)
			}
		} else if o != nil {
			unauthorizedOAuth(w, o, m.Refused, "unauthorized: "+m.Refused.Error())
		} else {
			unauthorized(w, "unauthorized: "+m.Refused.Error())
		}
		return
	}
	if m.Len() > mcpcore.MaxResponseBytes {
		h.cfg.Logf("mcp: dropping a %d-byte message over the response limit", m.Len())
		writeJSON(w, http.StatusInternalServerError, nil)
		return
	}
	status := http.StatusOK
	if !legacy {
		switch m.Code {
		case 0:
		case mcpcore.CodeMethodNotFound:
			status = http.StatusNotFound
		case mcpcore.CodeInternalError:
			status = http.StatusInternalServerError
		default:
			status = http.StatusBadRequest
		}
	}
	// In parts as the core framed it: a list page is written from the
	// catalogue's bytes.
	w.Header()["Content-Type"] = contentJSON
	w.Header().Set("Content-Length", strconv.Itoa(m.Len()))
	w.WriteHeader(status)
	m.WriteTo(w)
}

func writeJSON(w http.ResponseWriter, status int, data []byte) {
	w.Header()["Content-Type"] = contentJSON
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(status)
	w.Write(data)
}

// session is the agent's session of ep, made on first use; the request
// releases it when done.
func (ep *endpoint) session(h *Handler, agent string) *agentSession {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if as := ep.sessions[agent]; as != nil {
		as.active++
		return as
	}
	if now := h.now(); now.Sub(ep.lastSweep) >= sessionSweepEvery {
		ep.lastSweep = now
		for name, as := range ep.sessions {
			if as.active == 0 && now.Sub(as.idleSince) >= sessionIdle {
				if running, held := as.s.Running(); running == 0 && held == 0 {
					delete(ep.sessions, name)
					go as.s.Shutdown() // nothing runs: it only ends the session's context
				}
			}
		}
	}
	as := &agentSession{active: 1}
	if h.cfg.Rate > 0 {
		as.lim = rate.NewLimiter(h.cfg.Rate, max(h.cfg.Burst, 1))
	}
	as.s = ep.core.NewSession(h.ctx, mcpcore.SessionConfig{
		PerRequest: true,
		Spliced:    true,
		Caller: func(req *mcpcore.Request, c kernel.Caller) kernel.Caller {
			if a, ok := req.Auth.(*admission); ok && a.cred != nil {
				return a.cred.Caller(kernel.TransportHTTP, c.Subject)
			}
			return c
		},
	})
	ep.sessions[agent] = as
	return as
}

func (ep *endpoint) release(h *Handler, as *agentSession) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if as.active--; as.active == 0 {
		as.idleSince = h.now()
	}
}

// Drain stops admitting requests (503) and ends every listen stream with
// its final response; calls in flight go on. http.Server.Shutdown then
// waits for them.
func (h *Handler) Drain() {
	h.draining.Store(true)
	for _, ep := range h.eps {
		for _, as := range ep.all() {
			as.s.EndStreams()
		}
	}
}

// Close stops every call still running (unanswered) and waits for them.
func (h *Handler) Close() {
	h.draining.Store(true)
	h.stop()
	for _, ep := range h.eps {
		for _, as := range ep.all() {
			as.s.Shutdown()
		}
	}
}

func (ep *endpoint) all() []*agentSession {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	out := make([]*agentSession, 0, len(ep.sessions))
	for _, as := range ep.sessions {
		out = append(out, as)
	}
	return out
}

// Running is how many calls run now, over every endpoint and agent.
func (h *Handler) Running() int {
	n := 0
	for _, ep := range h.eps {
		for _, as := range ep.all() {
			r, _ := as.s.Running()
			n += r
		}
	}
	return n
}
