package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/rukh-dev/rukh/extpkg"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcpstdio"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
)

// Every call, on the CLI and over MCP, pins what it runs from before it
// starts: it holds the revision it was resolved against and the release
// copy (so neither uninstall nor revision pruning, in any process, removes
// them until the call ends), then checks the copy against the fingerprint
// taken at install (so a copy changed since then never runs). A release
// whose signing key is no longer trusted never runs either. Cost per
// call: one lookup in the set of untrusted releases (read with the route
// on the CLI, kept by store stamp in servers), two hold files (open, flock,
// two stats each) and one fingerprint check (one small read, an lstat per
// entry of the copy).

// pinCall pins one call of br resolved against revision (an id, "r7");
// untrusted is the store's set of untrusted releases (UntrustedReleases).
func (a *app) pinCall(revision string, br *policy.BoundRelease, untrusted map[string]bool) (unpin func(), err error) {
	if untrusted[store.ReleaseRef(br.Digest, br.Development)] {
		return nil, kernel.Errorf(kernel.CodeDenied, "%s@%s is signed by a key that is no longer trusted, so it does not run", br.Name, br.Version).
			WithHint(untrustedHint(br.Name))
	}
	var holds []func()
	unpin = func() {
		for _, release := range holds {
			release()
		}
	}
	if revision != "" {
		release, err := a.store.Hold(store.HoldRevision, revision)
		if err != nil {
			return nil, err
		}
		holds = append(holds, release)
	}
	release, err := a.store.Hold(store.HoldRelease, store.ReleaseRef(br.Digest, br.Development))
	if err != nil {
		unpin()
		return nil, err
	}
	holds = append(holds, release)
	// Checked under the hold: the copy cannot go between check and run.
	if err := a.copyProblem(br.Name, br.Version, br.Digest, br.Development); err != nil {
		unpin()
		return nil, err
	}
	return unpin, nil
}

// copyProblem reports why the copy of a release is not the one installed
// (changed, damaged or gone), with the fix as the hint; nil when it is.
func (a *app) copyProblem(name, version, digest string, dev bool) error {
	if err := a.materialise(digest, dev); err != nil {
		return err
	}
	err := extpkg.VerifyCopy(a.copyDir(digest, dev), digest)
	if err == nil {
		return nil
	}
	if kernel.ErrorCode(err) == kernel.CodeInternal {
		return err
	}
	return kernel.Errorf(kernel.CodeConflict, "the installed copy of %s@%s was changed or damaged", name, version).Wrap(err).
		WithHint(repairHint(dev))
}

// problemDetail is what copyProblem found, without its headline.
func problemDetail(err error) string {
	var ke *kernel.Error
	if errors.As(err, &ke) && ke.Err != nil {
		return ke.Err.Error()
	}
	return err.Error()
}

func untrustedHint(name string) string {
	return "publish without it: rukh deactivate " + name + ", then rukh publish (or trust its publisher's key again with 'rukh trust add')"
}

// untrustedReleases is the store's set of untrusted releases, read again
// only when the store changed since the last read: a server's calls pay a
// stamp read, not a store open.
func (a *app) untrustedReleases() (map[string]bool, error) {
	c := &a.untrusted
	st, stamped := a.store.Stamp()
	c.mu.Lock()
	if c.ok && stamped && a.store.Unchanged(c.stamp, st) {
		set := c.set
		c.mu.Unlock()
		return set, nil
	}
	c.mu.Unlock()
	set, err := a.store.UntrustedReleases()
	if err != nil {
		return nil, err
	}
	if stamped {
		c.mu.Lock()
		c.stamp, c.set, c.ok = st, set, true
		c.mu.Unlock()
	}
	return set, nil
}

// untrustedCache is what untrustedReleases last read.
type untrustedCache struct {
	mu    sync.Mutex
	ok    bool
	stamp store.Stamp
	set   map[string]bool
}

func repairHint(dev bool) string {
	return yesno(dev, "run 'rukh dev PATH' on the package again to replace it",
		"install the original package again ('rukh install PATH') to repair it")
}

// pinCLI pins a CLI call of bc and returns its release directory. A refusal
// is the call's execution_failed outcome (exit 3); under --output json its
// envelope is printed too.
func (a *app) pinCLI(t cliTarget, bc *policy.BoundCommand, output string) (dir string, unpin func(), err error) {
	if dir, err = t.releaseDir(bc); err != nil {
		return "", nil, err
	}
	name, version, _ := strings.Cut(bc.Release, "@")
	br := &policy.BoundRelease{Name: name, Version: version, Digest: bc.Digest, Development: bc.Development}
	if unpin, err = a.pinCall(t.revision, br, t.untrusted); err != nil {
		if output == "json" {
			_ = printJSON(a.stdout, kernel.Result{InvocationID: kernel.NewInvocationID(), Outcome: kernel.ExecutionFailed, Reason: err.Error()})
		}
		return "", nil, &exitError{code: outcomeExit(kernel.ExecutionFailed), outcome: string(kernel.ExecutionFailed), err: err}
	}
	return dir, unpin, nil
}

// pinningInvoker pins each serve-mcp call (see mcpcore.PinnedOf) around
// the real invoker. A refusal is the call's execution_failed result; the
// client learns which release and how the owner fixes it, the owner's log
// gets the details.
type pinningInvoker struct {
	a     *app
	inner kernel.Invoker
	logf  func(format string, args ...any)
}

func (p *pinningInvoker) Invoke(ctx context.Context, inv *kernel.Invocation) kernel.Result {
	pin, ok := mcpstdio.PinnedOf(ctx)
	if !ok || pin.Release == nil {
		p.logf("invocation %s: the call pinned no release", inv.ID)
		return kernel.Result{InvocationID: inv.ID, Outcome: kernel.ExecutionFailed, Reason: "internal error"}
	}
	br := pin.Release
	untrusted, err := p.a.untrustedReleases()
	var unpin func()
	if err == nil {
		unpin, err = p.a.pinCall(store.RevisionID(pin.Revision), br, untrusted)
	}
	if err != nil {
		p.logf("invocation %s refused: %v", inv.ID, err)
		reason := "internal error"
		switch kernel.ErrorCode(err) {
		case kernel.CodeInternal:
		case kernel.CodeUnavailable:
			reason = "the store is unavailable, so the call did not run; retry"
		case kernel.CodeDenied:
			reason = fmt.Sprintf("%s@%s is signed by a key the owner no longer trusts, so it does not run; the owner can %s",
				br.Name, br.Version, untrustedHint(br.Name))
		default:
			reason = fmt.Sprintf("the installed copy of %s@%s was changed or damaged, so it does not run; the owner can %s",
				br.Name, br.Version, repairHint(br.Development))
		}
		return kernel.Result{InvocationID: inv.ID, Outcome: kernel.ExecutionFailed, Reason: reason}
	}
	defer unpin()
	return p.inner.Invoke(ctx, inv)
}

// removeRelease removes the record and the copy of r unless a running call
// holds the copy, in which case the refusal names who.
func (a *app) removeRelease(r store.Release, remove func() error) error {
	err := a.store.TryRemoveHeld(store.HoldRelease, r.Ref(), remove)
	var in *store.InUseError
	if errors.As(err, &in) {
		return kernel.Errorf(kernel.CodeConflict, "%s@%s is in use by %s", r.Name, r.Version, in.By()).
			WithHint("try again when " + yesno(len(in.Holders) > 1, "they end", "it ends"))
	}
	return err
}
