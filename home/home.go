// Package home owns the owner's use cases over one Rukh home: the store
// and the release copies kept beside it. It installs packages and checks
// their trust, runs dev mode, builds and commits publish and rollback
// candidates, reads bindings back from revisions, makes, shares and
// materialises release copies, pins what a call runs, keeps served
// invocations' diagnostics, and copies a store into another. Its methods
// return values and reports and never print: the CLI (commands) and the
// serving processes decide what a person or an agent sees.
//
// home imports kernel, store, policy and extpkg; it never imports
// urfave/cli, mcpcore, a transport (mcpstdio, mcphttp) or commands.
package home

import (
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
)

// Home is one Rukh home as the use cases see it. Its fields are seams:
// tests set them directly.
type Home struct {
	Store  *store.Store
	Runner *kernel.Runner
	Env    func(string) string

	untrusted untrustedCache // a server's view of the untrusted releases
	swept     SweepReport    // what this process's sweeps did, for Doctor
}
