package home

import (
	"os"
	"path/filepath"

	"github.com/rukh-dev/rukh/extpkg"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
)

// boundDir is where a bound release's copy lives in this home.
func (h *Home) boundDir(br policy.BoundRelease) string { return h.CopyDir(br.Digest, br.Development) }

// CopyDir is the directory of the installed (or, for dev, the development)
// copy with this digest.
func (h *Home) CopyDir(digest string, dev bool) string {
	name, err := extpkg.ReleaseDirName(digest)
	if err != nil {
		return ""
	}
	return filepath.Join(h.CopiesDir(dev), name)
}

// CopiesDir is the directory that holds the installed (or, for dev, the
// development) copies.
func (h *Home) CopiesDir(dev bool) string {
	if dev {
		return h.Store.DevReleasesDir()
	}
	return h.Store.ReleasesDir()
}

// On a shared store (etcd) every machine keeps its own copies of the
// packages, made from the archive the installing machine put in the
// store and verified by digest before use; on bbolt the home's copy is
// the only one and nothing here runs.

// shareCopy puts the archive of the installed copy dir into a shared store.
func (h *Home) shareCopy(dir, digest string) error {
	if !h.Store.Shared() {
		return nil
	}
	return h.putArchive(h.Store, dir, digest)
}

// putArchive packs the copy dir into st's archive of digest.
func (h *Home) putArchive(st *store.Store, dir, digest string) error {
	if ok, err := st.HasBlob(digest); err != nil || ok {
		return err
	}
	scratch, err := h.scratchDir()
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(scratch, "share-*.tar.gz")
	if err != nil {
		return kernel.Errorf(kernel.CodeInternal, "cannot write a package archive").Wrap(err)
	}
	tmp := f.Name()
	f.Close()
	defer os.Remove(tmp)
	if err := extpkg.Pack(dir, tmp); err != nil {
		return err
	}
	data, err := os.ReadFile(tmp)
	if err != nil {
		return kernel.Errorf(kernel.CodeInternal, "cannot read a package archive").Wrap(err)
	}
	return st.PutBlob(digest, data)
}

// materialise makes this machine's copy of the release with digest from
// the shared store's archive when it has none yet.
func (h *Home) materialise(digest string, dev bool) error {
	dir := h.CopyDir(digest, dev)
	if !h.Store.Shared() || dir == "" {
		return nil
	}
	if _, err := os.Lstat(dir); err == nil {
		return nil // present: VerifyCopy judges it
	}
	return h.materialiseFrom(h.Store, digest, h.CopiesDir(dev))
}

// materialiseFrom makes a copy of digest in copiesDir from st's archive.
func (h *Home) materialiseFrom(st *store.Store, digest, copiesDir string) error {
	data, err := st.Blob(digest)
	if err != nil {
		return err
	}
	scratch, err := h.scratchDir()
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(scratch, "fetch-*.tar.gz")
	if err != nil {
		return kernel.Errorf(kernel.CodeInternal, "cannot write a package archive").Wrap(err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return kernel.Errorf(kernel.CodeInternal, "cannot write a package archive").Wrap(err)
	}
	p, err := extpkg.Load(tmp, scratch)
	if err != nil {
		return err
	}
	defer p.Close()
	if p.Digest != digest {
		return kernel.Errorf(kernel.CodeConflict, "the shared store's archive of %s unpacks to digest %s", digest, p.Digest).
			WithHint("install the original package again ('rukh install PATH') on any machine that shares the store")
	}
	_, _, err = extpkg.Install(p, copiesDir)
	return err
}

// scratchDir is the home's directory for temporary files, created when
// missing.
func (h *Home) scratchDir() (string, error) {
	scratch := filepath.Join(h.Store.Home(), "tmp")
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		return "", kernel.Errorf(kernel.CodeInternal, "cannot create %s", scratch).Wrap(err)
	}
	return scratch, nil
}
