package serve

import (
	"context"
	"time"

	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
)

// process is what every endpoint of one serving process shares: the home,
// the log, the audit writer and the bound on store opens.
type process struct {
	h       *home.Home
	version string // the server version told to clients
	logf    func(format string, args ...any)
	aw      *store.AuditWriter
	reads   storeReads
}

func newProcess(h *home.Home, version string, logf func(string, ...any)) *process {
	return &process{h: h, version: version, logf: logf, reads: newStoreReads()}
}

// endpoint assembles the serving stack of one endpoint, the same on both
// transports: every call pins what it runs (home.PinningInvoker), is
// audited, and leaves its diagnostics in the home. view is the endpoint's
// catalogue; wrap, when set, wraps the audited invoker (serve-http's
// metrics). The task host is added by startTasks.
func (p *process) endpoint(endpoint string, launch *policy.Launch, view *catalogCache,
	secret []byte, wrap func(kernel.Invoker) kernel.Invoker) mcpcore.Config {
	audit := newServeAudit(&home.PinningInvoker{Home: p.h, Inner: p.h.Runner, Logf: p.logf, Pinned: pinnedOf}, p.aw, endpoint)
	var inv kernel.Invoker = audit
	if wrap != nil {
		inv = wrap(audit)
	}
	return mcpcore.Config{
		Endpoint:      endpoint,
		Launch:        launch,
		ServerName:    "rukh",
		ServerVersion: p.version,
		Active:        p.h.Store.Active,
		View:          view.view,
		Peek:          view.peek,
		Watch:         p.h.Store.WatchActive,
		Secret:        secret,
		Invoker:       inv,
		Diagnostics: func(inv *kernel.Invocation, res kernel.Result) {
			audit.done(inv, res)
			if err := p.h.SaveDiagnostics(endpoint, inv, res); err != nil {
				p.logf("diagnostics of %s were lost: %v", inv.ID, err)
			}
		},
		// the audit record is queued, and nothing is saved of a quiet success
		Quick: home.QuietDiagnostics,
		Logf:  p.logf,
	}
}

// pinnedOf is what the serving core pinned for the call under ctx, for
// home.PinningInvoker, with the stamp its lookup was current at (nil: none).
func pinnedOf(ctx context.Context) (revision uint64, release *policy.BoundRelease, at *store.Stamp, ok bool) {
	pin, ok := mcpcore.PinnedOf(ctx)
	at, _ = pin.ReadAt.(*store.Stamp)
	return pin.Revision, pin.Release, at, ok
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
