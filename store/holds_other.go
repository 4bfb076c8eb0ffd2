//go:build !unix

package store

import "os"

// Without flock a hold is only its file: nothing is refused.
func lockHold(dir, path string, exclusive bool) (*os.File, error) { return openHold(dir, path) }

func holders(*os.File) []Holder { return nil }
