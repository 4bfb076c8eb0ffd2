package mcpcore

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
)

// The launch binding (docs/design.md, Visibility). A serve-mcp process serves
// one endpoint under the namespace, subject and template it had when the
// process started (or, when nothing was published then, in the first revision
// that serves it). A later revision that changes the namespace or the
// subject, drops stdio from the endpoint's transports or removes the endpoint
// is refused by this process until it restarts: tools/list and tools/call
// answer an error. The revision before is not served instead: it is no longer
// what the owner published.

// RevisionTimeout bounds reading the active revision for a list or a call
// (docs/design.md, Limits: 30 s for a list or a call). server/discover reads
// nothing from the store, so it needs no bound of its own.
const RevisionTimeout = 30 * time.Second

// rpcFailure carries a JSON-RPC error out of a catalog callback.
type rpcFailure struct{ e *rpcError }

func (f rpcFailure) Error() string { return f.e.message }

// current calls fn with the active revision's catalog for the launch
// endpoint, once the launch binding admits it (n 0 and a nil catalog when
// nothing is published, or when the endpoint is not in it and nothing was
// bound yet), within RevisionTimeout. fn runs inside the store read; what
// it produces is the caller's only when current returns nil.
func (s *Session) current(fn func(n uint64, c Catalog) error) *rpcError {
	return s.currentFrom(fn, false)
}

// ErrNotCached is what a Peek catalog's method that would read the store
// returns: the request is then served by View.
var ErrNotCached = errors.New("not in what the last store read kept")

// currentFrom is current; peek says fn may first run on a Peek catalog
// (it must then be safe to run again, and pass ErrNotCached on as is):
// what the last read kept needs no store read, so neither a goroutine nor
// a timer to bound it.
func (s *Session) currentFrom(fn func(n uint64, c Catalog) error, peek bool) *rpcError {
	admitted := func(n uint64, c Catalog) error {
		if c != nil {
			if rerr := s.admit(n, c); rerr != nil {
				return rpcFailure{rerr}
			}
			if !c.HasEndpoint() && s.boundLaunch() == nil {
				return fn(0, nil)
			}
		}
		return fn(n, c)
	}
	if peek && s.cfg.Peek != nil {
		if ok, err := s.cfg.Peek(admitted); ok && !errors.Is(err, ErrNotCached) {
			return s.viewError(err)
		}
	}
	ch := make(chan error, 1)
	go func() { ch <- s.cfg.View(0, admitted) }()
	timer := time.NewTimer(RevisionTimeout)
	defer timer.Stop()
	select {
	case err := <-ch:
		return s.viewError(err)
	case <-timer.C:
		s.logf("mcp: reading the active revision took over %v; answering with an error", RevisionTimeout)
		return newError(codeInternalError, "the active revision did not load within 30 s; try again")
	case <-s.owner.Done():
		return newError(codeInternalError, "the server is stopping")
	}
}

// viewError is what a View's error answers.
func (s *Session) viewError(err error) *rpcError {
	if err == nil {
		return nil
	}
	if f, ok := err.(rpcFailure); ok {
		return f.e
	}
	s.logf("mcp: reading the active revision: %v", err)
	return newError(codeInternalError, "the active revision is unavailable")
}

func (ep *Endpoint) boundLaunch() *policy.Launch {
	ep.bmu.Lock()
	defer ep.bmu.Unlock()
	return ep.binding
}

// once runs f the first time it is called for revision n: the owner hears
// about a revision once per endpoint, however many sessions read it.
func (ep *Endpoint) once(n uint64, f func()) {
	if _, seen := ep.logged.LoadOrStore(n, struct{}{}); !seen {
		f()
	}
}

// admit checks the revision against the launch binding, fixing the binding
// at the first revision that serves the endpoint on the transport when none
// was read at start. What it refuses, it tells the owner once per revision.
func (ep *Endpoint) admit(n uint64, c Catalog) *rpcError {
	l := c.Launch()
	if !c.HasEndpoint() {
		l = nil
	}
	ep.bmu.Lock()
	b := ep.binding
	if b == nil && l != nil && l.Serves(ep.cfg.Transport) {
		fixed := *l
		fixed.Template = c.Template() // what the projection runs under
		ep.binding = &fixed
		b = ep.binding
	}
	ep.bmu.Unlock()

	name := strconv.Quote(ep.cfg.Endpoint)
	id := c.Revision()
	var client, owner string
	switch {
	case l == nil && b == nil:
		// Most likely a typo in --endpoint: serve no tools, say so.
		ep.once(n, func() {
			ep.logf("endpoint %s is not in the published revision %s (endpoints: %s); serving no tools", name, id, strings.Join(c.Endpoints(), ", "))
		})
		return nil
	case l == nil:
		base := fmt.Sprintf("the published revision %s has no endpoint %s, which this server was started for", id, name)
		client = base + "; restart the server for an endpoint the profile has"
		owner = fmt.Sprintf("%s (endpoints: %s); publish it again, or restart the server with another --endpoint", base, strings.Join(c.Endpoints(), ", "))
	case !l.Serves(ep.cfg.Transport):
		client = fmt.Sprintf("the published endpoint %s is not served on %s in revision %s", name, ep.cfg.Transport, id)
		owner = fmt.Sprintf("%s (its transports: %s); add %q to its transports and publish", client, strings.Join(l.Transports, ", "), ep.cfg.Transport)
	default:
		var changed []string
		if l.Namespace != b.Namespace {
			changed = append(changed, fmt.Sprintf("its namespace from %q to %q", b.Namespace, l.Namespace))
		}
		if l.Subject != b.Subject {
			changed = append(changed, fmt.Sprintf("its subject from %q to %q", b.Subject, l.Subject))
		}
		if changed == nil {
			return nil
		}
		client = fmt.Sprintf("the published endpoint %s changed %s in revision %s; restart the server to serve it", name, strings.Join(changed, " and "), id)
		owner = client + " (until then this server serves no revision)"
	}
	ep.once(n, func() { ep.logf("refusing revision %s: %s", id, owner) })
	return newError(codeInternalError, client)
}

// caller is who asks for a call through this server, from the launch
// binding (never from anything the client sends).
func (s *Session) caller(req *Request, b *policy.Launch) kernel.Caller {
	c := kernel.Caller{Transport: s.cfg.Transport, Endpoint: s.cfg.Endpoint, Subject: b.Subject}
	if s.scfg.Caller != nil {
		c = s.scfg.Caller(req, c)
	}
	return c
}
