package commands

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// blockedWriter never returns from Write after its first n bytes, like a
// stderr pipe nobody reads.
type blockedWriter struct {
	mu    sync.Mutex
	n     int
	got   strings.Builder
	block chan struct{}
}

func (w *blockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	if w.got.Len()+len(p) > w.n {
		w.mu.Unlock()
		<-w.block
		return 0, nil
	}
	defer w.mu.Unlock()
	return w.got.WriteString(string(p))
}

func TestStderrLogNeverBlocks(t *testing.T) {
	w := &blockedWriter{n: 100, block: make(chan struct{})}
	defer close(w.block)
	l := newStderrLog(w)
	start := time.Now()
	for i := 0; i < 10000; i++ {
		l.Logf("line %d", i)
	}
	l.close()
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("logging to a stuck stderr took %v", d)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !strings.Contains(w.got.String(), "rukh: serve-mcp: line 0\n") {
		t.Errorf("stderr = %q, want the first line", w.got.String())
	}
}

func TestStderrLogCountsDrops(t *testing.T) {
	release := make(chan struct{})
	w := &gateWriter{gate: release}
	l := newStderrLog(w)
	for i := 0; i < 1000; i++ {
		l.Logf("x")
	}
	close(release)
	l.close()
	w.mu.Lock()
	defer w.mu.Unlock()
	if !strings.Contains(w.b.String(), "log line(s) dropped: stderr is not being read") {
		t.Errorf("no drop count in %q", w.b.String()[:min(200, w.b.Len())])
	}
}

// gateWriter blocks every write until gate is closed.
type gateWriter struct {
	mu   sync.Mutex
	gate chan struct{}
	b    strings.Builder
}

func (w *gateWriter) Write(p []byte) (int, error) {
	<-w.gate
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
