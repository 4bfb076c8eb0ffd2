package serve

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
)

// serveAudit records an endpoint's calls: the invoker wrapper notes when
// each starts and which tool it was called as, and the post-call hook
// appends the record through a batching writer, off the call's path.
type serveAudit struct {
	inner    kernel.Invoker
	w        *store.AuditWriter
	endpoint string
	started  sync.Map // *kernel.Invocation → auditStart
}

type auditStart struct {
	at   time.Time
	tool string
}

func newServeAudit(inner kernel.Invoker, w *store.AuditWriter, endpoint string) *serveAudit {
	return &serveAudit{inner: inner, w: w, endpoint: endpoint}
}

func (s *serveAudit) Invoke(ctx context.Context, inv *kernel.Invocation) kernel.Result {
	st := auditStart{at: time.Now()}
	if pin, ok := mcpcore.PinnedOf(ctx); ok {
		st.tool = pin.Tool // the name the call was resolved by, in its revision
	}
	s.started.Store(inv, st)
	return s.inner.Invoke(ctx, inv)
}

// done appends the audit record of a finished invocation.
func (s *serveAudit) done(inv *kernel.Invocation, res kernel.Result) {
	v, ok := s.started.LoadAndDelete(inv)
	st, _ := v.(auditStart)
	rec := store.AuditRecord{Time: time.Now(), Transport: inv.Caller.Transport, Agent: inv.Caller.Agent,
		Credential: inv.Caller.Credential, Endpoint: s.endpoint, Tool: st.tool, InvocationID: inv.ID, Outcome: string(res.Outcome)}
	if inv.Caller.Issuer != "" {
		// An identity provider's token: who it named, as it named them.
		rec.Issuer, rec.Subject = inv.Caller.Issuer, inv.Caller.Subject
	}
	if inv.Command != nil {
		rec.Command = inv.Command.ID
	}
	if ok {
		rec.Time = st.at
		rec.DurationMs = time.Since(st.at).Milliseconds()
	}
	s.w.Add(rec)
}

// auditRefused is the audit outcome of a call its credential did not
// authorise: nothing ran.
const auditRefused = "refused"

// refused appends the audit record of an HTTP call its credential did not
// authorise (mcphttp.Config.Refused).
func refused(w *store.AuditWriter) func(endpoint, tool, command string, cred *kernel.Credential, err error) {
	return func(endpoint, tool, command string, cred *kernel.Credential, err error) {
		rec := store.AuditRecord{Time: time.Now(), Transport: kernel.TransportHTTP, Endpoint: endpoint,
			Tool: tool, Command: command, Outcome: auditRefused, Reason: refusalReason(err)}
		if cred != nil {
			c := cred.Caller(kernel.TransportHTTP, "")
			rec.Agent, rec.Credential, rec.Issuer = c.Agent, c.Credential, c.Issuer
			if c.Issuer != "" {
				rec.Subject = c.Subject
			}
		}
		w.Add(rec)
	}
}

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
