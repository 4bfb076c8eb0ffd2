package mcpstdio

import (
	"bytes"
	"github.com/rukh-dev/rukh/mcpcore/mcpcoretest/transcript"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestQueueBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &transcript.GatedWriter{}
		g.Hold()
		var failed atomic.Value
		q := newOutQueue(g, time.Hour, func(err error) { failed.Store(err) })
		push := func(n int, droppable bool, wait time.Duration) error {
			return q.push(outMsg{Data: bytes.Repeat([]byte("x"), n)}, droppable, wait)
		}
		// The writer takes one message and blocks on it.
		if err := push(10, false, 0); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		for i := 0; i < maxQueueMessages; i++ {
			if err := push(10, false, 0); err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
		}
		if err := push(10, true, 0); err != errQueueFull {
			t.Errorf("a notification over 32 messages: %v, want dropped", err)
		}
		start := time.Now()
		if err := push(10, false, 2*time.Second); err != errQueueFull || time.Since(start) != 2*time.Second {
			t.Errorf("a response over 32 messages: %v after %v, want errQueueFull after 2s", err, time.Since(start))
		}
		g.Release()
		synctest.Wait()
		q.close()
		<-q.done
		if got := len(g.Bytes()); got != 33*10 {
			t.Errorf("wrote %d bytes, want %d", got, 330)
		}
		if failed.Load() != nil {
			t.Errorf("writer failed: %v", failed.Load())
		}
	})
	synctest.Test(t, func(t *testing.T) {
		g := &transcript.GatedWriter{}
		g.Hold()
		q := newOutQueue(g, time.Hour, func(error) {})
		q.push(outMsg{Data: []byte("first")}, false, 0)
		synctest.Wait()
		for i := 0; i < 2; i++ {
			if err := q.push(outMsg{Data: make([]byte, maxResponseBytes)}, false, 0); err != nil {
				t.Fatal(err)
			}
		}
		// 4 MiB are queued: even one more byte does not fit.
		if err := q.push(outMsg{Data: []byte("x")}, true, 0); err != errQueueFull {
			t.Errorf("over 4 MiB: %v, want errQueueFull", err)
		}
		g.Release()
		q.close()
		<-q.done
	})
}

func TestDroppedMessagesAreNotWritten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &transcript.GatedWriter{}
		g.Hold()
		q := newOutQueue(g, time.Hour, func(error) {})
		var drop atomic.Bool
		var done atomic.Int32
		q.push(outMsg{Data: []byte("a\n")}, false, 0)
		synctest.Wait()
		q.push(outMsg{Data: []byte("b\n"), Drop: &drop, Done: func() { done.Add(1) }}, false, 0)
		q.push(outMsg{Data: []byte("c\n"), Done: func() { done.Add(1) }}, false, 0)
		drop.Store(true) // e.g. notifications/cancelled arrives while queued
		g.Release()
		q.close()
		<-q.done
		if got := string(g.Bytes()); got != "a\nc\n" {
			t.Errorf("wrote %q", got)
		}
		if done.Load() != 2 {
			t.Errorf("done ran %d times, want 2", done.Load())
		}
	})
}

func TestReaderLines(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []string // "L:<line>" or "X" for over-long
	}{
		{"split writes", "ab\ncd\n", []string{"L:ab", "L:cd"}},
		{"unterminated last line", "ab\ncd", []string{"L:ab", "L:cd"}},
		{"empty lines", "\n\nab\n", []string{"L:", "L:", "L:ab"}},
		{"exact limit", strings.Repeat("a", maxLineBytes) + "\nz\n", []string{"L:" + strings.Repeat("a", maxLineBytes), "L:z"}},
		{"one over", strings.Repeat("a", maxLineBytes+1) + "\nz\n", []string{"X", "L:z"}},
		{"far over, unterminated", strings.Repeat("a", 3*maxLineBytes), []string{"X"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stop := make(chan struct{})
			defer close(stop)
			r := &lineReader{in: &chunkReader{data: []byte(tt.input), n: 7000}, events: make(chan readEvent), stop: stop}
			go r.run()
			var got []string
			for ev := range r.events {
				if ev.kind == evEnd {
					if ev.err != nil {
						t.Fatal(ev.err)
					}
					break
				}
				switch ev.kind {
				case evLine:
					got = append(got, "L:"+string(ev.line))
				case evOverlong:
					got = append(got, "X")
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("got %.80q, want %.80q", got, tt.want)
			}
		})
	}
}

// chunkReader returns at most n bytes per Read.
type chunkReader struct {
	data []byte
	n    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	k := min(len(p), c.n, len(c.data))
	copy(p, c.data[:k])
	c.data = c.data[k:]
	return k, nil
}

// slowWriter takes at most n bytes per Write and needs d for each.
type slowWriter struct {
	n int
	d time.Duration
	b bytes.Buffer
}

func (w *slowWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		k := min(len(p), w.n)
		time.Sleep(w.d)
		w.b.Write(p[:k])
		p, written = p[k:], written+k
	}
	return written, nil
}

// The write timeout bounds the whole message: a reader too slow to take
// a response within it closes the transport, whatever the pace
// (docs/design.md, Limits).
func TestWriteTimeoutCoversTheWholeMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &slowWriter{n: 4 << 10, d: 400 * time.Millisecond} // 10 KiB/s
		failed := make(chan error, 1)
		q := newOutQueue(w, 2*time.Second, func(err error) { failed <- err })
		if err := q.push(outMsg{Data: bytes.Repeat([]byte("y"), 200<<10)}, false, 0); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := <-failed; err != errWriteTimeout || time.Since(start) != 2*time.Second {
			t.Errorf("failed with %v after %v, want a write timeout after 2s", err, time.Since(start))
		}
		q.abort()
		<-q.done
	})
}

// gatedWriter blocks every Write until its gate is closed: a client that
// reads nothing for a while.
type gatedWriter struct{ gate chan struct{} }

func (g *gatedWriter) Write(p []byte) (int, error) { <-g.gate; return len(p), nil }

// A notification refused from a full queue must not take back the wake-up
// of a response already waiting for room: once the client reads again,
// the response goes out instead of timing out and failing the session.
func TestDroppedHintKeepsAWaitingResponsesWakeUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &gatedWriter{gate: make(chan struct{})}
		q := newOutQueue(g, time.Hour, func(error) {})
		defer q.close()
		// The writer takes one message and blocks in Write; the rest fill
		// the queue.
		for i := range maxQueueMessages + 1 {
			if err := q.push(outMsg{Data: []byte("x")}, false, time.Second); err != nil {
				t.Fatalf("filling message %d: %v", i, err)
			}
		}
		res := make(chan error, 1)
		go func() { res <- q.push(outMsg{Data: []byte("response")}, false, time.Minute) }()
		synctest.Wait() // the response waits for room
		if err := q.push(outMsg{Data: []byte("hint")}, true, 0); err != errQueueFull {
			t.Fatalf("a hint pushed onto a full queue: %v, want errQueueFull", err)
		}
		close(g.gate) // the client reads again
		if err := <-res; err != nil {
			t.Fatalf("the waiting response was refused although the queue drained: %v", err)
		}
	})
}
