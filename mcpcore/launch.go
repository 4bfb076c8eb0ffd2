package mcpcore

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
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

// revisionBinding is what one revision says about the launch endpoint.
type revisionBinding struct {
	id        string         // "r7"
	launch    *policy.Launch // nil: the revision's profile has no such endpoint
	endpoints []string       // every endpoint of the revision, for the owner's log
	logOnce   sync.Once      // the owner hears about a revision once
}

// RevisionTimeout bounds reading the active revision for a list or a call
// (SPEC §6: 30 s for discover or a list). server/discover reads nothing
// from the store, so it needs no bound of its own.
const RevisionTimeout = 30 * time.Second

// current returns the active revision the launch binding admits, nil when
// nothing is published (or the endpoint is not in it and nothing was bound
// yet), within RevisionTimeout. A load that takes longer keeps running and
// fills the cache for the next request.
func (s *Session) current() (*revision, *rpcError) {
	type loaded struct {
		rev  *revision
		rerr *rpcError
	}
	ch := make(chan loaded, 1)
	go func() {
		rev, rerr := s.load()
		ch <- loaded{rev, rerr}
	}()
	timer := time.NewTimer(RevisionTimeout)
	defer timer.Stop()
	select {
	case l := <-ch:
		if l.rerr != nil || l.rev == nil {
			return nil, l.rerr
		}
		if rerr := s.admit(l.rev); rerr != nil {
			return nil, rerr
		}
		return l.rev, nil
	case <-timer.C:
		s.logf("mcp: reading the active revision took over %v; answering with an error", RevisionTimeout)
		return nil, newError(codeInternalError, "the active revision did not load within 30 s; try again")
	case <-s.owner.Done():
		return nil, newError(codeInternalError, "the server is stopping")
	}
}

// load reads the active revision from the store, nil when nothing is
// published.
func (s *Session) load() (*revision, *rpcError) {
	n, err := s.cfg.Active()
	if err != nil {
		if kernel.ErrorCode(err) == kernel.CodeNotFound {
			return nil, nil
		}
		s.logf("mcp: reading the active revision: %v", err)
		return nil, newError(codeInternalError, "the active revision is unavailable")
	}
	if n == 0 {
		return nil, nil
	}
	r, err := s.cache.get(n)
	if err != nil {
		s.logf("mcp: loading revision %d: %v", n, err)
		return nil, newError(codeInternalError, "the active revision is unavailable")
	}
	return r, nil
}

// admit checks rev against the launch binding, fixing the binding at the
// first revision that serves the endpoint on stdio when none was read at
// start. What it refuses, it tells the owner once per revision.
func (s *Session) admit(rev *revision) *rpcError {
	rb := &rev.bound
	l := rb.launch
	if rev.proj == nil {
		l = nil
	}
	s.bmu.Lock()
	b := s.binding
	if b == nil && l != nil && l.Serves(s.cfg.Transport) {
		fixed := *l
		fixed.Template = rev.proj.Template // what the projection runs under
		s.binding = &fixed
		b = s.binding
	}
	s.bmu.Unlock()

	ep := strconv.Quote(s.cfg.Endpoint)
	var client, owner string
	switch {
	case l == nil && b == nil:
		// Most likely a typo in --endpoint: serve no tools, say so.
		rb.logOnce.Do(func() {
			s.logf("endpoint %s is not in the published revision %s (endpoints: %s); serving no tools", ep, rb.id, strings.Join(rb.endpoints, ", "))
		})
		return nil
	case l == nil:
		base := fmt.Sprintf("the published revision %s has no endpoint %s, which this server was started for", rb.id, ep)
		client = base + "; restart the server for an endpoint the profile has"
		owner = fmt.Sprintf("%s (endpoints: %s); publish it again, or restart the server with another --endpoint", base, strings.Join(rb.endpoints, ", "))
	case !l.Serves(s.cfg.Transport):
		client = fmt.Sprintf("the published endpoint %s is not served on %s in revision %s", ep, s.cfg.Transport, rb.id)
		owner = fmt.Sprintf("%s (its transports: %s); add %q to its transports and publish", client, strings.Join(l.Transports, ", "), s.cfg.Transport)
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
		client = fmt.Sprintf("the published endpoint %s changed %s in revision %s; restart the server to serve it", ep, strings.Join(changed, " and "), rb.id)
		owner = client + " (until then this server serves no revision)"
	}
	rb.logOnce.Do(func() { s.logf("refusing revision %s: %s", rb.id, owner) })
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
