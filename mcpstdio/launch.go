package mcpstdio

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
)

// The launch binding (SPEC §6). A serve-mcp process serves one endpoint
// under the namespace, subject and template it had when the process started
// (or, when nothing was published then, in the first revision that serves
// it). A later revision that changes the namespace or the subject, drops
// stdio from the endpoint's transports or removes the endpoint is refused
// by this process until it restarts: tools/list and tools/call answer an
// error. The revision before is not served instead: it is no longer what
// the owner published.

// revisionTimeout bounds reading the active revision for a list or a call
// (SPEC §6: 30 s for discover or a list). server/discover reads nothing
// from the store, so it needs no bound of its own.
const revisionTimeout = 30 * time.Second

// rpcFailure carries a JSON-RPC error out of a catalog callback.
type rpcFailure struct{ e *rpcError }

func (f rpcFailure) Error() string { return f.e.message }

// current calls fn with the active revision's catalog for the launch
// endpoint, once the launch binding admits it (n 0 and a nil catalog when
// nothing is published, or when the endpoint is not in it and nothing was
// bound yet), within revisionTimeout. fn runs inside the store read; what
// it produces is the caller's only when current returns nil.
func (s *server) current(fn func(n uint64, c Catalog) error) *rpcError {
	ch := make(chan error, 1)
	go func() {
		ch <- s.cfg.View(0, func(n uint64, c Catalog) error {
			if c != nil {
				if rerr := s.admit(n, c); rerr != nil {
					return rpcFailure{rerr}
				}
				if !c.HasEndpoint() && s.boundLaunch() == nil {
					return fn(0, nil)
				}
			}
			return fn(n, c)
		})
	}()
	timer := time.NewTimer(revisionTimeout)
	defer timer.Stop()
	select {
	case err := <-ch:
		if err == nil {
			return nil
		}
		if f, ok := err.(rpcFailure); ok {
			return f.e
		}
		s.logf("mcp: reading the active revision: %v", err)
		return newError(codeInternalError, "the active revision is unavailable")
	case <-timer.C:
		s.logf("mcp: reading the active revision took over %v; answering with an error", revisionTimeout)
		return newError(codeInternalError, "the active revision did not load within 30 s; try again")
	case <-s.owner.Done():
		return newError(codeInternalError, "the server is stopping")
	}
}

func (s *server) boundLaunch() *policy.Launch {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.binding
}

// once runs f the first time it is called for revision n: the owner hears
// about a revision once.
func (s *server) once(n uint64, f func()) {
	if _, seen := s.logged.LoadOrStore(n, struct{}{}); !seen {
		f()
	}
}

// admit checks the revision against the launch binding, fixing the binding
// at the first revision that serves the endpoint on stdio when none was
// read at start. What it refuses, it tells the owner once per revision.
func (s *server) admit(n uint64, c Catalog) *rpcError {
	l := c.Launch()
	if !c.HasEndpoint() {
		l = nil
	}
	s.mu.Lock()
	b := s.binding
	if b == nil && l != nil && l.Serves(policy.TransportStdio) {
		fixed := *l
		fixed.Template = c.Template() // what the projection runs under
		s.binding = &fixed
		b = s.binding
	}
	s.mu.Unlock()

	ep := strconv.Quote(s.cfg.Endpoint)
	id := c.Revision()
	var client, owner string
	switch {
	case l == nil && b == nil:
		// Most likely a typo in --endpoint: serve no tools, say so.
		s.once(n, func() {
			s.logf("endpoint %s is not in the published revision %s (endpoints: %s); serving no tools", ep, id, strings.Join(c.Endpoints(), ", "))
		})
		return nil
	case l == nil:
		base := fmt.Sprintf("the published revision %s has no endpoint %s, which this server was started for", id, ep)
		client = base + "; restart the server for an endpoint the profile has"
		owner = fmt.Sprintf("%s (endpoints: %s); publish it again, or restart the server with another --endpoint", base, strings.Join(c.Endpoints(), ", "))
	case !l.Serves(policy.TransportStdio):
		client = fmt.Sprintf("the published endpoint %s is not served on stdio in revision %s", ep, id)
		owner = fmt.Sprintf("%s (its transports: %s); add \"stdio\" to its transports and publish", client, strings.Join(l.Transports, ", "))
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
		client = fmt.Sprintf("the published endpoint %s changed %s in revision %s; restart the server to serve it", ep, strings.Join(changed, " and "), id)
		owner = client + " (until then this server serves no revision)"
	}
	s.once(n, func() { s.logf("refusing revision %s: %s", id, owner) })
	return newError(codeInternalError, client)
}

// caller is who asks for a call through this server, from the launch
// binding (never from anything the client sends).
func (s *server) caller(b *policy.Launch) kernel.Caller {
	return kernel.Caller{Transport: kernel.TransportStdio, Endpoint: s.cfg.Endpoint, Subject: b.Subject}
}
