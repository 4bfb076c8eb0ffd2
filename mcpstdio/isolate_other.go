//go:build !unix

package mcpstdio

import (
	"errors"
	"os"
)

// IsolateStdout is only implemented on unix; elsewhere the caller must keep
// every other writer off stdout itself.
func IsolateStdout() (*os.File, error) {
	return nil, errors.New("mcpstdio: stdout isolation is not supported on this platform")
}
