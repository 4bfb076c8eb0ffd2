//go:build unix

package kernel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The goroutine driving an invocation supervises it alone: one poll over
// the leader's exit, the channel, the stdout/stderr pipes whose sinks never
// block, and a wake descriptor for cancellation, with the deadline and the
// stop sequence's graces as its timeout. No goroutine is started per call
// for these and none hands an event to another, so the end of a call is
// one wake-up, not one per stream. Where the call can wait in the
// runtime's poller (callWait), a waiting call holds no thread.

// supervise handles channel events, the deadline, cancellation and the
// stop sequence until the leader exits (it is left a zombie).
func (s *session) supervise(ctx context.Context) {
	w := takeWaker()
	defer w.release()
	var exited chan struct{}
	exitfd, ownFD := -1, false
	watch := func() {
		if s.slot != nil {
			// The slot's report, not the program's exit, ends a slot call:
			// it comes once nothing of the call is left.
			exitfd = s.slot.endFD()
		} else if fd, err := exitFD(s.proc.leader); err == nil {
			exitfd, ownFD = fd, true
		} else {
			exitfd = -1
			exited = make(chan struct{})
			go func() {
				plat.waitExited(s.proc.leader)
				close(exited)
				w.poke()
			}()
		}
	}
	watch()
	defer func() {
		if ownFD {
			unix.Close(exitfd)
		}
	}()
	s.cw = takeCallWait() // released by drainAll
	defer func() {
		// Before the leader's descriptor is closed or the slot's handed
		// back, and the waker reused.
		s.cw.forget(pollExit)
		s.cw.forget(pollWake)
	}()
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, w.poke)
		defer stop()
	}
	deadline := time.Now().Add(s.lim.Timeout)
	deadlineDone, ctxDone := false, false
	for {
		if exited != nil && isClosed(exited) {
			return
		}
		now := time.Now()
		if !ctxDone && ctx.Err() != nil {
			ctxDone = true
			s.stop(cancelReason(ctx), now)
		}
		if !deadlineDone && !now.Before(deadline) {
			deadlineDone = true
			s.stop("deadline exceeded", now)
		}
		if !s.termAt.IsZero() && !now.Before(s.termAt) {
			s.termAt = time.Time{}
			s.signalGroup(syscall.SIGTERM)
		}
		if !s.killAt.IsZero() && !now.Before(s.killAt) {
			s.killAt = time.Time{}
			s.signalGroup(syscall.SIGKILL)
		}
		if s.slot != nil && !s.slot.isStarted() && !now.Before(s.slot.startDue()) {
			s.cw.forget(pollExit) // a failed slot's socket is closed
			if s.slotStart(true) {
				watch()
			}
		}
		if s.slot != nil && s.slot.done() {
			return // its slot is gone: nothing of the call is left
		}
		var due time.Time
		if !deadlineDone {
			due = deadline
		}
		due = earliest(earliest(due, s.termAt), s.killAt)
		if s.slot != nil && !s.slot.isStarted() {
			due = earliest(due, s.slot.startDue())
		}
		if w.r < 0 && (exited != nil || ctx.Done() != nil) {
			// Nothing can wake the poll: look again soon.
			due = earliest(due, now.Add(wakeless))
		}
		if !s.poll(exitfd, w, due, false) {
			continue
		}
		if s.slot == nil || s.slot.isStarted() {
			return
		}
		// A slot call's first record: its program started (the socket
		// stays watched for the end), or the slot failed before it did
		// (its registration is taken out before the socket is closed).
		if s.slotStart(false) {
			watch()
		}
	}
}

// slotStart takes a slot call's first record if it is there (giveUp: or
// drops the slot). When the slot failed before the program started, the
// call goes to an init of its own, with the descriptors rukh kept for it
// (the invoke line waits in the channel), and slotStart reports true: the
// leader to watch changed. During a stop it does not start the program:
// the call ends.
func (s *session) slotStart(giveUp bool) (restarted bool) {
	c := s.slot
	if c.first(giveUp, s.unwatchExit) != slotFailed {
		return false
	}
	if s.stopping {
		c.end()
		return false
	}
	return s.restartFresh(c)
}

// unwatchExit takes the leader's or slot's descriptor out of the poll.
func (s *session) unwatchExit() { s.cw.forget(pollExit) }

