package mcpstdio

import (
	"bytes"
	"errors"
	"github.com/rukh-dev/rukh/mcpcore"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Outgoing queue bounds (docs/design.md, Limits).
const (
	maxQueueMessages = 32
	maxQueueBytes    = 4 << 20
)

// Read events sent from the reader goroutine to the serve loop, in order.
const (
	evLine     = iota // a complete line (without its newline)
	evOverlong        // a line over maxLineBytes, skipped to its newline
	evStarted         // the first bytes of a message that is not complete yet
	evEnd             // end of input; err is nil at EOF
)

type readEvent struct {
	kind int
	line []byte
	seq  uint64 // evStarted: the message's sequence number
	err  error
}

// lineReader splits in into lines of at most maxLineBytes. open holds the
// sequence number of the message whose first byte arrived but whose newline
// has not (0: none), so the serve loop can time it out.
type lineReader struct {
	in     io.Reader
	events chan readEvent
	stop   <-chan struct{}
	open   atomic.Uint64
}

func (r *lineReader) send(ev readEvent) bool {
	select {
	case r.events <- ev:
		return true
	case <-r.stop:
		return false
	}
}

func (r *lineReader) run() {
	buf := make([]byte, 64<<10)
	var partial []byte
	var seq uint64
	inMsg, over := false, false
	for {
		n, err := r.in.Read(buf)
		chunk := buf[:n]
		for len(chunk) > 0 {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				if !inMsg {
					inMsg = true
					seq++
					r.open.Store(seq)
					if !r.send(readEvent{kind: evStarted, seq: seq}) {
						return
					}
				}
				if !over && len(partial)+len(chunk) > maxLineBytes {
					over, partial = true, nil
				}
				if !over {
					partial = append(partial, chunk...)
				}
				break
			}
			ev := r.complete(partial, chunk[:i], over)
			chunk = chunk[i+1:]
			partial, inMsg, over = nil, false, false
			r.open.Store(0)
			if !r.send(ev) {
				return
			}
		}
		if err != nil {
			if inMsg {
				// An unterminated last message still counts as a message.
				r.open.Store(0)
				if !r.send(r.complete(partial, nil, over)) {
					return
				}
			}
			if err == io.EOF {
				err = nil
			}
			r.send(readEvent{kind: evEnd, err: err})
			return
		}
	}
}

func (r *lineReader) complete(partial, tail []byte, over bool) readEvent {
	if over || len(partial)+len(tail) > maxLineBytes {
		return readEvent{kind: evOverlong}
	}
	line := make([]byte, 0, len(partial)+len(tail))
	line = append(append(line, partial...), tail...)
	return readEvent{kind: evLine, line: line}
}

var (
	errQueueClosed = errors.New("output closed")
	errQueueFull   = errors.New("output queue full")
)

// outMsg is one framed outgoing message (see mcpcore.Message: Drop and
// Done).
type outMsg = mcpcore.Message

// outQueue is the bounded outgoing queue and its single writer.
type outQueue struct {
	out          io.Writer
	writeTimeout time.Duration
	fail         func(error) // called when a write blocks too long or fails

	mu     sync.Mutex
	items  []outMsg
	bytes  int
	closed bool
	wake   chan struct{} // capacity 1: there is work or the queue closed
	space  chan struct{} // closed (and replaced) when space frees and a pusher waits
	waited bool          // a pusher waits on space
	done   chan struct{} // closed when the writer exits
	broken atomic.Bool   // a write failed; nothing more is written
}

func newOutQueue(out io.Writer, writeTimeout time.Duration, fail func(error)) *outQueue {
	q := &outQueue{
		out: out, writeTimeout: writeTimeout, fail: fail,
		wake: make(chan struct{}, 1), space: make(chan struct{}), done: make(chan struct{}),
	}
	go q.run()
	return q
}

// push queues m. A droppable message (a notification) that does not fit is
// refused at once; any other waits up to wait for space.
func (q *outQueue) push(m outMsg, droppable bool, wait time.Duration) error {
	var timer *time.Timer
	for {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			m.Finish()
			return errQueueClosed
		}
		if len(q.items) < maxQueueMessages && q.bytes+len(m.Data) <= maxQueueBytes {
			q.items = append(q.items, m)
			q.bytes += len(m.Data)
			q.mu.Unlock()
			select {
			case q.wake <- struct{}{}:
			default:
			}
			if timer != nil {
				timer.Stop()
			}
			return nil
		}
		space := q.space
		if !droppable {
			// Only ever set here: a dropped hint must not take back the
			// wake-up a waiting response needs.
			q.waited = true
		}
		q.mu.Unlock()
		if droppable {
			m.Finish()
			return errQueueFull
		}
		if timer == nil {
			timer = time.NewTimer(wait)
		}
		select {
		case <-space:
		case <-timer.C:
			m.Finish()
			return errQueueFull
		}
	}
}

// close stops accepting messages; the writer drains what is queued and exits.
func (q *outQueue) close() {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.space) // wake pushers waiting for space; they see closed
		q.space = make(chan struct{})
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// abort closes the queue and discards what is queued: the transport is
// gone, so nothing more may be written.
func (q *outQueue) abort() {
	q.broken.Store(true)
	q.close()
}

func (q *outQueue) run() {
	defer close(q.done)
	// one watchdog, armed around each write
	var watchdog *time.Timer
	for {
		q.mu.Lock()
		if len(q.items) == 0 {
			closed := q.closed
			q.mu.Unlock()
			if closed {
				return
			}
			<-q.wake
			continue
		}
		m := q.items[0]
		q.items[0] = outMsg{}
		q.items = q.items[1:]
		q.bytes -= len(m.Data)
		if q.waited {
			close(q.space)
			q.space = make(chan struct{})
			q.waited = false
		}
		q.mu.Unlock()

		if (m.Drop != nil && m.Drop.Load()) || q.broken.Load() {
			m.Finish()
			continue
		}
		// One deadline for the whole message: no progress, partial writes
		// included, extends it (docs/design.md, Limits).
		// finish (which frees a call's held slot) runs before the bytes go
		// out: a client that has read a response may send its next call at
		// once, and must find the slot free.
		m.Finish()
		if watchdog == nil {
			watchdog = time.AfterFunc(q.writeTimeout, func() { q.fail(errWriteTimeout) })
		} else {
			watchdog.Reset(q.writeTimeout)
		}
		_, err := q.out.Write(m.Data)
		watchdog.Stop()
		if err != nil {
			q.broken.Store(true)
			q.fail(err)
		}
	}
}
