package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/rukh-dev/rukh/kernel"
)

// A damaged bbolt file (cut short, pages overwritten) must give an error,
// never a crash. bbolt trusts its file: it maps it whole and follows page
// ids without bounds, so a file shorter than its pages faults (SIGBUS,
// which no recover catches) and a page of garbage trips its assertions.
// So the file's length is checked against its meta page before bbolt maps
// it, and bbolt's panics (and faults, made recoverable) are turned into the
// damaged-store error.

// ErrDamaged is wrapped by every error that reports a damaged store file.
var ErrDamaged = errors.New("damaged")

// damage is what was found wrong with a store file.
type damage struct{ detail string }

func (d *damage) Error() string        { return d.detail }
func (d *damage) Is(target error) bool { return target == ErrDamaged }

func damagef(format string, args ...any) error { return &damage{fmt.Sprintf(format, args...)} }

// damaged is the error a damaged store file gives, with what was found.
func (s *Store) damaged(detail error) error {
	name := filepath.Base(s.path)
	hint := fmt.Sprintf("'rukh doctor' checks every file of the home; restore %s from a backup, or move it aside (mv %s %s.damaged) to start it afresh",
		name, shellQuote(s.path), shellQuote(s.path))
	if name == TasksDBName {
		hint = fmt.Sprintf("'rukh doctor' checks every file of the home; %s holds only task records: move it aside (mv %s %s.damaged) and rukh starts a new one",
			name, shellQuote(s.path), shellQuote(s.path))
	}
	if !errors.Is(detail, ErrDamaged) {
		detail = &damage{detail.Error()}
	}
	return kernel.Errorf(kernel.CodeInternal, "the store file is damaged or is not a bbolt file").
		AtPath(s.path).
		Wrap(detail).
		WithHint(hint)
}

// boltMeta is the meta page bbolt would read the file by.
type boltMeta struct {
	snapMeta
	bad []int // meta pages (0, 1) that are not valid
}

// pickMeta reads both meta pages and picks the one bbolt picks: the valid
// one with the higher transaction id. The page size comes from the first
// meta page, or, when it is not valid, from wherever the second is found.
func pickMeta(f *os.File, size int64) (boltMeta, error) {
	var buf [metaEnd]byte
	read := func(off int64) (boltMeta, bool) {
		m, ok := parseMeta(f, off, buf[:])
		return boltMeta{snapMeta: m}, ok
	}
	m0, ok0 := read(0)
	ps := int64(m0.pageSize)
	var m1 boltMeta
	var ok1 bool
	if ok0 {
		m1, ok1 = read(ps)
	} else {
		for off := int64(1024); off <= 1<<16 && off < size-1024; off <<= 1 {
			if m1, ok1 = read(off); ok1 {
				ps = int64(m1.pageSize)
				break
			}
		}
	}
	var m boltMeta
	switch {
	case ok0 && ok1 && m1.txid > m0.txid, !ok0 && ok1:
		m = m1
	case ok0:
		m = m0
	default:
		return boltMeta{}, damagef("neither of its meta pages is valid")
	}
	if !ok0 {
		m.bad = append(m.bad, 0)
	}
	if !ok1 {
		m.bad = append(m.bad, 1)
	}
	if int64(m.pageSize) != ps {
		return boltMeta{}, damagef("its meta pages disagree on the page size (%d and %d)", ps, m.pageSize)
	}
	return m, nil
}

// checkLength refuses a file shorter than the pages its meta page says it
// has: bbolt would map it and fault on the first page past the end.
func checkLength(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	if size == 0 {
		return damagef("it is empty")
	}
	m, err := pickMeta(f, size)
	if err != nil {
		return err
	}
	ps := int64(m.pageSize)
	switch need := int64(m.hwm) * ps; {
	case m.hwm < 4 || m.hwm > uint64(1<<62)/uint64(ps):
		return damagef("its meta page counts %d pages", m.hwm)
	case size < need:
		return damagef("it is %d bytes, but its %d pages take %d: it was cut short", size, m.hwm, need)
	case m.root < 2 || m.root >= m.hwm, m.freelist != noFreelist && (m.freelist < 2 || m.freelist >= m.hwm):
		return damagef("its meta page names pages past its last one")
	}
	return nil
}

// openChecked is bbolt's OpenFile: it opens the file and checks its
// length before bbolt reads more than the meta pages.
func openChecked(opened **os.File) func(string, int, os.FileMode) (*os.File, error) {
	return func(name string, flag int, mode os.FileMode) (*os.File, error) {
		f, err := os.OpenFile(name, flag, mode)
		if err != nil {
			return nil, err
		}
		if err := checkLength(f); err != nil {
			f.Close()
			return nil, err
		}
		*opened = f
		return f, nil
	}
}

// guard is deferred around every call into bbolt: it makes a fault on the
// mapping a panic for this goroutine, and turns a panic raised by bbolt
// (or a fault) into the damaged-store error. Any other panic is a bug of
// rukh's and goes on. Use: defer s.guard(&err)().
func (s *Store) guard(err *error) func() {
	old := debug.SetPanicOnFault(true)
	return func() {
		debug.SetPanicOnFault(old)
		r := recover()
		if r == nil {
			return
		}
		if !fromBolt(r) {
			panic(r)
		}
		*err = s.damaged(damagef("reading it failed: %v", r))
	}
}

