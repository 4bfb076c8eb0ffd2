package store

import (
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"
)

// The audit log (docs/agents.md): one record per served call, keyed by an
// 8-byte big-endian sequence, oldest first. Records are only ever deleted
// from the front, so the newest key minus the oldest plus one is the count.
var bucketAudit = []byte("audit")

// Audit retention: the newest AuditMaxRecords records, none older than
// AuditMaxAge. Package variables so tests can shrink them.
var (
	AuditMaxRecords = 100_000
	AuditMaxAge     = 30 * 24 * time.Hour
)

// AuditRecord is one served call. It names the credential's kind, never
// the token.
type AuditRecord struct {
	Time       time.Time `json:"time"`
	Transport  string    `json:"transport"`            // stdio or http
	Agent      string    `json:"agent,omitempty"`      // empty under stdio (the owner's own agent)
	Credential string    `json:"credential,omitempty"` // static, short-lived, one-time, oauth, none
	// Issuer and Subject are an oauth credential's identity provider and
	// the token's sub; empty for Rukh's own tokens.
	Issuer       string `json:"issuer,omitempty"`
	Subject      string `json:"subject,omitempty"`
	Endpoint     string `json:"endpoint"`
	Tool         string `json:"tool,omitempty"`
	Command      string `json:"command"`
	InvocationID string `json:"invocationId,omitempty"`
	Outcome      string `json:"outcome"`
	// Reason says why a call was refused (a spent one-time token, a
	// credential below the command's level).
	Reason     string `json:"reason,omitempty"`
	DurationMs int64  `json:"durationMs"`
}

// AppendAudit adds records in one transaction and drops what retention no
// longer keeps. Servers call it after each call (through an AuditWriter,
// which batches).
func (s *Store) AppendAudit(recs ...AuditRecord) error {
	if len(recs) == 0 {
		return nil
	}
	var id, dev, ino uint64
	err := s.update(func(tx txn) error {
		if t, ok := tx.(boltTx); ok {
			var known bool
			if dev, ino, known = t.committedTo(); known {
				id = t.id()
			}
		}
		b, err := tx.CreateBucketIfNotExists(bucketAudit)
		if err != nil {
			return err
		}
		for _, r := range recs {
			seq, err := b.NextSequence()
			if err != nil {
				return err
			}
			if r.Time.IsZero() {
				r.Time = clock()
			}
			r.Time = r.Time.UTC()
			if err := putJSON(b, itob(seq), r); err != nil {
				return err
			}
		}
		return pruneAudit(b, clock())
	})
	if err == nil && id != 0 {
		s.stamps.committedAudit(dev, ino, id) // only audit records changed
	}
	return err
}

