package commands

import (
	"os"
	"path/filepath"

	"github.com/rukh-dev/rukh/extpkg"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
)

// On a shared store (etcd) every machine keeps its own copies of the
// packages, made from the archive the installing machine put in the
// store and verified by digest before use; on bbolt the home's copy is
// the only one and nothing here runs.

// shareCopy puts the archive of the installed copy dir into a shared store.
func (a *app) shareCopy(dir, digest string) error {
	if !a.store.Shared() {
		return nil
	}
	return a.putArchive(a.store, dir, digest)
}

// putArchive packs the copy dir into st's archive of digest.
func (a *app) putArchive(st *store.Store, dir, digest string) error {
	if ok, err := st.HasBlob(digest); err != nil || ok {
		return err
	}
	scratch, err := a.scratchDir()
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
func (a *app) materialise(digest string, dev bool) error {
	dir := a.copyDir(digest, dev)
	if !a.store.Shared() || dir == "" {
		return nil
	}
	if _, err := os.Lstat(dir); err == nil {
		return nil // present: VerifyCopy judges it
	}
	return a.materialiseFrom(a.store, digest, a.copiesDir(dev))
}

// materialiseFrom makes a copy of digest in copiesDir from st's archive.
func (a *app) materialiseFrom(st *store.Store, digest, copiesDir string) error {
	data, err := st.Blob(digest)
	if err != nil {
		return err
	}
	scratch, err := a.scratchDir()
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

func (a *app) scratchDir() (string, error) {
	scratch := filepath.Join(a.store.Home(), "tmp")
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		return "", kernel.Errorf(kernel.CodeInternal, "cannot create %s", scratch).Wrap(err)
	}
	return scratch, nil
}