// restartFresh starts a call its slot failed under an init of its own.
func (s *session) restartFresh(c *slotCall) bool {
	proc, cmd, err := startContained(&s.init, s.cmd, s.id, c.files, s.r.Recorder)
	c.held.close()
	c.held = nil
	if err != nil {
		s.slot = failedSlotCall(fmt.Sprintf("cannot start program: %v", err))
		return false
	}
	s.slot, s.proc, s.cmd = nil, proc, cmd
	return true
}

// wakeless bounds a poll that no descriptor can interrupt.
const wakeless = 10 * time.Millisecond

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// earliest is the earlier of two times, the zero time being none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || !b.IsZero() && b.Before(a) {
		return b
	}
	return a
}

// poll waits until one of the descriptors is ready or due passes (zero:
// no timeout), then serves what is ready; true when exitfd said the leader
// exited. leaderExited is the phase: channel events after the exit never
// signal the group.
func (s *session) poll(exitfd int, w *waker, due time.Time, leaderExited bool) bool {
	var fds [pollPlaces]unix.PollFd
	n := 0
	add := func(fd int) {
		fds[n] = unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}
		n++
	}
	add(exitfd) // a negative descriptor is ignored
	if w != nil {
		add(w.r)
	} else {
		add(-1)
	}
	if !s.readerEnd {
		add(s.connFD)
	} else {
		add(-1)
	}
	for _, st := range s.inline {
		add(st.fd)
	}
	timeout := -1
	if !due.IsZero() {
		d := time.Until(due)
		timeout = int((d + time.Millisecond - 1) / time.Millisecond) // never early
		if d <= 0 {
			timeout = 0
		}
	}
	if s.cw != nil {
		switch err := s.cw.wait(fds[:n], due); {
		case err == errWaitRefused:
			s.cw.release() // and ppoll from now on
			s.cw = nil
		case err != nil:
			return false // the deadline or EINTR: as below
		}
	}
	if s.cw == nil {
		if _, err := unix.Poll(fds[:n], timeout); err != nil {
			return false // EINTR: the caller looks at the clock and polls again
		}
	}
	ready := func(i int) bool { return fds[i].Revents != 0 }
	if ready(pollWake) {
		w.drain()
	}
	if !s.readerEnd && ready(pollConn) {
		s.readConn(leaderExited)
	}
	for i, st := range s.inline {
		if st.fd >= 0 && ready(pollStreams+i) && st.drain() {
			s.cw.forget(pollStreams + i)
			st.Close()
		}
	}
	return exitfd >= 0 && ready(pollExit)
}

// errWaitRefused: epoll refused a descriptor of the poll (out of memory,
// the user's limit of watches); the call polls with ppoll from then on.
var errWaitRefused = errors.New("a descriptor cannot be waited for in the poller")

// The places of a poll's descriptors.
const (
	pollExit    = iota // the leader's pidfd or the slot's socket
	pollWake           // the waker
	pollConn           // the channel
	pollStreams        // the stdout and stderr pipes drained inline
	pollPlaces  = 8    // at most
)

// readConn reads what the channel holds now and handles each complete
// line; EOF, an error or a violation ends the reading. Everything after
// the first report is a violation.
func (s *session) readConn(leaderExited bool) {
	bp := drainBufs.Get().(*[]byte)
	defer drainBufs.Put(bp)
	for !s.readerEnd {
		n, err := unix.Read(s.connFD, *bp)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return
		}
		if err != nil || n <= 0 {
			// EOF: a last line without a newline is a line.
			if line := s.lines.rest(); line != nil {
				s.channelLine(line, leaderExited)
			}
			s.readerEnd = true
			return
		}
		data := (*bp)[:n]
		for !s.readerEnd && len(data) > 0 {
			var line []byte
			line, data, err = s.lines.next(data)
			switch {
			case err != nil:
				s.handle(channelEvent{violation: fmt.Sprintf("channel message over %d bytes", s.lines.max)}, leaderExited)
				s.readerEnd = true
			case line != nil:
				s.channelLine(line, leaderExited)
			}
		}
	}
}

func (s *session) channelLine(line []byte, leaderExited bool) {
	ev := parseChannelLine(line, s.id, s.rc)
	if ev.violation == "" && s.reported {
		if ev.report != nil {
			ev = channelEvent{violation: "second report"}
		} else {
			ev = channelEvent{violation: "progress after the report"}
		}
	}
	if ev.report != nil {
		s.reported = true
	}
	s.handle(ev, leaderExited)
	if ev.violation != "" {
		s.readerEnd = true
	}
}

