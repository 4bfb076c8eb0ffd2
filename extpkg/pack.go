package extpkg

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rukh-dev/rukh/kernel"
)

// Pack checks the package directory dir as Load does and writes it to out
// as a deterministic .tar.gz: entries at the archive root in sorted order,
// every parent directory listed, zero times and owners, modes normalised
// to 0755/0644 (directories, executables / other files). The signature
// file, if any, is included. out must lie outside dir; it is replaced
// atomically.
func Pack(dir, out string) error {
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return kernel.Errorf(kernel.CodeUsage, "%q is not a package directory", dir)
	}
	p, err := Load(dir, "")
	if err != nil {
		return err
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return internal("", err)
	}
	if absOut == p.Root || strings.HasPrefix(absOut, p.Root+string(filepath.Separator)) {
		return kernel.Errorf(kernel.CodeUsage, "the archive %q must be outside the package directory", out)
	}
	f, err := os.CreateTemp(filepath.Dir(absOut), "."+filepath.Base(absOut)+"-")
	if err != nil {
		// name the directory the user gave, not our temporary file
		return kernel.Errorf(kernel.CodeInvalid, "cannot write %s: %v", out, errors.Unwrap(err)).
			WithHint("check that " + filepath.Dir(out) + " exists and is writable")
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after the rename
	err = writeTarGz(f, p)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = kernel.Errorf(kernel.CodeInternal, "cannot write archive").Wrap(cerr)
	}
	if err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return kernel.Errorf(kernel.CodeInternal, "cannot write archive").Wrap(err)
	}
	if err := os.Rename(tmp, absOut); err != nil {
		return kernel.Errorf(kernel.CodeInternal, "cannot write archive").Wrap(err)
	}
	return nil
}

func writeTarGz(w io.Writer, p *Package) error {
	dirs := map[string]bool{}
	for _, rel := range p.Files {
		for d := path.Dir(rel); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	names := slices.Clone(p.Files)
	for d := range dirs {
		names = append(names, d)
	}
	slices.Sort(names) // a parent is a prefix, so it sorts before its entries

	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return internal("", err)
	}
	tw := tar.NewWriter(gz)
	epoch := time.Unix(0, 0)
	for _, rel := range names {
		hdr := &tar.Header{Name: rel, ModTime: epoch, Mode: 0o644}
		full := filepath.Join(p.Root, filepath.FromSlash(rel))
		fi, err := os.Lstat(full)
		if err != nil {
			return internal(rel, err)
		}
		switch m := fi.Mode(); {
		case dirs[rel]:
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, rel+"/", 0o755
		case m&os.ModeSymlink != 0:
			hdr.Typeflag, hdr.Mode = tar.TypeSymlink, 0o777
			if hdr.Linkname, err = os.Readlink(full); err != nil {
				return internal(rel, err)
			}
		case m.IsRegular():
			hdr.Typeflag, hdr.Size = tar.TypeReg, fi.Size()
			if m.Perm()&0o100 != 0 {
				hdr.Mode = 0o755
			}
		default:
			return refuseType(rel, m)
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return kernel.Errorf(kernel.CodeInternal, "cannot write archive").AtPath(rel).Wrap(err)
		}
		if hdr.Typeflag == tar.TypeReg {
			if err := copyFile(tw, p.Root, rel, hdr.Size); err != nil {
				return err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return kernel.Errorf(kernel.CodeInternal, "cannot write archive").Wrap(err)
	}
	if err := gz.Close(); err != nil {
		return kernel.Errorf(kernel.CodeInternal, "cannot write archive").Wrap(err)
	}
	return nil
}

// copyFile writes exactly size bytes of root/rel to w; a file that changed
// size since it was checked is an error.
func copyFile(w io.Writer, root, rel string, size int64) error {
	rc, err := openRegular(root, rel, size)
	if err != nil {
		return err
	}
	defer rc.Close()
	n, err := io.Copy(w, rc)
	if err != nil {
		return err
	}
	if n != size {
		return invalid(rel, "%q changed while it was being read", rel)
	}
	return nil
}
