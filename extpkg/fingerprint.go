package extpkg

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/rukh-dev/rukh/kernel"
)

// An installed copy's fingerprint is what every call checks before it runs
// the copy, instead of hashing it: device, inode, mode, size, ctime and
// mtime of each of its directories and files. Any write, chmod, rename or
// replacement of an entry changes its ctime (which no unprivileged call can
// set back), and adding or removing an entry changes its directory's, so
// checking the recorded entries with lstat alone, without reading a
// directory, is enough to notice a changed copy.
//
// The fingerprint lives beside the copy, in releasesDir/.fp-h1-<hex>, not in
// it: the copy holds exactly what its digest covers. It guards against
// accidents and tools, not against someone who can write the home (they
// could rewrite the fingerprint too).

const (
	fingerprintPrefix = ".fp-"
	fingerprintHeader = "rukh-fingerprint 1 "
)

// errNoFingerprint: the copy was installed by a rukh that recorded none.
var errNoFingerprint = errors.New("no fingerprint recorded")

// FingerprintPath is the fingerprint file of the installed copy dir.
func FingerprintPath(dir string) string {
	return filepath.Join(filepath.Dir(dir), fingerprintPrefix+filepath.Base(dir))
}

// RecordFingerprint fingerprints the installed copy dir as it is now and
// stores it, replacing any earlier one. Call it once the copy is in its
// final place and final modes: a chmod or a rename changes ctimes.
func RecordFingerprint(dir, digest string) error {
	buf := []byte(fingerprintHeader + digest + "\n")
	var visit func(rel string) error
	visit = func(rel string) error {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		var st fileStamp
		if err := lstamp(p, &st); err != nil {
			return err
		}
		buf = st.append(buf)
		buf = append(buf, ' ')
		buf = append(buf, rel...)
		buf = append(buf, '\n')
		if !st.isDir() {
			return nil
		}
		des, err := os.ReadDir(p)
		if err != nil {
			return err
		}
		for _, de := range des {
			child := de.Name()
			if rel != "." {
				child = rel + "/" + child
			}
			if err := visit(child); err != nil {
				return err
			}
		}
		return nil
	}
	if err := visit("."); err != nil {
		return kernel.Errorf(kernel.CodeInternal, "cannot fingerprint the installed copy").AtPath(dir).Wrap(err)
	}
	if err := writeReadOnly(FingerprintPath(dir), buf); err != nil {
		return kernel.Errorf(kernel.CodeInternal, "cannot record the fingerprint of the installed copy").
			AtPath(dir).
			Wrap(err)
	}
	return nil
}

// writeReadOnly replaces path with data through a temporary file and a
// rename, so a reader sees the old content or the new, never a part. The
// temporary file goes on every failure (a full disk fails the write).
func writeReadOnly(path string, data []byte) (err error) {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := path + ".tmp-" + hex.EncodeToString(rnd[:])
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	_, err = writeTo(f, bytes.NewReader(data))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// CheckFingerprint compares the installed copy dir with its recorded
// fingerprint: nil when nothing changed since it was recorded. It reads
// one small file and lstats each entry; it reads no directory and hashes
// nothing.
func CheckFingerprint(dir, digest string) error {
	data, err := readFingerprint(FingerprintPath(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return errNoFingerprint
	}
	if err != nil {
		return err
	}
	header, rest, ok := bytes.Cut(data, []byte{'\n'})
	if !ok || string(header) != fingerprintHeader+digest {
		return errors.New("the recorded fingerprint is of another copy")
	}
	var line, cur []byte
	var changed changedError
	path := make([]byte, 0, len(dir)+64)
	for len(rest) > 0 {
		line, rest, ok = bytes.Cut(rest, []byte{'\n'})
		if !ok {
			return errors.New("the recorded fingerprint is truncated")
		}
		// six numbers, then the path (which may hold spaces)
		i, n := 0, 0
		for ; i < len(line) && n < 6; i++ {
			if line[i] == ' ' {
				n++
			}
		}
		if n < 6 {
			return errors.New("the recorded fingerprint is malformed")
		}
		rel := line[i:]
		path = append(path[:0], dir...)
		if string(rel) != "." {
			path = append(path, filepath.Separator)
			path = append(path, filepath.FromSlash(string(rel))...)
		}
		var st fileStamp
		if err := lstamp(string(path), &st); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				changed.add(string(rel), false)
				continue
			}
			return err
		}
		cur = st.append(cur[:0])
		if !bytes.Equal(cur, line[:i-1]) {
			changed.add(string(rel), st.isDir())
		}
	}
	if len(changed.files)+len(changed.dirs) > 0 {
		return &changed
	}
	return nil
}

