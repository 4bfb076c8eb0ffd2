//go:build !linux

package store

import (
	"context"
	"time"
)

// watchFile polls: this platform has no inotify.
func (s *Store) watchFile(ctx context.Context, ch chan<- struct{}) {
	poll(ctx, ch)
}

// poll signals every PollInterval until ctx ends.
func poll(ctx context.Context, ch chan<- struct{}) {
	t := time.NewTicker(PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			signal(ch)
		}
	}
}
