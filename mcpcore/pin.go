package mcpcore

import (
	"context"

	"github.com/rukh-dev/rukh/policy"
)

// Pinned is what a tools/call resolved and runs: the revision it was
// resolved against and the release whose copy it runs. The Invoker finds it
// in the call's context, to hold both for the call's whole run.
type Pinned struct {
	Revision uint64
	Tool     string // the name the call was resolved by
	Release  *policy.BoundRelease
	// ReadAt is what the catalog the call was resolved in says of the
	// store it was read from (a ReadAtCatalog's ReadAt), for the
	// invoker's own checks of that store; nil when it says nothing.
	ReadAt any
}

// ReadAtCatalog is a Catalog that can say which state of its store it
// answers from. The core only carries the value from the lookup to the
// invoker (Pinned.ReadAt), so one request needs one look at the store.
type ReadAtCatalog interface {
	Catalog
	ReadAt() any
}

type pinnedKey struct{}

func withPinned(ctx context.Context, p Pinned) context.Context {
	return context.WithValue(ctx, pinnedKey{}, p)
}

// PinnedOf returns what the call running under ctx pinned.
func PinnedOf(ctx context.Context) (Pinned, bool) {
	p, ok := ctx.Value(pinnedKey{}).(Pinned)
	return p, ok
}
