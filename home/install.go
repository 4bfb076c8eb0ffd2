package home

import (
	"fmt"
	"time"

	"github.com/rukh-dev/rukh/extpkg"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
)

// InstallOptions are what the owner may waive at install.
type InstallOptions struct {
	AllowUnsigned  bool // install even if no trusted key signed the package
	AllowNewSigner bool // accept a version signed by another key than the earlier ones
}

// InstallResult is what an install did.
type InstallResult struct {
	Name          string `json:"name"`
	Version       string `json:"version"`
	Digest        string `json:"digest"`
	Signer        string `json:"signer,omitempty"`
	KeyID         string `json:"keyId,omitempty"`
	AllowUnsigned bool   `json:"allowUnsigned"`
	Existed       bool   `json:"existed"`
	Repaired      bool   `json:"repaired,omitempty"`
	Commands      int    `json:"commands"`
}

// Install verifies the package at src (a directory or .tar.gz) and
// installs it as a release: its copy in the home (and its archive in a
// shared store) and its record.
func (h *Home) Install(src string, o InstallOptions) (*InstallResult, error) {
	scratch, err := h.scratchDir()
	if err != nil {
		return nil, err
	}
	p, err := extpkg.Load(src, scratch)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	m := p.Manifest

	// The same name@version with another digest is refused before anything is copied.
	if prev, err := h.Store.Release(m.Name, m.Version); err == nil {
		if prev.Digest != p.Digest {
			return nil, kernel.Errorf(kernel.CodeConflict, "%s@%s is already installed with digest %s, this package has %s", m.Name, m.Version, prev.Digest, p.Digest).
				WithHint("publish a new version number for changed content")
		}
	} else if kernel.ErrorCode(err) != kernel.CodeNotFound {
		return nil, err
	}

	signer, keyID, err := h.checkSignature(p)
	if err != nil {
		return nil, err
	}
	if signer == "" && !o.AllowUnsigned {
		why := "the package is not signed"
		if p.Signature != nil {
			why = fmt.Sprintf("the package is signed by key %s, which is not trusted", keyID)
		}
		return nil, kernel.Errorf(kernel.CodeDenied, "%s@%s: %s", m.Name, m.Version, why).
			WithHint("trust the publisher's key with 'rukh trust add NAME KEYFILE', or install with --allow-unsigned")
	}
	if signer != "" && !o.AllowNewSigner {
		if err := h.checkSameSigner(m.Name, m.Version, signer, keyID); err != nil {
			return nil, err
		}
	}

	dir, copyExisted, err := extpkg.Install(p, h.Store.ReleasesDir())
	if err != nil {
		return nil, err
	}
	if err := h.shareCopy(dir, p.Digest); err != nil {
		return nil, err
	}
	existed, err := h.Store.PutRelease(store.Release{
		Name: m.Name, Version: m.Version, Digest: p.Digest, Manifest: p.ManifestJSON, Dir: dir,
		Signer: signer, KeyID: keyID, AllowUnsigned: signer == "", InstalledAt: time.Now().UTC(),
	})
	if err != nil {
		return nil, err
	}
	return &InstallResult{
		Name: m.Name, Version: m.Version, Digest: p.Digest, Signer: signer, KeyID: keyID,
		AllowUnsigned: signer == "", Existed: existed, Commands: len(m.Commands),
		Repaired: existed && !copyExisted, // the record was there, the copy had to be made again
	}, nil
}