func pruneAudit(b bucket, t time.Time) error {
	c := b.Cursor()
	last := b.Sequence()
	cutoff := t.Add(-AuditMaxAge)
	for k, v := c.First(); k != nil; k, v = c.First() {
		first, ok := btoi(k)
		if ok && last-first+1 <= uint64(AuditMaxRecords) {
			var r AuditRecord
			if json.Unmarshal(v, &r) == nil && !r.Time.Before(cutoff) {
				return nil
			}
		}
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// AuditQuery selects audit records; zero fields select everything.
type AuditQuery struct {
	Agent string
	Since time.Time
	Limit int // the newest Limit records; 0: all
}

// auditSkew allows for records a little out of time order (batches of
// several servers), so a Since scan does not stop too early.
const auditSkew = time.Minute

// Audit returns the matching records, oldest first, and how many matched
// in all (more than returned when Limit cut them).
func (s *Store) Audit(q AuditQuery) ([]AuditRecord, int, error) {
	var out []AuditRecord
	total := 0
	_, err := s.view(func(tx txn) error {
		b := tx.Bucket(bucketAudit)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			var r AuditRecord
			if json.Unmarshal(v, &r) != nil {
				continue
			}
			if !q.Since.IsZero() && r.Time.Before(q.Since) {
				if r.Time.Before(q.Since.Add(-auditSkew)) {
					break
				}
				continue
			}
			if q.Agent != "" && r.Agent != q.Agent {
				continue
			}
			total++
			if q.Limit == 0 || len(out) < q.Limit {
				out = append(out, r)
			}
		}
		return nil
	})
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, total, err
}

// lastUsed fills Agent.LastUsed from the newest audit record of each.
// A record of an identity provider's agent (with an issuer) is not a use
// of the Rukh agent of the same name.
func lastUsed(tx txn, agents []Agent, index map[string]int) {
	b := tx.Bucket(bucketAudit)
	if b == nil || len(agents) == 0 {
		return
	}
	left := len(agents)
	c := b.Cursor()
	for k, v := c.Last(); k != nil && left > 0; k, v = c.Prev() {
		var r AuditRecord
		if json.Unmarshal(v, &r) != nil || r.Agent == "" || r.Issuer != "" {
			continue
		}
		if i, ok := index[r.Agent]; ok && agents[i].LastUsed.IsZero() {
			agents[i].LastUsed = r.Time
			left--
		}
	}
}

// AuditWriter appends audit records off the caller's path: Add never
// blocks (a call's latency never waits on the store). A record that comes
// after a quiet spell is written at once, so `rukh audit` shows a call
// moments after it returns; when busy, the records of up to
// auditFlushEvery share one transaction.
type AuditWriter struct {
	s    *Store
	logf func(format string, args ...any)
	// The queue grows with what waits and is let go once taken: a bounded
	// channel would hold auditQueue records' worth of memory for the
	// server's life, busy or not.
	mu      sync.Mutex
	queue   []AuditRecord
	closed  bool
	wake    chan struct{} // a record was queued, the batch is full, or Close
	dropped atomic.Int64
	done    chan struct{}
}

// auditQueue bounds the records waiting to be written.
const auditQueue = 4096

// auditBatch bounds the records of one transaction.
const auditBatch = 1024

// NewAuditWriter starts a writer; Close flushes and stops it. logf (may be
// nil) hears of records that could not be written.
func (s *Store) NewAuditWriter(logf func(format string, args ...any)) *AuditWriter {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	w := &AuditWriter{s: s, logf: logf, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go w.run()
	return w
}

// Add queues a record; when the queue is full the record is dropped and
// counted, and the loss is logged.
func (w *AuditWriter) Add(r AuditRecord) {
	if r.Time.IsZero() {
		r.Time = clock()
	}
	w.mu.Lock()
	full := len(w.queue) >= auditQueue || w.closed
	if !full {
		w.queue = append(w.queue, r)
	}
	n := len(w.queue)
	w.mu.Unlock()
	if full {
		if w.dropped.Add(1) == 1 {
			w.logf("audit: the queue is full; records are being dropped")
		}
		return
	}
	if n == 1 || n == auditBatch {
		w.signal()
	}
}

func (w *AuditWriter) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Close writes what is queued and stops the writer. Add must not be called
// after Close.
func (w *AuditWriter) Close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.signal()
	<-w.done
	if n := w.dropped.Load(); n > 0 {
		w.logf("audit: %d record(s) were dropped", n)
	}
}

// auditFlushEvery spaces the writer's transactions: each one briefly
// holds the store against the readers a call makes, so a busy server
// writes a few batches a second, not one per call.
const auditFlushEvery = 200 * time.Millisecond

// take removes up to auditBatch records from the front of the queue, and
// says whether any are left and whether Close was called.
func (w *AuditWriter) take() (batch []AuditRecord, more, closed bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.queue) <= auditBatch {
		batch, w.queue = w.queue, nil
	} else {
		batch = w.queue[:auditBatch:auditBatch]
		w.queue = append([]AuditRecord(nil), w.queue[auditBatch:]...)
	}
	return batch, len(w.queue) > 0, w.closed
}

// ready says a batch is full or Close was called: no reason to wait.
func (w *AuditWriter) ready() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.queue) >= auditBatch || w.closed
}

func (w *AuditWriter) run() {
	defer close(w.done)
	var wrote time.Time // when the last transaction ended
	for {
		<-w.wake
		// Within auditFlushEvery of the last write, wait out the rest of it
		// collecting (unless a batch is full or Close comes); otherwise take
		// only what is queued already.
		if wait := auditFlushEvery - time.Since(wrote); wait > 0 && !w.ready() {
			timer := time.NewTimer(wait)
			for waiting := true; waiting; {
				select {
				case <-timer.C:
					waiting = false
				case <-w.wake:
					waiting = !w.ready()
				}
			}
			timer.Stop()
		}
		batch, more, closed := w.take()
		if len(batch) > 0 {
			if err := w.s.AppendAudit(batch...); err != nil {
				w.logf("audit: %d record(s) were lost: %v", len(batch), err)
			}
			wrote = time.Now()
		}
		switch {
		case more:
			w.signal()
		case closed:
			return
		}
	}
}
