package store

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/rukh-dev/rukh/kernel"
)

// Kinds of held references: what a running call uses and must outlive it.
const (
	// HoldRelease: an installed copy, by Release.Ref (digest, or "dev:"+digest).
	HoldRelease = "release"
	// HoldRevision: a published revision, by RevisionID ("r7").
	HoldRevision = "revision"
)

// Holds are advisory file locks on home/holds/KIND-ID: a running call holds
// a shared lock for its whole run, removal takes an exclusive one without
// waiting. They work across processes (the CLI, every serve-mcp) and end
// with the process that took them, so a crash leaves nothing held. Calls of
// one process that hold the same thing at once share its file and lock. When
// the last of them ends the lock is dropped but the file stays open, unlocked
// (a few per handle): the next call's hold is a flock and an fstat on it, not
// an open, a flock and two stats. An unlocked file holds nothing, so removal
// works while the process idles; a removal unlinks the file, which the next
// hold sees (no links left) and opens the path afresh.

// HoldsDir is where hold files live.
func (s *Store) HoldsDir() string { return filepath.Join(s.home, "holds") }

func (s *Store) holdPath(kind, id string) string {
	return filepath.Join(s.HoldsDir(), kind+"-"+url.PathEscape(id))
}

// Hold takes a shared hold on kind/id until release is called: while it is
// held, TryRemoveHeld refuses to remove the thing. Hold waits while a
// removal of the same thing is under way; the caller checks afterwards that
// what it holds still exists.
func (s *Store) Hold(kind, id string) (release func(), err error) {
	if e, ok := s.be.(sharedBackend); ok && sharedHold(kind) {
		return e.hold(kind, id)
	}
	if err := s.checkHome(); err != nil {
		return nil, err
	}
	path := s.holdPath(kind, id)
	if release, ok := s.held.join(path); ok {
		return release, nil
	}
	if f := s.held.takeIdle(path); f != nil {
		if relockHold(f) {
			return s.held.add(path, f), nil
		}
		f.Close()
	}
	f, err := lockHold(s.HoldsDir(), path, false)
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		// A home nobody may write: nothing can be removed from it either.
		return func() {}, nil
	}
	if err != nil {
		return nil, kernel.Errorf(kernel.CodeInternal, "cannot hold %s %s", kind, id).Wrap(err)
	}
	return s.held.add(path, f), nil
}

// heldFiles are the hold files a handle has locked, each with the number
// of holds on it: the last release unlocks it and keeps it among the idle
// ones (closing one when there are maxIdleHolds). While one is locked the
// thing cannot be removed, so a hold that joins it holds what the first one
// checked.
type heldFiles struct {
	mu   sync.Mutex
	m    map[string]*heldFile
	idle map[string]*os.File // unlocked, kept for the next hold of the path
}

// maxIdleHolds is how many unlocked hold files a handle keeps: a serving
// process's calls hold a revision and a release or two at a time.
const maxIdleHolds = 8

// takeIdle returns path's unlocked file, if one is kept, and forgets it.
func (h *heldFiles) takeIdle(path string) *os.File {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.idle[path]
	if f != nil {
		delete(h.idle, path)
	}
	return f
}

// keepIdle unlocks f and keeps it as path's idle file; on failure, or with
// another idle file for path already, f is closed (which unlocks it too).
// Called with h.mu held.
func (h *heldFiles) keepIdle(path string, f *os.File) {
	if _, dup := h.idle[path]; dup || unlockHold(f) != nil {
		f.Close()
		return
	}
	if len(h.idle) >= maxIdleHolds {
		for p, old := range h.idle {
			old.Close()
			delete(h.idle, p)
			break
		}
	}
	if h.idle == nil {
		h.idle = map[string]*os.File{}
	}
	h.idle[path] = f
}

// closeIdle closes the unlocked files kept for later holds (the store is
// closing; locked ones belong to calls still running).
func (h *heldFiles) closeIdle() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for p, f := range h.idle {
		f.Close()
		delete(h.idle, p)
	}
}

type heldFile struct {
	f     *os.File
	holds int
}

