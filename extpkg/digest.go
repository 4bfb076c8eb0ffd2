package extpkg

import (
	"encoding/base64"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/sumdb/dirhash"

	"github.com/rukh-dev/rukh/kernel"
)

// Names of the synthetic digest entries (see the package doc). They start
// with "/", which no package path can.
const (
	digestExecutable = "/rukh/executable"
	digestSymlinks   = "/rukh/symlinks"
)

// Digest returns the h1: digest of the package files at root. files are
// slash-separated paths relative to root (Package.Files); the signature
// file is skipped, since the signature signs the digest. Symlinks are
// hashed by their target text and executable bits are hashed too (see the
// package doc).
func Digest(root string, files []string) (string, error) {
	return digest(root, files, &defaultLimits)
}

func digest(root string, files []string, lim *limits) (string, error) {
	var regular, exec, links []string
	seen := make(map[string]bool, len(files))
	for _, rel := range files {
		if rel == kernel.SignatureFile {
			continue
		}
		if err := checkRel(rel, lim); err != nil {
			return "", err
		}
		if seen[rel] {
			return "", invalid(rel, "duplicate entry %q", rel)
		}
		seen[rel] = true
		full := filepath.Join(root, filepath.FromSlash(rel))
		fi, err := os.Lstat(full)
		if err != nil {
			return "", internal(rel, err)
		}
		switch m := fi.Mode(); {
		case m.IsRegular():
			regular = append(regular, rel)
			if m.Perm()&0o100 != 0 {
				exec = append(exec, rel)
			}
		case m&os.ModeSymlink != 0:
			target, err := os.Readlink(full)
			if err != nil {
				return "", internal(rel, err)
			}
			if err := checkLinkTarget(rel, target, lim); err != nil {
				return "", err
			}
			links = append(links, rel+"\x00"+target)
		case m.IsDir():
			return "", invalid(rel, "%q is a directory, not a file", rel)
		default:
			return "", refuseType(rel, m)
		}
	}
	synthetic := map[string]string{}
	if len(exec) > 0 {
		slices.Sort(exec)
		synthetic[digestExecutable] = strings.Join(exec, "\n") + "\n"
		regular = append(regular, digestExecutable)
	}
	if len(links) > 0 {
		slices.Sort(links) // NUL sorts first, so this is by path
		synthetic[digestSymlinks] = strings.Join(links, "\n") + "\n"
		regular = append(regular, digestSymlinks)
	}
	return dirhash.Hash1(regular, func(name string) (io.ReadCloser, error) {
		if s, ok := synthetic[name]; ok {
			return io.NopCloser(strings.NewReader(s)), nil
		}
		return openRegular(root, name, lim.fileBytes)
	})
}

// ReleaseDirName returns the file name of the installed copy with the given
// digest: "h1-" and the hash in lowercase hex.
func ReleaseDirName(digest string) (string, error) {
	sum, err := parseDigest(digest)
	if err != nil {
		return "", err
	}
	return "h1-" + hex.EncodeToString(sum), nil
}

func parseDigest(digest string) ([]byte, error) {
	b64, ok := strings.CutPrefix(digest, "h1:")
	if ok {
		sum, err := base64.StdEncoding.Strict().DecodeString(b64)
		if err == nil && len(sum) == 32 {
			return sum, nil
		}
	}
	return nil, kernel.Errorf(kernel.CodeInvalid, "%q is not an h1: package digest", digest)
}

// limitedFile reads a regular file and fails once it has more than max
// bytes, so a file growing after it was checked cannot slip past a limit.
type limitedFile struct {
	f   *os.File
	rel string
	n   int64
	max int64
}

func (l *limitedFile) Read(p []byte) (int, error) {
	if int64(len(p)) > l.max-l.n+1 {
		p = p[:l.max-l.n+1]
	}
	n, err := l.f.Read(p)
	l.n += int64(n)
	if l.n > l.max {
		return 0, invalid(l.rel, "file %q is larger than %d bytes", l.rel, l.max)
	}
	if err != nil && err != io.EOF {
		return n, internal(l.rel, err)
	}
	return n, err
}

func (l *limitedFile) Close() error { return l.f.Close() }

// openRegular opens root/rel only if it is a regular file and the file
// opened is the one checked (no symlink swapped in between).
func openRegular(root, rel string, max int64) (*limitedFile, error) {
	full := filepath.Join(root, filepath.FromSlash(rel))
	before, err := os.Lstat(full)
	if err != nil {
		return nil, internal(rel, err)
	}
	if !before.Mode().IsRegular() {
		return nil, invalid(rel, "%q is not a regular file", rel)
	}
	f, err := os.Open(full)
	if err != nil {
		return nil, internal(rel, err)
	}
	after, err := f.Stat()
	if err != nil || !os.SameFile(before, after) {
		f.Close()
		return nil, invalid(rel, "%q changed while it was being read", rel)
	}
	return &limitedFile{f: f, rel: rel, max: max}, nil
}
