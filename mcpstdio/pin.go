package mcpstdio

import (
	"context"

	"github.com/rukh-dev/rukh/mcpcore"
)

// Pinned is what a tools/call resolved and runs (see mcpcore.Pinned).
type Pinned = mcpcore.Pinned

// PinnedOf returns what the call running under ctx pinned.
func PinnedOf(ctx context.Context) (Pinned, bool) { return mcpcore.PinnedOf(ctx) }

// Catalog is the launch endpoint's view of one revision (see mcpcore.Catalog).
type Catalog = mcpcore.Catalog

// Resolved is what a tools/call pins for its whole run (see mcpcore.Resolved).
type Resolved = mcpcore.Resolved

// DigestPages is Catalog.Digest for any catalog.
func DigestPages(c Catalog) ([32]byte, error) { return mcpcore.DigestPages(c) }
