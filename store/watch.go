package store

import (
	"context"
	"sync/atomic"
	"time"
)

// PollInterval is how often WatchActive reads the active revision when the
// platform offers no file notifications (or the home does not exist yet).
const PollInterval = time.Second

// watchReads counts WatchActive's reads of the active pointer (tests).
var watchReads atomic.Int64

// retryInterval paces another read after one failed (the store was busy).
const retryInterval = time.Second

// WatchActive calls fn with the active revision number (0: nothing
// published) once at the start and then after every change it observes,
// until ctx ends; it returns when ctx ends and never calls fn concurrently.
// It reports numbers, not bytes, so a backend that watches a remote head
// (etcd) can implement the same contract. fn may be called for a number it
// saw before only if the store went back to it, which never happens.
//
// The bbolt backend waits on inotify for writes to the home's store file
// (Linux) and reads the active pointer only then; elsewhere, or while the
// home does not exist, it reads it every PollInterval.
func (s *Store) WatchActive(ctx context.Context, fn func(active uint64)) {
	changed := make(chan struct{}, 1)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	watcherDone := make(chan struct{})
	go func() {
		defer close(watcherDone)
		if e, ok := s.be.(sharedBackend); ok {
			e.watch(wctx, changed)
			return
		}
		s.watchFile(wctx, changed)
	}()
	defer func() { stop(); <-watcherDone }()

	var last uint64
	known := false
	var retry *time.Timer
	for {
		var retryC <-chan time.Time
		watchReads.Add(1)
		if n, err := s.Active(); err != nil {
			if retry == nil {
				retry = time.NewTimer(retryInterval)
			} else {
				retry.Reset(retryInterval)
			}
			retryC = retry.C
		} else if !known || n != last {
			known, last = true, n
			fn(n)
		}
		select {
		case <-ctx.Done():
			if retry != nil {
				retry.Stop()
			}
			return
		case <-changed:
		case <-retryC:
		}
	}
}

// signal records a possible change without blocking: one pending signal
// covers any number of writes.
func signal(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
