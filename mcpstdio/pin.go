package mcpstdio

import (
	"context"

	"github.com/rukh-dev/rukh/mcpcore"
)

// Pinned is what a tools/call resolved and runs (see mcpcore.Pinned).
type Pinned = mcpcore.Pinned

// PinnedOf returns what the call running under ctx pinned.
func PinnedOf(ctx context.Context) (Pinned, bool) { return mcpcore.PinnedOf(ctx) }
