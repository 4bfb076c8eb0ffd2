package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// boltFile is the default backend: one bbolt file in the home, opened per
// operation with a timeout and closed before the operation returns.
type boltFile struct{ s *Store }

func (b boltFile) where() string { return b.s.path }

// batch: bbolt takes any number of writes; the bound keeps publish memory flat.
func (b boltFile) batch() (ops, bytes int) { return 1 << 30, 4 << 20 }

func (s *Store) openError(err error) error {
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return s.busy()
	case errors.Is(err, ErrDamaged), errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrVersionMismatch):
		return s.damaged(err)
	case errors.Is(err, fs.ErrPermission):
		return kernel.Errorf(kernel.CodeUnavailable, "cannot open the store: permission denied").AtPath(s.path).Wrap(err).
			WithHint("check who owns the rukh home and its rukh.db, or point RUKH_HOME at a home you can write")
	}
	return s.internal("cannot open the store", err)
}

// open takes the in-process gate, then bbolt's file lock, sharing one
// deadline. It reports (nil, nil) when a read finds no file.
func (b boltFile) open(write bool) (*bolt.DB, func(), error) {
	db, _, done, err := b.openFile(write)
	return db, done, err
}

// openFile is open, with the file bbolt opened (bbolt's to close).
func (b boltFile) openFile(write bool) (*bolt.DB, *os.File, func(), error) {
	s := b.s
	if err := b.s.checkHome(); err != nil {
		return nil, nil, nil, err
	}
	deadline := time.Now().Add(s.timeout())
	g := gateFor(s.path)
	if !g.acquire(write, deadline) {
		return nil, nil, nil, s.busy()
	}
	done := func() { g.release(write) }
	if write {
		if err := b.create(deadline); err != nil {
			done()
			return nil, nil, nil, err
		}
	}
	remaining := time.Until(deadline)
	if remaining <= 0 {
		done()
		return nil, nil, nil, s.busy()
	}
	db, f, err := b.boltOpen(remaining, write)
	if err != nil {
		done()
		if !write && errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil, nil
		}
		return nil, nil, nil, s.openError(err)
	}
	return db, f, done, nil
}

// boltOpen opens the file through bbolt once its length is checked; a
// panic of bbolt's while it opens (a damaged freelist) closes the file, so
// that its lock does not outlive the error.
func (b boltFile) boltOpen(timeout time.Duration, write bool) (db *bolt.DB, f *os.File, err error) {
	defer func() {
		if err != nil && db == nil && f != nil {
			f.Close()
		}
	}()
	defer b.s.guard(&err)()
	db, err = bolt.Open(b.s.path, 0o600, &bolt.Options{Timeout: timeout, ReadOnly: !write, OpenFile: openChecked(&f)})
	return db, f, err
}

// run runs fn (a transaction) and closes db, bbolt's panics made errors.
func (b boltFile) run(db *bolt.DB, fn func() error) (err error) {
	func() {
		defer b.s.guard(&err)()
		err = fn()
	}()
	var cerr error
	func() {
		defer b.s.guard(&cerr)()
		cerr = db.Close()
	}()
	if err == nil && cerr != nil {
		if errors.Is(cerr, ErrDamaged) {
			return cerr
		}
		return b.s.internal("cannot close the store", cerr)
	}
	return err
}

// view runs fn in one read-only transaction. It reports false, without
// creating anything, when the store file does not exist yet.
func (b boltFile) view(fn func(tx txn) error) (bool, error) {
	s := b.s
	if s.snapshot.Load() && s.checkHome() == nil {
		if ok, err := b.snapshotView(fn); ok {
			return true, err
		}
	}
	db, done, err := b.open(false)
	if err != nil || db == nil {
		return false, err
	}
	defer done()
	return true, b.run(db, func() error { return db.View(func(tx *bolt.Tx) error { return fn(boltTx{tx: tx}) }) })
}

// update runs fn in one read-write transaction, creating the file first.
func (b boltFile) update(fn func(tx txn) error) error {
	db, f, done, err := b.openFile(true)
	if err != nil {
		return err
	}
	defer done()
	return b.run(db, func() error { return db.Update(func(tx *bolt.Tx) error { return fn(boltTx{tx: tx, file: f}) }) })
}

