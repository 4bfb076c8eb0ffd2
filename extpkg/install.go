package extpkg

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/rukh-dev/rukh/kernel"
)

// Install copies p into releasesDir/ReleaseDirName(p.Digest) and makes the
// copy read-only (files 0444, executables 0555, directories 0555). The copy
// is built in a temporary directory beside it, its digest is checked
// against p.Digest (the source may have changed since Load), and it is
// renamed into place, so the release directory either does not exist or is
// complete. If it already exists, its digest is verified and existed is
// true: installing the same digest twice is a no-op. Either way the copy's
// fingerprint is recorded (see VerifyCopy). rukh-extension.sig is not
// copied. Call Install before p.Close: a tarball's files live in the
// scratch copy.
func Install(p *Package, releasesDir string) (dir string, existed bool, err error) {
	name, err := ReleaseDirName(p.Digest)
	if err != nil {
		return "", false, err
	}
	dir = filepath.Join(releasesDir, name)
	damaged := false
	if _, err := os.Lstat(dir); err == nil {
		if CheckInstalled(dir, p.Digest) == nil {
			// The content is right; a missing or stale fingerprint (an
			// older rukh, a copied home) is recorded again.
			if CheckFingerprint(dir, p.Digest) != nil {
				if err := RecordFingerprint(dir, p.Digest); err != nil {
					return "", false, err
				}
			}
			return dir, true, nil
		}
		// Installing the same verified package again repairs a copy that
		// was changed or partly deleted behind rukh's back.
		damaged = true
	}
	if err := os.MkdirAll(releasesDir, 0o755); err != nil {
		return "", false, kernel.Errorf(kernel.CodeInternal, "cannot create releases directory").Wrap(err)
	}
	tmp, err := os.MkdirTemp(releasesDir, ".tmp-"+name+"-")
	if err != nil {
		return "", false, kernel.Errorf(kernel.CodeInternal, "cannot create release directory").Wrap(err)
	}
	defer func() {
		if tmp != "" {
			removeTree(tmp)
		}
	}()
	var files []string
	for _, rel := range p.Files {
		if rel != kernel.SignatureFile {
			files = append(files, rel)
		}
	}
	if err := copyTree(p.Root, tmp, files); err != nil {
		return "", false, err
	}
	got, err := Digest(tmp, files)
	if err != nil {
		return "", false, err
	}
	if got != p.Digest {
		return "", false, kernel.Errorf(kernel.CodeConflict, "package changed while it was being installed (digest %s, now %s)", p.Digest, got).
			WithHint("load the package again")
	}
	if err := makeReadOnly(tmp); err != nil {
		return "", false, err
	}
	if damaged {
		if err := removeTree(dir); err != nil {
			return "", false, kernel.Errorf(kernel.CodeInternal, "cannot replace the damaged release copy").Wrap(err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another install of the same digest may have won the race.
		if cerr := CheckInstalled(dir, p.Digest); cerr == nil {
			return dir, true, RecordFingerprint(dir, p.Digest)
		}
		return "", false, kernel.Errorf(kernel.CodeInternal, "cannot move release into place").Wrap(err)
	}
	tmp = ""
	// After the rename: moving a directory changes its ctime.
	if err := RecordFingerprint(dir, p.Digest); err != nil {
		return "", false, err
	}
	return dir, false, nil
}

func copyTree(src, dst string, files []string) error {
	for _, rel := range files {
		from := filepath.Join(src, filepath.FromSlash(rel))
		to := filepath.Join(dst, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return internal(path.Dir(rel), err)
		}
		fi, err := os.Lstat(from)
		if err != nil {
			return internal(rel, err)
		}
		switch m := fi.Mode(); {
		case m&os.ModeSymlink != 0:
			target, err := os.Readlink(from)
			if err != nil {
				return internal(rel, err)
			}
			if err := os.Symlink(target, to); err != nil {
				return internal(rel, err)
			}
		case m.IsRegular():
			if err := copyRegular(src, rel, to, m.Perm()&0o100 != 0); err != nil {
				return err
			}
		default:
			return refuseType(rel, m)
		}
	}
	return nil
}

// writeTo fills a file install creates; tests replace it to fill the disk.
var writeTo = func(f *os.File, r io.Reader) (int64, error) { return io.Copy(f, r) }

func copyRegular(root, rel, to string, exec bool) error {
	in, err := openRegular(root, rel, defaultLimits.fileBytes)
	if err != nil {
		return err
	}
	defer in.Close()
	perm := os.FileMode(0o644)
	if exec {
		perm = 0o755
	}
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return internal(rel, err)
	}
	_, err = writeTo(out, in)
	if cerr := out.Close(); err == nil && cerr != nil {
		err = internal(rel, cerr)
	}
	return err
}

// makeReadOnly sets the final modes, directories last so their contents
// can still be changed while walking.
func makeReadOnly(root string) error {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			dirs = append(dirs, p)
		case d.Type().IsRegular():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			mode := os.FileMode(0o444)
			if fi.Mode().Perm()&0o100 != 0 {
				mode = 0o555
			}
			return os.Chmod(p, mode)
		}
		return nil // symlinks: chmod would follow them
	})
	for _, d := range slices.Backward(dirs) {
		if err == nil {
			err = os.Chmod(d, 0o555)
		}
	}
	if err != nil {
		return kernel.Errorf(kernel.CodeInternal, "cannot make release read-only").Wrap(err)
	}
	return nil
}

// removeTree restores write permission on directories, then removes root.
func removeTree(root string) error {
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	return os.RemoveAll(root)
}

// Remove deletes the installed copy with the given digest. It first renames
// the copy aside, so the release directory disappears at once.
func Remove(releasesDir, digest string) error {
	name, err := ReleaseDirName(digest)
	if err != nil {
		return err
	}
	dir := filepath.Join(releasesDir, name)
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return kernel.Errorf(kernel.CodeNotFound, "release %s is not installed", digest)
	}
	// Same parent, so the rename needs no write permission on the
	// read-only directory itself.
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	aside := filepath.Join(releasesDir, ".rm-"+name+"-"+hex.EncodeToString(rnd[:]))
	if err := os.Rename(dir, aside); err != nil {
		return kernel.Errorf(kernel.CodeInternal, "cannot remove release").Wrap(err)
	}
	removeFingerprint(dir)
	if err := removeTree(aside); err != nil {
		return kernel.Errorf(kernel.CodeInternal, "cannot remove release").Wrap(err)
	}
	return nil
}

// CheckInstalled recomputes the digest of the installed copy dir (with the
// same checks Load applies) and compares it with digest.
func CheckInstalled(dir, digest string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return kernel.Errorf(kernel.CodeNotFound, "release %s is not installed", digest)
		}
		return kernel.Errorf(kernel.CodeInternal, "cannot read release").Wrap(err)
	}
	if !fi.IsDir() {
		return kernel.Errorf(kernel.CodeConflict, "release path %q is not a directory", dir)
	}
	t, err := walk(dir, &defaultLimits)
	if err != nil {
		return err
	}
	got, err := Digest(dir, t.files())
	if err != nil {
		return err
	}
	if got != digest {
		return kernel.Errorf(kernel.CodeConflict, "installed copy %s has digest %s, not %s", dir, got, digest).
			WithHint("remove the release and install the package again")
	}
	return nil
}