// signalGroup signals the program's group. A slot call's program is
// signalled through its pidfd, so its ReportStarted is taken first (the
// slot is dropped if it does not come); a leader under an init of its own
// is rukh's child, whose pid its zombie holds.
func (s *session) signalGroup(sig syscall.Signal) {
	if c := s.slot; c != nil {
		s.cw.forget(pollExit) // a failed slot's socket is closed
		if c.awaitStart() == slotFailed {
			c.end() // a stop: nothing of it ran, and nothing will
		}
		c.signal(sig)
		return
	}
	syscall.Kill(-s.proc.leader, sig)
}

// stop begins the stop sequence: the cancel message now, SIGTERM after the
// term grace, SIGKILL at the stop deadline. The stop deadline is fixed at
// the first stop.
func (s *session) stop(reason string, now time.Time) {
	if s.stopping {
		return
	}
	s.stopping = true
	s.stopReason = reason
	sample() // remember (and record) the leader's descendants while it lives
	s.send(encodeCancel(reason))
	s.termAt = now.Add(s.termGrace)
	s.killAt = now.Add(s.termGrace + s.killGrace)
}

// handle records one channel event. A violation closes the channel and,
// while the leader lives, stops it at once: SIGTERM now, SIGKILL after the
// kill grace.
func (s *session) handle(ev channelEvent, leaderExited bool) {
	switch {
	case ev.violation != "":
		if s.violation == "" && s.stopReason == "" {
			s.violation = ev.violation
		}
		s.readerEnd = true
		s.cw.forget(pollConn)
		s.conn.Close() // the child's further writes fail
		if !leaderExited && !s.stopping {
			s.stopping = true
			s.signalGroup(syscall.SIGTERM)
			s.termAt = time.Time{}
			s.killAt = time.Now().Add(s.killGrace)
		}
	case ev.report != nil:
		s.report = ev.report
	case ev.progress != nil:
		if s.inv.OnProgress != nil && !s.stopping {
			s.inv.OnProgress(*ev.progress)
		}
	}
}

// drainAll reads the channel and the streams to EOF, bounded by the drain
// timeout, then closes the channel.
func (s *session) drainAll() {
	due := time.Now().Add(s.drain)
	for !s.readerEnd || s.inlineOpen() {
		if !time.Now().Before(due) {
			break
		}
		s.poll(-1, nil, due, true)
	}
	s.cw.release()
	s.cw = nil
	for _, st := range s.inline {
		st.Close()
	}
	s.readerEnd = true
	drainC := time.After(time.Until(due))
	if !s.waitCopies(drainC) {
		for _, f := range s.readEnds {
			f.Close()
		}
		s.waitCopies(nil)
	}
	if s.out != nil {
		close(s.out)
	}
	s.conn.Close()
	if s.writerDone != nil {
		<-s.writerDone
	}
}

func (s *session) inlineOpen() bool {
	for _, st := range s.inline {
		if st.fd >= 0 {
			return true
		}
	}
	return false
}

// waitCopies waits for the stdout/stderr drains still running to end, or
// for timeout (nil: no timeout); false when it timed out.
func (s *session) waitCopies(timeout <-chan time.Time) bool {
	for ; s.nCopies > 0; s.nCopies-- {
		select {
		case <-s.copies:
		case <-timeout:
			return false
		}
	}
	return true
}

// lineSplitter cuts the channel's bytes into newline-terminated lines of
// at most max bytes, holding at most one partial line.
type lineSplitter struct {
	max     int
	partial []byte
}

var errLineTooLong = errors.New("line too long")

// next returns the first complete line of data (a copy, without its
// newline) and the rest of data; nil when data ends within a line, which
// is kept. An over-long line is an error.
func (l *lineSplitter) next(data []byte) (line, rest []byte, err error) {
	i := indexNewline(data)
	if i < 0 {
		if len(l.partial)+len(data) > l.max {
			return nil, nil, errLineTooLong
		}
		l.partial = append(l.partial, data...)
		return nil, nil, nil
	}
	if len(l.partial)+i > l.max {
		return nil, nil, errLineTooLong
	}
	line = append(l.partial, data[:i]...)
	if line == nil {
		line = []byte{}
	}
	l.partial = nil
	return line, data[i+1:], nil
}