// fromBolt reports whether the panic being recovered was a fault or was
// raised in bbolt's code. Called from the deferred function only.
func fromBolt(r any) bool {
	if _, fault := r.(interface{ Addr() uintptr }); fault {
		return true
	}
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	panicking := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic":
			panicking = true
		case panicking && !strings.HasPrefix(f.Function, "runtime."):
			return strings.HasPrefix(f.Function, "go.etcd.io/bbolt")
		}
		if !more {
			return false
		}
	}
}

// verifyPages reads every page the newest state of the file at path can
// reach (every bucket's B+tree, the freelist), with pread, and checks that
// each is where it says and holds only elements inside itself: what bbolt
// assumes without checking. The caller holds the file's lock.
func verifyPages(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	m, err := pickMeta(f, fi.Size())
	if err != nil {
		return err
	}
	if len(m.bad) == 1 {
		return damagef("meta page %d is not valid: rukh reads the other one, the state before the last write, which the next write replaces", m.bad[0])
	}
	t := &snapTx{f: f, m: m.snapMeta, cache: &snapPages{}}
	defer t.release()
	if err := t.walk(t.root(), 0); err != nil {
		return err
	}
	if m.freelist != noFreelist {
		return t.checkFreelist(m.freelist)
	}
	return nil
}

func (t *snapTx) walk(b *snapBucket, depth int) error {
	if depth > 64 {
		return damagef("its buckets nest deeper than rukh makes them")
	}
	c := b.cursor()
	for k, _, isB := c.first(); k != nil; k, _, isB = c.next() {
		if !isB {
			continue
		}
		nb := b.bucket(k)
		if nb == nil {
			return t.bucketDamage(b, k)
		}
		if err := t.walk(nb, depth+1); err != nil {
			return err
		}
	}
	if t.bad {
		return t.pageDamage(b)
	}
	return nil
}

func (t *snapTx) bucketDamage(b *snapBucket, k []byte) error {
	if t.bad {
		return t.pageDamage(b)
	}
	return damagef("bucket %q has a malformed header", k)
}

func (t *snapTx) pageDamage(b *snapBucket) error {
	if t.badPage != 0 {
		return damagef("page %d is not a page of this file's state, or is malformed", t.badPage)
	}
	return damagef("a page of the bucket at page %d is malformed", b.root)
}

// checkFreelist checks the freelist page: its ids are pages of the file.
func (t *snapTx) checkFreelist(id uint64) error {
	ps := int64(t.m.pageSize)
	p := make([]byte, ps)
	ne := binary.NativeEndian
	if n, _ := t.f.ReadAt(p, int64(id)*ps); int64(n) != ps || ne.Uint64(p) != id || ne.Uint16(p[8:]) != pageFreelist {
		return damagef("its freelist page %d is not a freelist", id)
	}
	over := uint64(ne.Uint32(p[12:]))
	if id+over >= t.m.hwm {
		return damagef("its freelist page %d runs past its last page", id)
	}
	full := make([]byte, int64(over+1)*ps)
	if n, _ := t.f.ReadAt(full, int64(id)*ps); n != len(full) {
		return damagef("its freelist page %d runs past its end", id)
	}
	count, start := uint64(ne.Uint16(full[10:])), uint64(pageHeader)
	if count == 0xFFFF { // the real count is the first element
		count, start = ne.Uint64(full[pageHeader:]), pageHeader+8
	}
	if count > (uint64(len(full))-start)/8 {
		return damagef("its freelist page %d counts %d free pages, more than it holds", id, count)
	}
	for i := range count {
		if free := ne.Uint64(full[start+i*8:]); free < 2 || free >= t.m.hwm {
			return damagef("its freelist names page %d, not a page of the file", free)
		}
	}
	return nil
}

// HomeFiles names the bbolt files of the home (*.db) other than the
// store's own file: tasks.db, and any other a rukh left there.
func (s *Store) HomeFiles() ([]string, error) {
	ents, err := os.ReadDir(s.home)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, s.internal("cannot list the home", err)
	}
	var names []string
	for _, e := range ents {
		p := filepath.Join(s.home, e.Name())
		if !e.Type().IsRegular() || filepath.Ext(e.Name()) != ".db" || (p == s.path && !s.Shared()) {
			continue
		}
		names = append(names, e.Name())
	}
	return names, nil
}

// CheckFile checks the home's bbolt file name (HomeFiles): its length,
// every page it can reach, and bbolt's own consistency check.
func (s *Store) CheckFile(name string) error {
	f := &Store{home: s.home, path: filepath.Join(s.home, name), Timeout: s.Timeout}
	f.be = boltFile{f}
	_, err := f.be.view(func(tx txn) error {
		c, ok := tx.(checker)
		if !ok {
			return nil
		}
		if err := c.check(); errors.Is(err, ErrDamaged) {
			return f.damaged(err)
		} else if err != nil {
			return f.broken("backend consistency: %v", err)
		}
		return nil
	})
	return err
}
