//go:build !linux

package mcpstdio

import "io"

// pollableInput: in is read as it is here.
func pollableInput(in io.Reader) (io.Reader, func()) { return in, func() {} }
