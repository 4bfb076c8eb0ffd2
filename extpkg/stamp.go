package extpkg

import (
	"errors"
	"io/fs"
	"syscall"
)

// pathError is an lstat failure that still answers errors.Is(err, fs.ErrNotExist).
type pathError struct {
	path string
	err  error
}

func (e *pathError) Error() string { return e.path + ": " + e.err.Error() }
func (e *pathError) Unwrap() error { return e.err }
func (e *pathError) Is(target error) bool {
	return target == fs.ErrNotExist && (errors.Is(e.err, syscall.ENOENT) || errors.Is(e.err, syscall.ENOTDIR))
}