// fingerprints keeps the fingerprint files a process read, by path, with
// the stamp each had then: a server checks the same copies call after
// call, and an lstat of the file replaces its open, read and close. A
// fingerprint is only ever replaced by a rename (writeReadOnly), which
// changes the stamp.
var fingerprints struct {
	mu sync.Mutex
	m  map[string]cachedFingerprint
}

type cachedFingerprint struct {
	st   fileStamp
	data []byte
}

const maxCachedFingerprints = 256

func readFingerprint(path string) ([]byte, error) {
	var st fileStamp
	if lstamp(path, &st) != nil {
		return os.ReadFile(path) // says what is wrong
	}
	fingerprints.mu.Lock()
	c, ok := fingerprints.m[path]
	fingerprints.mu.Unlock()
	if ok && c.st == st {
		return c.data, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var now fileStamp
	if lstamp(path, &now) == nil && now == st {
		fingerprints.mu.Lock()
		if fingerprints.m == nil || len(fingerprints.m) >= maxCachedFingerprints {
			fingerprints.m = map[string]cachedFingerprint{}
		}
		fingerprints.m[path] = cachedFingerprint{st: st, data: data}
		fingerprints.mu.Unlock()
	}
	return data, nil
}

// changedError names the entries that differ from the fingerprint: the
// files, or when only directories changed (an entry added, removed or
// renamed, a chmod) those.
type changedError struct{ files, dirs []string }

func (e *changedError) add(rel string, dir bool) {
	if dir {
		e.dirs = append(e.dirs, rel)
	} else {
		e.files = append(e.files, rel)
	}
}

func (e *changedError) Error() string {
	names := e.files
	if len(names) == 0 {
		names = e.dirs
	}
	var b []byte
	for i, rel := range names {
		if i == 3 {
			b = append(b, " and "+strconv.Itoa(len(names)-i)+" more"...)
			break
		}
		if i > 0 {
			b = append(b, ", "...)
		}
		if rel == "." {
			b = append(b, "its top directory"...)
		} else {
			b = strconv.AppendQuote(b, rel)
		}
	}
	return string(b) + yesno(len(names) > 1, " were changed", " was changed")
}

func yesno(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}

// VerifyCopy is the check before each call of an installed copy: nil when
// the copy dir is still exactly what was installed with digest.
//
// The fast path is CheckFingerprint. When the fingerprint is missing (a
// copy installed before rukh recorded them) or differs, the full digest
// decides: a copy whose content still matches (a home copied with cp -a or
// restored from a backup gets new inodes and ctimes; a chmod u+w changes
// nothing that runs) is fingerprinted again and runs; any other change is
// refused, and keeps being refused until the package is installed again.
func VerifyCopy(dir, digest string) error {
	ferr := CheckFingerprint(dir, digest)
	if ferr == nil {
		return nil
	}
	if err := CheckInstalled(dir, digest); err != nil {
		var ce *changedError
		if errors.As(ferr, &ce) {
			// what changed says more than the digest it now has
			return kernel.Errorf(kernel.CodeConflict, "%v since it was installed", ce)
		}
		return err
	}
	// Best effort: a home we may not write still runs, just hashing again.
	_ = RecordFingerprint(dir, digest)
	return nil
}

// removeFingerprint deletes the fingerprint of dir, if any.
func removeFingerprint(dir string) {
	_ = os.Remove(FingerprintPath(dir))
}
