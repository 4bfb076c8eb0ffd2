package home

import (
	"os"
	"path/filepath"

	"github.com/rukh-dev/rukh/extpkg"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
)

// CopyResult is what a store copy did.
type CopyResult struct {
	From     string             `json:"from"`
	To       string             `json:"to"`
	Buckets  []store.BucketCopy `json:"buckets"`
	Tasks    []store.BucketCopy `json:"taskBuckets"`
	Keys     int                `json:"keys"`
	Bytes    int                `json:"bytes"`
	Packages []CopiedPackage    `json:"packages"`
	Verified store.VerifyReport `json:"verified"`
}

// CopiedPackage is one package a store copy gave the destination.
type CopiedPackage struct {
	Release string `json:"release"`
	Digest  string `json:"digest"`
	As      string `json:"as"` // "archive" (into a shared store) or "copy" (into a bbolt home)
}

// StoreCopy copies the whole store into dst, which must be empty, with
// what a machine using dst needs to run each package (its archive in a
// shared store, a copy in a bbolt home), then verifies the copy: the
// records key by key, the store's invariants, and every package as such a
// machine would read it.
func (h *Home) StoreCopy(dst *store.Store) (*CopyResult, error) {
	rep, err := h.Store.CopyTo(dst)
	if err != nil {
		return nil, err
	}
	rels, err := h.Store.Releases()
	if err != nil {
		return nil, err
	}
	res := &CopyResult{From: rep.From, To: rep.To, Buckets: rep.Buckets, Tasks: rep.Tasks, Keys: rep.Keys(), Bytes: rep.Bytes(), Packages: []CopiedPackage{}}
	for _, r := range rels {
		as, err := h.copyPackage(r, dst)
		if err != nil {
			hint := kernel.ErrorHint(err)
			if hint == "" {
				hint = "fix that, empty the destination and copy again"
			}
			return nil, kernel.Errorf(kernel.ErrorCode(err), "the records are copied, but not the package %s@%s: %v", r.Name, r.Version, err).
				WithHint(hint)
		}
		res.Packages = append(res.Packages, CopiedPackage{Release: r.Name + "@" + r.Version, Digest: r.Digest, As: as})
	}

	if res.Verified, err = h.Store.VerifyCopy(dst); err != nil {
		return nil, err
	}
	if err := dst.Check(); err != nil {
		return nil, err
	}
	for _, r := range rels {
		if err := h.verifyPackage(r, dst); err != nil {
			return nil, kernel.Errorf(kernel.CodeConflict, "the copy of package %s@%s does not verify: %v", r.Name, r.Version, err).
				WithHint("empty the destination and copy again")
		}
	}
	return res, nil
}

// copyPackage gives the destination what a machine needs to run r: its
// archive in a shared store, a copy in a bbolt home.
func (h *Home) copyPackage(r store.Release, dst *store.Store) (string, error) {
	src := h.CopyDir(r.Digest, r.Development)
	switch {
	case dst.Shared() && h.Store.Shared():
		return "archive", nil // the blobs bucket came along
	case dst.Shared():
		if err := extpkg.CheckInstalled(src, r.Digest); err != nil {
			return "", kernel.Errorf(kernel.CodeConflict, "the installed copy was changed or damaged").Wrap(err).
				WithHint("install the original package again ('rukh install PATH') to repair it, then copy again into an empty destination")
		}
		return "archive", h.putArchive(dst, src, r.Digest)
	case h.Store.Shared():
		return "copy", h.materialiseFrom(h.Store, r.Digest, copiesIn(dst, r.Development))
	}
	p, err := extpkg.Load(src, "")
	if err != nil {
		return "", err
	}
	defer p.Close()
	if p.Digest != r.Digest {
		return "", kernel.Errorf(kernel.CodeConflict, "the installed copy has digest %s", p.Digest).
			WithHint("install the original package again ('rukh install PATH') to repair it, then copy again into an empty destination")
	}
	_, _, err = extpkg.Install(p, copiesIn(dst, r.Development))
	return "copy", err
}

// verifyPackage checks r in the destination: its copy, or its archive
// unpacked the way another machine would.
func (h *Home) verifyPackage(r store.Release, dst *store.Store) error {
	name, err := extpkg.ReleaseDirName(r.Digest)
	if err != nil {
		return err
	}
	if !dst.Shared() {
		return extpkg.CheckInstalled(filepath.Join(copiesIn(dst, r.Development), name), r.Digest)
	}
	scratch, err := h.scratchDir()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(scratch, "verify-")
	if err != nil {
		return kernel.Errorf(kernel.CodeInternal, "cannot create a scratch directory").Wrap(err)
	}
	defer os.RemoveAll(tmp)
	defer extpkg.Remove(tmp, r.Digest) // its files are read-only
	if err := h.materialiseFrom(dst, r.Digest, tmp); err != nil {
		return err
	}
	return extpkg.CheckInstalled(filepath.Join(tmp, name), r.Digest)
}

func copiesIn(st *store.Store, dev bool) string {
	if dev {
		return st.DevReleasesDir()
	}
	return st.ReleasesDir()
}