// join adds a hold to path's file if it is open.
func (h *heldFiles) join(path string) (release func(), ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.m[path]
	if e == nil {
		return nil, false
	}
	e.holds++
	return h.releaser(path, e), true
}

// add keeps f, just locked, as path's file; if another hold locked it
// meanwhile, f is closed and that one joined.
func (h *heldFiles) add(path string, f *os.File) func() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e := h.m[path]; e != nil {
		f.Close()
		e.holds++
		return h.releaser(path, e)
	}
	if h.m == nil {
		h.m = map[string]*heldFile{}
	}
	e := &heldFile{f: f, holds: 1}
	h.m[path] = e
	return h.releaser(path, e)
}

func (h *heldFiles) releaser(path string, e *heldFile) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			if e.holds--; e.holds == 0 {
				delete(h.m, path)
				h.keepIdle(path, e.f)
			}
		})
	}
}

// Holder is a process holding a reference.
type Holder struct {
	PID     int
	Command string // its command line, shortened; "" when unknown
}

func (h Holder) String() string {
	if h.Command == "" {
		return fmt.Sprintf("pid %d", h.PID)
	}
	return fmt.Sprintf("%s, pid %d", h.Command, h.PID)
}

// InUseError is TryRemoveHeld's refusal: running calls hold the thing.
type InUseError struct {
	Kind, ID string
	Holders  []Holder // empty when the platform cannot tell
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("%s %s is in use by %s", e.Kind, e.ID, e.By())
}

// By says who holds it: "a running call (rukh serve-mcp, pid 1234)".
func (e *InUseError) By() string {
	if len(e.Holders) == 0 {
		return "a running call"
	}
	hs := make([]string, len(e.Holders))
	for i, h := range e.Holders {
		hs[i] = h.String()
	}
	what := "a running call"
	if len(e.Holders) > 1 {
		what = "running calls"
	}
	return what + " (" + strings.Join(hs, "; ") + ")"
}

// TryRemoveHeld runs remove, which removes kind/id, unless a call holds it;
// then it returns an *InUseError (code conflict) at once, without waiting.
// No new hold starts while remove runs. After a successful remove the hold
// file goes too.
func (s *Store) TryRemoveHeld(kind, id string, remove func() error) error {
	if e, ok := s.be.(sharedBackend); ok && sharedHold(kind) {
		return e.tryRemoveHeld(kind, id, remove)
	}
	if err := s.checkHome(); err != nil {
		return err
	}
	path := s.holdPath(kind, id)
	f, err := lockHold(s.HoldsDir(), path, true)
	if errors.Is(err, errHeld) {
		in := &InUseError{Kind: kind, ID: id, Holders: holders(f)}
		f.Close()
		return kernel.Errorf(kernel.CodeConflict, "%s", in.Error()).Wrap(in)
	}
	if err != nil {
		return kernel.Errorf(kernel.CodeInternal, "cannot check whether %s %s is in use", kind, id).Wrap(err)
	}
	defer f.Close()
	if err := remove(); err != nil {
		return err
	}
	// Under the exclusive lock: a Hold that opened this file before the
	// unlink notices, once it has its lock, that the path is gone.
	_ = os.Remove(path)
	return nil
}

var errHeld = errors.New("held")

func openHold(dir, path string) (*os.File, error) {
	f, err := openHoldFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		f, err = openHoldFile(path)
	}
	return f, err
}

// openHoldFile opens (creating) a hold file with one system call: a hold
// is on every call's path, and os.OpenFile would also try, and fail, to
// add the file to the runtime's poller.
func openHoldFile(path string) (*os.File, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CREAT|syscall.O_CLOEXEC, 0o600)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}

// commandLine is a command line for a message: the program's base name and
// its first few words, at most 60 bytes, control characters shown as '?'.
func commandLine(words []string) string {
	if len(words) == 0 {
		return ""
	}
	words = append([]string{filepath.Base(words[0])}, words[1:]...)
	if len(words) > 4 {
		words = append(words[:4], "…")
	}
	s := strings.Join(words, " ")
	if len(s) > 60 {
		n := 57
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}
