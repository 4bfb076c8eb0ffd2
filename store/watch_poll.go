//go:build (linux && rukh_portable) || !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package store

import "errors"

// watchKind names how the store file is watched here: by reading it every
// PollInterval. A rukh_portable build on Linux takes this path too, so that
// the path other platforms fall back to is tested.
const watchKind = "poll"

func openWatch(string) (eventSource, error) {
	return nil, errors.New("no file notifications on this platform")
}
