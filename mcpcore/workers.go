package mcpcore

import "time"

// A call that does not run on its transport's goroutine runs on one of
// its session's call workers: a goroutine kept for the session's next
// call once its call returned. A call's chain (invoker, pins, kernel) is
// deep, and a fresh goroutine grows its stack to that depth, copying it
// each time, on every call; a kept one has grown already. A session keeps
// only as many as its calls ran at once (at most maxCallWorkers); they end
// after callWorkerIdle without a call, or with the session.
type callWorkers struct {
	work chan func() // unbuffered: a send reaches a waiting worker or none
	n    int         // workers running or waiting, under the session's mu
}

const (
	maxCallWorkers = 64
	callWorkerIdle = 10 * time.Second
)

// goCall runs f on a waiting worker of the session, or on a new one.
func (s *Session) goCall(f func()) {
	select {
	case s.workers.work <- f:
		return
	default:
	}
	s.mu.Lock()
	s.workers.n++
	s.mu.Unlock()
	go s.callWorker(f)
}

func (s *Session) callWorker(f func()) {
	var idle *time.Timer
	for f != nil {
		f()
		f = nil
		s.mu.Lock()
		over := s.workers.n > maxCallWorkers
		if over {
			s.workers.n--
		}
		s.mu.Unlock()
		if over {
			return
		}
		if idle == nil {
			idle = time.NewTimer(callWorkerIdle)
		} else {
			idle.Reset(callWorkerIdle)
		}
		select {
		case f = <-s.workers.work:
		case <-idle.C:
		case <-s.ctx.Done():
		}
	}
	s.mu.Lock()
	s.workers.n--
	s.mu.Unlock()
}
