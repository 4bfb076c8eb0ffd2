// Package store owns Rukh's home state: installed releases, trusted
// publisher keys, the draft (activations and profile), immutable published
// revisions, the active-revision pointer, agents and their credentials,
// tasks, the audit log, the owner's settings of extensions (sensitive ones
// sealed, under a key the store never holds: settingskey.go) and the secret
// that keys cursor MACs. Its records are written once against a small
// transaction interface (kv.go) with two backends: a bbolt file in the home
// (the default), and, built with -tags etcd, a key prefix of an etcd
// cluster that several machines share (OpenEtcd). It is the only package
// that imports go.etcd.io/bbolt or the etcd client.
//
// The bbolt file is opened per operation with a timeout and closed before
// the operation returns, so no long-lived process (serve-mcp) ever holds it;
// such a process learns of a publish from WatchActive (file notifications on
// the home, inotify on Linux and kqueue on macOS and the BSDs, not a polling
// loop, where the platform has them; etcd's own watch on a shared store).
// Every mutation is one serializable transaction that commits all or
// nothing, so a crash at any instant leaves the previous state intact. The
// store knows nothing of policy: manifests and revision bindings are opaque
// bytes.
//
// store imports kernel and nothing else from Rukh; it is the only package
// that seals and opens sensitive settings (golang.org/x/crypto).
package store

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rukh-dev/rukh/kernel"
)

const (
	// DBName is the store file inside the home.
	DBName = "rukh.db"
	// DefaultTimeout bounds how long an operation waits for the file lock:
	// long enough for a queue of writers (many servers flushing audit
	// records at once) to pass, short enough that a stuck holder is named.
	DefaultTimeout = 5 * time.Second
	// SchemaVersion is the layout this code writes: 2 stores revisions as
	// indexes (index.go), 3 keeps a listed tool's body only in its list
	// page's object, which older code would take for a missing body. It
	// still reads 2, and 1, whose revisions are one blob.
	SchemaVersion = 3
)

var (
	bucketMeta      = []byte("meta")
	bucketReleases  = []byte("releases")  // "name@version" → releaseRec JSON
	bucketDigests   = []byte("digests")   // Release.Ref (digest, or "dev:"+digest) → "name@version"
	bucketKeys      = []byte("keys")      // key name → keyRec JSON
	bucketRevisions = []byte("revisions") // 8-byte big-endian number → revisionRec JSON
	bucketBindings  = []byte("bindings")  // 8-byte big-endian number → raw binding

	allBuckets = [][]byte{bucketMeta, bucketReleases, bucketDigests, bucketKeys, bucketRevisions, bucketBindings,
		bucketGens, bucketObjects, bucketPending, bucketSettings}

	keySchema = []byte("schema")
	keyActive = []byte("active")
	keySecret = []byte("secret")
	keyDraft  = []byte("draft")
	// keyUntrusted lists the installed releases whose signing key is no
	// longer trusted, kept with every trust change so a call checks its
	// release with one read.
	keyUntrusted = []byte("untrusted")
)

// Store is a handle on a Rukh home. It holds no open file between calls, so
// it is cheap, safe for concurrent use, and never blocks other processes for
// longer than one operation.
type Store struct {
	home string
	path string
	// Timeout bounds the wait for the file lock (zero means DefaultTimeout;
	// bbolt's own zero would wait forever).
	Timeout time.Duration

	be     backend
	reads  counter
	stamps stampState
	safe   atomic.Bool // the home passed checkHome once
	// revGens maps revision numbers to their index generations (openIndex).
	revGens sync.Map
	// hdrs: decoded revision headers, shared by opens (indexread.go).
	hdrs [sharedHeaders]atomic.Pointer[sharedHeader]
	// snapshot: views read the file with pread (snapshot.go).
	snapshot  atomic.Bool
	snapPages snapPages
	// held: the hold files this handle has open, shared by its calls.
	held heldFiles
}

// New returns a store rooted at home. It opens and creates nothing: the home
// (0700) and the file (0600) appear on the first write.
func New(home string) *Store {
	if abs, err := filepath.Abs(home); err == nil {
		home = abs
	}
	s := &Store{home: home, path: filepath.Join(home, DBName), Timeout: DefaultTimeout}
	s.be = boltFile{s}
	return s
}

// Home returns the home directory.
func (s *Store) Home() string { return s.home }

// Path returns the bbolt file path, or the etcd store's URL.
func (s *Store) Path() string { return s.path }

// Shared reports whether the store is shared between machines (etcd).
func (s *Store) Shared() bool {
	_, ok := s.be.(sharedBackend)
	return ok
}

// Close ends the store's connection (etcd); a bbolt store holds nothing
// open between calls but the descriptor its stamps read. Holds this process took on etcd end with it.
func (s *Store) Close() error {
	s.stamps.close()
	s.held.closeIdle()
	if e, ok := s.be.(sharedBackend); ok {
		return e.close()
	}
	return nil
}

