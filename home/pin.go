package home

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/rukh-dev/rukh/extpkg"
	"github.com/rukh-dev/rukh/kernel"
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
// on the CLI; kept by store stamp in servers, as of the stamp the call's
// lookup took, so a served call looks at the store once), two hold files (open, flock,
// two stats each; in a server, a flock and an fstat on the file its last
// call kept open) and one fingerprint check (one small read, an lstat per
// entry of the copy).

// PinCall pins one call of br resolved against revision (an id, "r7");
// untrusted is the store's set of untrusted releases (UntrustedReleases).
func (h *Home) PinCall(revision string, br *policy.BoundRelease, untrusted map[string]bool) (unpin func(), err error) {
	if untrusted[store.ReleaseRef(br.Digest, br.Development)] {
		return nil, kernel.Errorf(kernel.CodeDenied, "%s@%s is signed by a key that is no longer trusted, so it does not run", br.Name, br.Version).
			WithHint(UntrustedHint(br.Name))
	}
	var holds []func()
	unpin = func() {
		for _, release := range holds {
			release()
		}
	}
	if revision != "" {
		release, err := h.Store.Hold(store.HoldRevision, revision)
		if err != nil {
			return nil, err
		}
		holds = append(holds, release)
	}
	release, err := h.Store.Hold(store.HoldRelease, store.ReleaseRef(br.Digest, br.Development))
	if err != nil {
		unpin()
		return nil, err
	}
	holds = append(holds, release)
	// Checked under the hold: the copy cannot go between check and run.
	if err := h.CopyProblem(br.Name, br.Version, br.Digest, br.Development); err != nil {
		unpin()
		return nil, err
	}
	return unpin, nil
}

// CopyProblem reports why the copy of a release is not the one installed
// (changed, damaged or gone), with the fix as the hint; nil when it is.
func (h *Home) CopyProblem(name, version, digest string, dev bool) error {
	if err := h.materialise(digest, dev); err != nil {
		return err
	}
	err := extpkg.VerifyCopy(h.CopyDir(digest, dev), digest)
	if err == nil {
		return nil
	}
	if kernel.ErrorCode(err) == kernel.CodeInternal {
		return err
	}
	return kernel.Errorf(kernel.CodeConflict, "the installed copy of %s@%s was changed or damaged", name, version).Wrap(err).
		WithHint(RepairHint(dev))
}

// ProblemDetail is what CopyProblem found, without its headline.
func ProblemDetail(err error) string {
	var ke *kernel.Error
	if errors.As(err, &ke) && ke.Err != nil {
		return ke.Err.Error()
	}
	return err.Error()
}

// UntrustedHint says how the owner stops or repairs a release whose key
// is no longer trusted.
func UntrustedHint(name string) string {
	return "publish without it: rukh deactivate " + name + ", then rukh publish (or trust its publisher's key again with 'rukh trust add')"
}

// RepairHint says how the owner replaces a changed or damaged copy.
func RepairHint(dev bool) string {
	if dev {
		return "run 'rukh dev PATH' on the package again to replace it"
	}
	return "install the original package again ('rukh install PATH') to repair it"
}

// UntrustedReleases is the store's set of untrusted releases, read again
// only when the store changed since the last read: a server's calls pay a
// stamp read, not a store open.
func (h *Home) UntrustedReleases() (map[string]bool, error) {
	return h.UntrustedReleasesAt(nil)
}

// UntrustedReleasesAt is UntrustedReleases as of stamp at, one the caller
// took of h.Store for the same request (a served call's lookup): the
// request then looks at the store once. Nil takes a stamp now.
func (h *Home) UntrustedReleasesAt(at *store.Stamp) (map[string]bool, error) {
	c := &h.untrusted
	var st store.Stamp
	stamped := at != nil
	if stamped {
		st = *at
	} else {
		st, stamped = h.Store.Stamp()
	}
	c.mu.Lock()
	if c.ok && stamped && h.Store.Unchanged(c.stamp, st) {
		set := c.set
		c.mu.Unlock()
		return set, nil
	}
	c.mu.Unlock()
	set, err := readUntrusted(h.Store)
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

// readUntrusted reads the store's set of untrusted releases (tests count
// the reads).
var readUntrusted = (*store.Store).UntrustedReleases

// untrustedCache is what UntrustedReleases last read.
type untrustedCache struct {
	mu    sync.Mutex
	ok    bool
	stamp store.Stamp
	set   map[string]bool
}

// PinningInvoker pins each served call around the real invoker. A refusal
// is the call's execution_failed result; the client learns which release
// and how the owner fixes it, the owner's log gets the details.
type PinningInvoker struct {
	Home  *Home
	Inner kernel.Invoker
	Logf  func(format string, args ...any)
	// Pinned returns what the call running under ctx resolved: the
	// revision and the release (the serving core keeps it in the context),
	// and the stamp of h.Store its lookup found the revision current at
	// (nil: none), which the untrusted-release check is then made as of.
	Pinned func(ctx context.Context) (revision uint64, release *policy.BoundRelease, at *store.Stamp, ok bool)
}

func (p *PinningInvoker) Invoke(ctx context.Context, inv *kernel.Invocation) kernel.Result {
	revision, br, at, ok := p.Pinned(ctx)
	if !ok || br == nil {
		p.Logf("invocation %s: the call pinned no release", inv.ID)
		return kernel.Result{InvocationID: inv.ID, Outcome: kernel.ExecutionFailed, Reason: "internal error"}
	}
	untrusted, err := p.Home.UntrustedReleasesAt(at)
	var unpin func()
	if err == nil {
		unpin, err = p.Home.PinCall(store.RevisionID(revision), br, untrusted)
	}
	if err != nil {
		p.Logf("invocation %s refused: %v", inv.ID, err)
		reason := "internal error"
		switch kernel.ErrorCode(err) {
		case kernel.CodeInternal:
		case kernel.CodeUnavailable:
			reason = "the store is unavailable, so the call did not run; retry"
		case kernel.CodeDenied:
			reason = fmt.Sprintf("%s@%s is signed by a key the owner no longer trusts, so it does not run; the owner can %s",
				br.Name, br.Version, UntrustedHint(br.Name))
		default:
			reason = fmt.Sprintf("the installed copy of %s@%s was changed or damaged, so it does not run; the owner can %s",
				br.Name, br.Version, RepairHint(br.Development))
		}
		return kernel.Result{InvocationID: inv.ID, Outcome: kernel.ExecutionFailed, Reason: reason}
	}
	defer unpin()
	return p.Inner.Invoke(ctx, inv)
}

// RemoveRelease removes the record and the copy of r unless a running call
// holds the copy, in which case the refusal names who.
func (h *Home) RemoveRelease(r store.Release, remove func() error) error {
	err := h.Store.TryRemoveHeld(store.HoldRelease, r.Ref(), remove)
	var in *store.InUseError
	if errors.As(err, &in) {
		when := "it ends"
		if len(in.Holders) > 1 {
			when = "they end"
		}
		return kernel.Errorf(kernel.CodeConflict, "%s@%s is in use by %s", r.Name, r.Version, in.By()).
			WithHint("try again when " + when)
	}
	return err
}
