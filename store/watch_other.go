//go:build !linux

package store

import "context"

// watchFile polls: this platform has no inotify.
func (s *Store) watchFile(ctx context.Context, ch chan<- struct{}) {
	poll(ctx, ch)
}