// create makes the store file if it is missing. The file is built under a
// temporary name and linked into place only once it is complete, so a crash
// during creation never leaves a half-initialised rukh.db behind.
func (b boltFile) create(deadline time.Time) error {
	s := b.s
	if _, err := os.Stat(s.path); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return s.internal("cannot stat the store", err)
	}
	if err := os.MkdirAll(s.home, 0o700); err != nil {
		return s.internal("cannot create the home", err)
	}
	f, err := os.CreateTemp(s.home, DBName+".init-*")
	if err != nil {
		return s.internal("cannot create the store", err)
	}
	tmp := f.Name()
	f.Close()
	defer os.Remove(tmp)
	db, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: max(time.Until(deadline), time.Millisecond)})
	if err != nil {
		return s.openError(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bucketMeta).Put(keySchema, []byte(strconv.Itoa(SchemaVersion))); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keyUntrusted, noUntrusted) // no releases yet: the list is current
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return s.internal("cannot initialise the store", err)
	}
	// Link, not rename: if another process created the store meanwhile, its
	// file (possibly already written to) wins.
	if err := os.Link(tmp, s.path); err != nil && !errors.Is(err, fs.ErrExist) {
		if _, serr := os.Stat(s.path); errors.Is(serr, fs.ErrNotExist) {
			if rerr := os.Rename(tmp, s.path); rerr != nil {
				return s.internal("cannot create the store", rerr)
			}
		}
	}
	syncDir(s.home)
	b.removeStaleInitFiles()
	return nil
}

// removeStaleInitFiles deletes creation leftovers of processes killed
// mid-creation; young ones may belong to a creation still running.
func (b boltFile) removeStaleInitFiles() {
	s := b.s
	ents, err := os.ReadDir(s.home)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), DBName+".init-") {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > time.Minute {
			_ = os.Remove(filepath.Join(s.home, e.Name()))
		}
	}
}

// boltTx, boltBucket and the *bolt.Cursor are the kv interfaces.
type boltTx struct {
	tx   *bolt.Tx
	file *os.File // the file a write transaction commits to, else nil
}

// id is the transaction's id: a write transaction's is the txid its
// commit puts in the meta page.
func (t boltTx) id() uint64 { return uint64(t.tx.ID()) }

// committedTo is the file a write transaction commits to: its device and
// inode, as a Stamp names them.
func (t boltTx) committedTo() (dev, ino uint64, ok bool) {
	if t.file == nil {
		return 0, 0, false
	}
	return fileIdentity(t.file)
}

func (t boltTx) Bucket(name []byte) bucket {
	if b := t.tx.Bucket(name); b != nil {
		return boltBucket{b}
	}
	return nil
}

func (t boltTx) CreateBucketIfNotExists(name []byte) (bucket, error) {
	b, err := t.tx.CreateBucketIfNotExists(name)
	if err != nil {
		return nil, err
	}
	return boltBucket{b}, nil
}

func (t boltTx) ForEach(fn func(name []byte, b bucket) error) error {
	return t.tx.ForEach(func(name []byte, b *bolt.Bucket) error { return fn(name, boltBucket{b}) })
}

func (t boltTx) check() error {
	// bbolt's checker runs in a goroutine of its own, where a fault cannot
	// be recovered: the pages it follows are checked first.
	if err := verifyPages(t.tx.DB().Path()); err != nil {
		return err
	}
	// Drain the whole channel so bbolt's checker goroutine ends.
	var first error
	for err := range t.tx.Check() {
		if first == nil {
			first = err
		}
	}
	return first
}

type boltBucket struct{ *bolt.Bucket }

func (b boltBucket) Cursor() cursor { return b.Bucket.Cursor() }

func (b boltBucket) Stats() bucketStats {
	st := b.Bucket.Stats()
	return bucketStats{KeyN: st.KeyN, Bytes: st.LeafInuse + st.BranchInuse}
}

// Appending: keys put in order fill pages instead of splitting them.
func (b boltBucket) Appending() { b.FillPercent = 0.9 }
