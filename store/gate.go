package store

import (
	"sync"
	"time"
)

// gate orders operations on one store file inside this process before they
// reach bbolt's flock. flock is per open file, so goroutines of one process
// would otherwise contend through bbolt's 50 ms retry loop, where a steady
// stream of readers can starve a writer. The gate prefers a waiting writer
// and honours the operation's deadline.
type gate struct {
	mu      sync.Mutex
	readers int
	writer  bool
	waiting int           // writers waiting
	wake    chan struct{} // closed on every state change
}

var gates sync.Map // db path → *gate

func gateFor(path string) *gate {
	g, _ := gates.LoadOrStore(path, &gate{})
	return g.(*gate)
}

func (g *gate) acquire(write bool, deadline time.Time) bool {
	g.mu.Lock()
	if write {
		g.waiting++
	}
	for {
		if write && !g.writer && g.readers == 0 {
			g.waiting--
			g.writer = true
			g.mu.Unlock()
			return true
		}
		if !write && !g.writer && g.waiting == 0 {
			g.readers++
			g.mu.Unlock()
			return true
		}
		if g.wake == nil {
			g.wake = make(chan struct{})
		}
		wake := g.wake
		g.mu.Unlock()
		d := time.Until(deadline)
		timedOut := d <= 0
		if !timedOut {
			t := time.NewTimer(d)
			select {
			case <-wake:
			case <-t.C:
				timedOut = true
			}
			t.Stop()
		}
		g.mu.Lock()
		if timedOut {
			if write {
				g.waiting--
				g.broadcast()
			}
			g.mu.Unlock()
			return false
		}
	}
}

func (g *gate) release(write bool) {
	g.mu.Lock()
	if write {
		g.writer = false
	} else {
		g.readers--
	}
	g.broadcast()
	g.mu.Unlock()
}

// broadcast wakes every waiter; g.mu must be held.
func (g *gate) broadcast() {
	if g.wake != nil {
		close(g.wake)
		g.wake = nil
	}
}
