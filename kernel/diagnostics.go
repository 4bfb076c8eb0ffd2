package kernel

import (
	"fmt"
	"sync"
)

// DefaultDiagnosticsBytes is the owner diagnostics limit when none is set.
const DefaultDiagnosticsBytes = 64 << 10

// Diagnostics is a bounded sink for a child's stdout and stderr under MCP:
// it keeps the first Limit bytes and counts the rest, so a flooding child
// never grows memory. Writes always succeed, so the writer keeps draining
// the child to the end. It is safe for concurrent use.
type Diagnostics struct {
	mu      sync.Mutex
	limit   int
	buf     []byte
	dropped int64
}

// NewDiagnostics returns a sink keeping at most limit bytes;
// limit <= 0 means DefaultDiagnosticsBytes.
func NewDiagnostics(limit int) *Diagnostics {
	if limit <= 0 {
		limit = DefaultDiagnosticsBytes
	}
	return &Diagnostics{limit: limit}
}

// Write keeps what fits under the limit and counts the rest as dropped.
// It never fails.
func (d *Diagnostics) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	limit := d.limit
	if limit <= 0 {
		limit = DefaultDiagnosticsBytes
	}
	room := limit - len(d.buf)
	if room > len(p) {
		room = len(p)
	}
	if room > 0 {
		d.buf = append(d.buf, p[:room]...)
	}
	d.dropped += int64(len(p) - room)
	return len(p), nil
}

// Bytes returns a copy of the kept head.
func (d *Diagnostics) Bytes() []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]byte(nil), d.buf...)
}

// Dropped returns how many bytes were written beyond the limit.
func (d *Diagnostics) Dropped() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dropped
}

// String returns the kept head followed, on overflow, by a line saying how
// many bytes were dropped.
func (d *Diagnostics) String() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dropped == 0 {
		return string(d.buf)
	}
	sep := ""
	if len(d.buf) > 0 && d.buf[len(d.buf)-1] != '\n' {
		sep = "\n"
	}
	return fmt.Sprintf("%s%s[dropped %d bytes]\n", d.buf, sep, d.dropped)
}