// Exists reports whether the home has a store file yet; it creates nothing.
func (s *Store) Exists() (bool, error) {
	if e, ok := s.be.(sharedBackend); ok {
		return e.exists()
	}
	_, err := os.Stat(s.path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, s.openError(err)
}

// ReleasesDir is where installed release copies live (written by extpkg).
func (s *Store) ReleasesDir() string { return filepath.Join(s.home, "releases") }

// DevReleasesDir is where development release copies live, apart from
// installed ones so that the same content can be both without sharing a
// directory that either could remove.
func (s *Store) DevReleasesDir() string { return filepath.Join(s.home, "dev-releases") }

// RevisionID is the text id of revision n ("r7"), the activeProfileRevision
// that tool fingerprints embed.
func RevisionID(n uint64) string { return "r" + strconv.FormatUint(n, 10) }

// ParseRevisionID accepts "r7" or "7".
func ParseRevisionID(s string) (uint64, error) {
	t := s
	if len(t) > 1 && t[0] == 'r' {
		t = t[1:]
	}
	n, err := strconv.ParseUint(t, 10, 64)
	if err != nil || n == 0 || (len(t) > 1 && t[0] == '0') {
		return 0, kernel.Errorf(kernel.CodeInvalid, "invalid revision %q (want r1, r2, …)", s)
	}
	return n, nil
}

func (s *Store) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return DefaultTimeout
}

// busy is the error for a lock that was not granted in time.
func (s *Store) busy() error {
	return kernel.Errorf(kernel.CodeUnavailable, "the store is busy (another rukh holds it)").
		AtPath(s.be.where()).
		WithHint("wait for the other rukh command to finish and retry; a long-running command (publish, install) holds the store only while it writes")
}

func (s *Store) internal(msg string, err error) error {
	return kernel.Errorf(kernel.CodeInternal, "%s", msg).AtPath(s.be.where()).Wrap(err)
}

// view runs fn on one consistent snapshot of the store. It reports false,
// without creating anything, when the store does not exist yet.
func (s *Store) view(fn func(tx txn) error) (bool, error) {
	return s.be.view(func(tx txn) error {
		if err := s.checkSchema(tx); err != nil {
			return err
		}
		return fn(tx)
	})
}

// update runs fn in one write transaction, creating the store first if
// needed. fn's error rolls the whole transaction back.
func (s *Store) update(fn func(tx txn) error) error {
	err := s.be.update(func(tx txn) error {
		if err := s.initSchema(tx); err != nil {
			return err
		}
		if err := s.checkSchema(tx); err != nil {
			return err
		}
		for _, b := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return s.internal("cannot create bucket "+string(b), err)
			}
		}
		return fn(tx)
	})
	if err != nil {
		var ke *kernel.Error
		if !errors.As(err, &ke) {
			err = s.internal("store transaction failed", err)
		}
	}
	return err
}

// initSchema stamps a store that has no meta bucket yet (etcd's first
// write; a bbolt file is stamped when it is created).
func (s *Store) initSchema(tx txn) error {
	if tx.Bucket(bucketMeta) != nil {
		return nil
	}
	meta, err := tx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return err
	}
	if err := meta.Put(keySchema, []byte(strconv.Itoa(SchemaVersion))); err != nil {
		return err
	}
	return meta.Put(keyUntrusted, noUntrusted) // no releases yet: the list is current
}

// noUntrusted is the empty list of untrusted releases, which a new store
// starts with.
var noUntrusted = []byte("[]")

func (s *Store) checkSchema(tx txn) error {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		return s.internal("the file is not a rukh store (no meta bucket)", nil)
	}
	raw := meta.Get(keySchema)
	v, err := strconv.ParseUint(string(raw), 10, 32)
	if err != nil || v == 0 {
		return s.internal(fmt.Sprintf("the store has an unreadable schema version %q", raw), nil)
	}
	if v > SchemaVersion {
		return kernel.Errorf(kernel.CodeUnsupported, "the store has schema version %d, newer than this rukh supports (%d)", v, SchemaVersion).
			AtPath(s.path).WithHint("use the newer rukh that wrote it, or point RUKH_HOME at another home")
	}
	return nil
}

// syncDir makes a new directory entry durable; failure only weakens
// durability across power loss, never consistency, so it is ignored.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

func itob(n uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, n)
	return b
}

func btoi(b []byte) (uint64, bool) {
	if len(b) != 8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(b), true
}

// Secret returns the store's 32-byte random secret (the key for cursor
// MACs), creating it on the first call.
func (s *Store) Secret() ([]byte, error) {
	var out []byte
	if _, err := s.view(func(tx txn) error {
		if v := tx.Bucket(bucketMeta).Get(keySecret); v != nil {
			out = append([]byte(nil), v...)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if out != nil {
		return out, nil
	}
	err := s.update(func(tx txn) error {
		meta := tx.Bucket(bucketMeta)
		if v := meta.Get(keySecret); v != nil {
			out = append([]byte(nil), v...)
			return nil
		}
		out = make([]byte, 32)
		if _, err := rand.Read(out); err != nil {
			return s.internal("cannot read random bytes", err)
		}
		return meta.Put(keySecret, out)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
