package store

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// fakeSource is an eventSource the test drives: each value sent on news is
// what one next returns.
type fakeSource struct {
	news    chan [2]bool
	once    sync.Once
	stopped chan struct{}
}

func newFakeSource() *fakeSource {
	return &fakeSource{news: make(chan [2]bool), stopped: make(chan struct{})}
}

func (f *fakeSource) next() (changed, ended bool) {
	select {
	case n := <-f.news:
		return n[0], n[1]
	case <-f.stopped:
		return false, true
	}
}

func (f *fakeSource) stop() { f.once.Do(func() { close(f.stopped) }) }

// The loop every platform shares: polling while no watch can be set up,
// a read on every change a watch reports, a read when a watch is set up
// and when it ends, and a clean stop.
func TestWatchLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ch := make(chan struct{}, 100) // counts signals instead of merging them
		taken := func() int {
			synctest.Wait()
			n := len(ch)
			for range n {
				<-ch
			}
			return n
		}
		var opens atomic.Int32
		var failing atomic.Bool
		failing.Store(true)
		srcs := make(chan *fakeSource, 10)
		open := func() (eventSource, error) {
			opens.Add(1)
			if failing.Load() {
				return nil, errors.New("no home yet")
			}
			s := newFakeSource()
			srcs <- s
			return s, nil
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			defer close(done)
			watchLoop(ctx, open, time.Second, ch)
		}()

		if n := taken(); n != 0 || opens.Load() != 1 {
			t.Fatalf("before the first tick: %d signals, %d opens; want 0, 1", n, opens.Load())
		}
		time.Sleep(time.Second)
		if n := taken(); n != 1 || opens.Load() != 2 {
			t.Fatalf("after a tick without a watch: %d signals, %d opens; want 1, 2", n, opens.Load())
		}
		failing.Store(false)
		time.Sleep(time.Second)
		if n := taken(); n != 2 {
			t.Fatalf("tick, then the watch set up: %d signals; want 2 (the tick and the catch-up)", n)
		}
		src := <-srcs
		// Idle, a watch reads nothing, however long.
		time.Sleep(time.Hour)
		if n := taken(); n != 0 {
			t.Fatalf("an idle watch signalled %d times", n)
		}
		src.news <- [2]bool{false, false}
		if n := taken(); n != 0 {
			t.Fatalf("events that change nothing signalled %d times", n)
		}
		for range 3 {
			src.news <- [2]bool{true, false}
		}
		if n := taken(); n != 3 {
			t.Fatalf("3 changes: %d signals", n)
		}
		// The home moved: read, then watch again (and catch up).
		src.news <- [2]bool{false, true}
		if n := taken(); n != 2 || opens.Load() != 4 {
			t.Fatalf("the watch ended: %d signals, %d opens; want 2, 4", n, opens.Load())
		}
		src = <-srcs
		cancel()
		<-done
		select {
		case <-src.stopped:
		default:
			t.Fatal("the context ended but the watch was not stopped")
		}
		if len(srcs) != 0 {
			t.Fatal("a watch was opened after the context ended")
		}
	})
}

// The kqueue decoder, over events as macOS and FreeBSD report them.
func TestVnodeNews(t *testing.T) {
	w := vnodeWatch{dir: 5, file: 6, wake: 7, hasFile: true}
	noFile := vnodeWatch{dir: 5, wake: 7}
	const add, clear = 0x1, 0x20
	ev := func(ident uint64, fflags uint32) vnodeEvent {
		return vnodeEvent{ident: ident, flags: add | clear, fflags: fflags}
	}
	for _, tc := range []struct {
		name             string
		w                vnodeWatch
		evs              []vnodeEvent
		replaced         bool
		changed, ended   bool
		wantReplacedCall bool
	}{
		{name: "a commit writes the store file", w: w, evs: []vnodeEvent{ev(6, noteWrite)}, changed: true},
		{name: "the store file grows", w: w, evs: []vnodeEvent{ev(6, noteExtend|noteWrite)}, changed: true},
		{name: "the store file is replaced by a rename", w: w, evs: []vnodeEvent{ev(6, noteDelete), ev(5, noteWrite)}, replaced: true, changed: true, ended: true},
		{name: "the store file is renamed away", w: w, evs: []vnodeEvent{ev(6, noteRename)}, changed: true, ended: true},
		{name: "the store file's volume is revoked", w: w, evs: []vnodeEvent{ev(6, noteRevoke)}, changed: true, ended: true},
		{name: "another entry in the home", w: w, evs: []vnodeEvent{ev(5, noteWrite)}, wantReplacedCall: true},
		{name: "the store file appears", w: noFile, evs: []vnodeEvent{ev(5, noteWrite)}, replaced: true, changed: true, ended: true, wantReplacedCall: true},
		{name: "an unrelated entry before the store file exists", w: noFile, evs: []vnodeEvent{ev(5, noteWrite)}, wantReplacedCall: true},
		{name: "the home is removed", w: w, evs: []vnodeEvent{ev(5, noteDelete)}, changed: true, ended: true},
		{name: "the home is moved", w: noFile, evs: []vnodeEvent{ev(5, noteRename)}, changed: true, ended: true},
		{name: "stop", w: w, evs: []vnodeEvent{{ident: 7, flags: add | 0x8000}}, ended: true},
		{name: "an error", w: w, evs: []vnodeEvent{{ident: 6, flags: evError}}, ended: true},
		{name: "a descriptor number left from no store file", w: noFile, evs: []vnodeEvent{ev(0, noteWrite)}},
		{name: "a write then stop", w: w, evs: []vnodeEvent{ev(6, noteWrite), {ident: 7, flags: add}}, changed: true, ended: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			called := false
			changed, ended := tc.w.news(tc.evs, func() bool { called = true; return tc.replaced })
			if changed != tc.changed || ended != tc.ended {
				t.Errorf("news = changed %v, ended %v; want %v, %v", changed, ended, tc.changed, tc.ended)
			}
			if tc.wantReplacedCall && !called {
				t.Error("a write to the home did not look at the store file")
			}
		})
	}
}
