package extpkg

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rukh-dev/rukh/kernel"
)

// Package is a loaded, checked package. Root is the directory holding its
// files: the source directory itself, or a scratch copy Load extracted
// from a tarball (Close removes that copy). Files lists every regular file
// and symlink, slash-separated and sorted, including rukh-extension.sig
// when present.
type Package struct {
	Root         string
	Manifest     *kernel.Manifest
	ManifestJSON []byte
	Digest       string
	Signature    []byte // nil without rukh-extension.sig
	Files        []string

	scratch string // the directory Load created, removed by Close
}

// Close removes the scratch copy Load made for a tarball; it does nothing
// for a directory package.
func (p *Package) Close() error {
	if p == nil || p.scratch == "" {
		return nil
	}
	err := os.RemoveAll(p.scratch)
	p.scratch = ""
	return err
}

// Load reads and checks the package at src, a directory or a .tar.gz file
// (recognised by its content). A tarball is extracted into a fresh
// directory under scratch (created if missing; os.TempDir() when empty)
// with every check applied while extracting. Load then parses the
// manifest, checks that every command's program is an executable regular
// file inside the package, computes the digest and reads the signature.
// On any error everything Load created is removed.
func Load(src, scratch string) (*Package, error) {
	return load(src, scratch, &defaultLimits)
}

func load(src, scratch string, lim *limits) (_ *Package, err error) {
	fi, err := os.Stat(src)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, kernel.Errorf(kernel.CodeNotFound, "package %q does not exist", src)
		}
		return nil, kernel.Errorf(kernel.CodeInternal, "cannot read package").Wrap(err)
	}
	p := &Package{}
	var t *tree
	switch {
	case fi.IsDir():
		root, err := filepath.Abs(src)
		if err != nil {
			return nil, internal("", err)
		}
		if t, err = walk(root, lim); err != nil {
			return nil, err
		}
	case fi.Mode().IsRegular():
		defer func() {
			if err != nil {
				p.Close()
			}
		}()
		if t, err = p.unpack(src, fi.Size(), scratch, lim); err != nil {
			return nil, err
		}
	default:
		return nil, kernel.Errorf(kernel.CodeInvalid, "%q is not a directory or a gzip-compressed tar archive", src)
	}
	p.Root = t.root
	if err := p.check(t); err != nil {
		return nil, err
	}
	return p, nil
}

// unpack extracts the tarball src into a fresh directory under scratch.
func (p *Package) unpack(src string, size int64, scratch string, lim *limits) (*tree, error) {
	f, err := os.Open(src)
	if err != nil {
		return nil, kernel.Errorf(kernel.CodeInternal, "cannot read package").Wrap(err)
	}
	defer f.Close()
	head := make([]byte, 512)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, kernel.Errorf(kernel.CodeInternal, "cannot read package").Wrap(err)
	}
	switch sniff(head[:n]) {
	case "gzip":
	case "tar":
		return nil, kernel.Errorf(kernel.CodeInvalid, "%q is an uncompressed tar archive", src).
			WithHint("compress it with gzip, or run \"rukh package pack\"")
	case "zip":
		return nil, kernel.Errorf(kernel.CodeInvalid, "%q is a zip archive", src).
			WithHint("a package is a directory or a .tar.gz")
	default:
		return nil, kernel.Errorf(kernel.CodeInvalid, "%q is not a directory or a gzip-compressed tar archive", src)
	}
	if size > lim.archiveBytes {
		return nil, invalid("", "archive is larger than %d bytes", lim.archiveBytes)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, internal("", err)
	}
	if scratch == "" {
		scratch = os.TempDir()
	}
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		return nil, kernel.Errorf(kernel.CodeInternal, "cannot create scratch directory").Wrap(err)
	}
	dir, err := os.MkdirTemp(scratch, "extpkg-")
	if err != nil {
		return nil, kernel.Errorf(kernel.CodeInternal, "cannot create scratch directory").Wrap(err)
	}
	p.scratch = dir
	if err := extract(f, dir, lim); err != nil {
		return nil, err
	}
	root := dir
	// A tarball of one directory ("tar czf p.tar.gz p/") has its package
	// under that directory.
	if _, err := os.Lstat(filepath.Join(dir, kernel.ManifestFile)); errors.Is(err, fs.ErrNotExist) {
		des, err := os.ReadDir(dir)
		if err == nil && len(des) == 1 && des[0].IsDir() {
			root = filepath.Join(dir, des[0].Name())
		}
	}
	return walk(root, lim)
}

// check reads the manifest and signature and checks the programs.
func (p *Package) check(t *tree) error {
	mf, ok := t.entries[kernel.ManifestFile]
	if !ok {
		return invalid(kernel.ManifestFile, "package has no %s at its root", kernel.ManifestFile)
	}
	if mf.kind != kindFile {
		return invalid(kernel.ManifestFile, "%s is not a regular file", kernel.ManifestFile)
	}
	data, err := readSmall(t.root, kernel.ManifestFile, MaxManifestBytes)
	if err != nil {
		return err
	}
	m, err := kernel.ParseManifest(data)
	if err != nil {
		return kernel.InFile(kernel.ManifestFile, data, err)
	}
	for i, c := range m.Commands {
		if err := checkProgram(t, i, &c); err != nil {
			return err
		}
	}
	if sf, ok := t.entries[kernel.SignatureFile]; ok {
		if sf.kind != kindFile {
			return invalid(kernel.SignatureFile, "%s is not a regular file", kernel.SignatureFile)
		}
		if p.Signature, err = readSmall(t.root, kernel.SignatureFile, MaxSignatureBytes); err != nil {
			return err
		}
	}
	p.Manifest, p.ManifestJSON, p.Files = m, data, t.files()
	p.Digest, err = Digest(t.root, p.Files)
	return err
}

func checkProgram(t *tree, i int, c *kernel.Command) error {
	prog := c.Execute.Program
	ptr := fmt.Sprintf("/commands/%d/execute/program", i)
	if prog == "" {
		return invalid(kernel.ManifestFile, "command %q has no program (%s)", c.ID, ptr)
	}
	if clean, err := cleanName(prog); err != nil || clean != prog {
		return invalid(prog, "program %q of command %q is not a clean path inside the package", prog, c.ID)
	}
	e, ok := t.entries[prog]
	switch {
	case !ok:
		return invalid(prog, "program %q of command %q does not exist", prog, c.ID)
	case e.kind == kindDir:
		return invalid(prog, "program %q of command %q is a directory", prog, c.ID)
	}
	target, err := t.resolve(prog) // walk already refused links that do not resolve
	if err != nil {
		return err
	}
	if !t.entries[target].exec {
		return invalid(prog, "program %q of command %q is not executable", prog, c.ID).
			WithHint("chmod +x " + target)
	}
	return nil
}

// readSmall reads a regular file of at most max bytes.
func readSmall(root, rel string, max int64) ([]byte, error) {
	rc, err := openRegular(root, rel, max)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, err
	}
	return data, nil
}
