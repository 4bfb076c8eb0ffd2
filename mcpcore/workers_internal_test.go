package mcpcore

import (
	"context"
	"sync"
	"testing"
	"time"
)

func workerSession() *Session {
	s := &Session{}
	s.ctx, s.stop = context.WithCancelCause(context.Background())
	s.workers.work = make(chan func())
	return s
}

func (s *Session) workerCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.workers.n
}

// waitWorkers waits until the session has n workers.
func waitWorkers(t *testing.T, s *Session, n int) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); s.workerCount() != n; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%d call workers, want %d", s.workerCount(), n)
		}
	}
}

// Calls one after another run on one kept worker; calls at once get one
// each, and no more than maxCallWorkers stay; all end with the session.
func TestCallWorkers(t *testing.T) {
	s := workerSession()
	for range 20 {
		done := make(chan struct{})
		s.goCall(func() { close(done) })
		<-done
		time.Sleep(2 * time.Millisecond) // the worker is back waiting
	}
	waitWorkers(t, s, 1)

	const atOnce = maxCallWorkers + 6
	var started, release sync.WaitGroup
	started.Add(atOnce)
	release.Add(1)
	for range atOnce {
		s.goCall(func() { started.Done(); release.Wait() })
	}
	started.Wait()
	if n := s.workerCount(); n < atOnce {
		t.Fatalf("%d call workers for %d calls at once", n, atOnce)
	}
	release.Done()
	waitWorkers(t, s, maxCallWorkers)

	s.stop(nil)
	waitWorkers(t, s, 0)
}