// rest is the partial line at EOF, if any.
func (l *lineSplitter) rest() []byte {
	p := l.partial
	l.partial = nil
	if len(p) == 0 {
		return nil
	}
	return p
}

func indexNewline(b []byte) int {
	for i, c := range b {
		if c == '\n' {
			return i
		}
	}
	return -1
}

// inlineStream is a stdout or stderr pipe the supervising loop drains into
// a sink that never blocks. Its read end is a plain nonblocking
// descriptor, never in the runtime's poller.
type inlineStream struct {
	fd int
	w  io.Writer
}

func newInlineStream(w io.Writer) (*inlineStream, *os.File, error) {
	p, err := takeSpare(&spares.pipes, newStreamFDs)
	if err != nil {
		return nil, nil, err
	}
	return &inlineStream{fd: p[0], w: w}, os.NewFile(uintptr(p[1]), "|1"), nil
}

// newStreamFDs is a fresh pipe for an inline stream: its read end
// nonblocking, its write end the program's.
func newStreamFDs() ([2]int, error) {
	p, err := cloexecPipe()
	if err != nil {
		return p, fmt.Errorf("pipe: %w", err)
	}
	if err := setNonblockNew(p[0]); err != nil {
		unix.Close(p[0])
		unix.Close(p[1])
		return p, fmt.Errorf("fcntl: %w", err)
	}
	return p, nil
}

// setNonblockNew makes a descriptor rukh just made (a pipe or socket end,
// no status flag set) nonblocking in one fcntl, where SetNonblock reads
// the flags first: F_SETFL leaves the access mode as it is, and there are
// no other flags to keep. Every call makes three such descriptors.
func setNonblockNew(fd int) error {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, unix.O_NONBLOCK)
	return err
}

// drain copies what the pipe holds now; true at EOF or an error, when
// the caller closes it.
func (st *inlineStream) drain() (ended bool) {
	bp := drainBufs.Get().(*[]byte)
	defer drainBufs.Put(bp)
	for {
		n, err := unix.Read(st.fd, *bp)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return false
		case err != nil || n <= 0:
			return true
		}
		st.w.Write((*bp)[:n])
	}
}

// Close closes the read end once.
func (st *inlineStream) Close() error {
	if st.fd >= 0 {
		unix.Close(st.fd)
		st.fd = -1
	}
	return nil
}

// waker is a descriptor a poke makes readable: what interrupts the poll
// when the call's context ends. Wakers are reused; a poke after release
// does nothing, so none reaches a descriptor closed or handed on.
type waker struct {
	r, w int
	mu   sync.Mutex
	held bool
}

var wakers struct {
	mu   sync.Mutex
	free []*waker
}

// maxFreeWakers bounds the wakers kept for reuse.
const maxFreeWakers = 64

// takeWaker returns a waker; one whose descriptor could not be made has r
// -1, and its poll must not wait long.
func takeWaker() *waker {
	wakers.mu.Lock()
	if n := len(wakers.free); n > 0 {
		w := wakers.free[n-1]
		wakers.free = wakers.free[:n-1]
		wakers.mu.Unlock()
		w.mu.Lock()
		w.held = true
		w.mu.Unlock()
		return w
	}
	wakers.mu.Unlock()
	r, wfd, err := newWakeFDs()
	if err != nil {
		return &waker{r: -1, w: -1}
	}
	return &waker{r: r, w: wfd, held: true}
}

// release ends the waker's use by one call, after which its pokes do
// nothing; it is kept for reuse or closed.
func (w *waker) release() {
	w.mu.Lock()
	w.held = false
	w.mu.Unlock()
	if w.r < 0 {
		return
	}
	wakers.mu.Lock()
	if len(wakers.free) < maxFreeWakers {
		wakers.free = append(wakers.free, w)
		w = nil
	}
	wakers.mu.Unlock()
	if w != nil {
		unix.Close(w.r)
		if w.w != w.r {
			unix.Close(w.w)
		}
	}
}

func (w *waker) poke() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held && w.w >= 0 {
		unix.Write(w.w, wakeWord)
	}
}

func (w *waker) drain() {
	var b [64]byte
	for {
		if _, err := unix.Read(w.r, b[:]); err != unix.EINTR {
			return
		}
	}
}
