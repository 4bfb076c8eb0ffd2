//go:build !unix

package notes

import (
	"context"
	"errors"
)

func (s *Store) lock(ctx context.Context, exclusive bool) (func(), error) {
	return nil, errors.New("file locking is not supported on this system")
}
