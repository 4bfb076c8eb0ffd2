//go:build unix && !linux

package store

import "os"

// holders is nil here: macOS and the BSDs keep no list of flock holders a
// process can read, so a refusal says the thing is in use without naming
// who uses it.
func holders(*os.File) []Holder { return nil }
