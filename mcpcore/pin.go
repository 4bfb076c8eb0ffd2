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
