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
// The bbolt backend waits for the platform's file notifications on the
// home's store file (inotify on Linux, kqueue on macOS and the BSDs) and
// reads the active pointer only then; where there are none, or while the
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

// An eventSource is one platform's notifications about the store file in
// the home. next blocks until something happened and says whether the store
// file may have changed and whether the watch has ended (the home or the
// store file was moved, removed or replaced, an error, or stop); once it
// has ended it has released what it held and is not called again. stop may
// be called at any time, more than once, from another goroutine, and makes
// next end.
type eventSource interface {
	next() (changed, ended bool)
	stop()
}

// watchFile signals ch when the store file in the home may have changed,
// until ctx ends.
func (s *Store) watchFile(ctx context.Context, ch chan<- struct{}) {
	watchLoop(ctx, func() (eventSource, error) { return openWatch(s.home) }, PollInterval, ch)
}

// watchLoop follows the sources open hands out, opening another when one
// ends. While open fails (the home is missing, the platform has no
// notifications, or they are exhausted) it signals every interval, trying
// open again each time.
func watchLoop(ctx context.Context, open func() (eventSource, error), interval time.Duration, ch chan<- struct{}) {
	for ctx.Err() == nil {
		src, err := open()
		if err != nil {
			t := time.NewTimer(interval)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			signal(ch)
			continue
		}
		// A write between the caller's last read and the watch being in
		// place would otherwise go unnoticed.
		signal(ch)
		follow(ctx, src, ch)
		signal(ch) // the watch ended: read again, then watch again
	}
}

// follow signals ch for each change src reports until it ends, stopping
// it when ctx ends.
func follow(ctx context.Context, src eventSource, ch chan<- struct{}) {
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			src.stop()
		case <-done:
		}
	}()
	for {
		changed, ended := src.next()
		if changed {
			signal(ch)
		}
		if ended {
			return
		}
	}
}
