package home

import (
	"fmt"

	"github.com/rukh-dev/rukh/extpkg"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
)

// TrustedKeys maps key ids to the currently trusted keys.
func (h *Home) TrustedKeys() (map[string]store.Key, error) {
	keys, err := h.Store.Keys()
	if err != nil {
		return nil, err
	}
	m := make(map[string]store.Key, len(keys))
	for _, k := range keys {
		m[k.KeyID] = k
	}
	return m, nil
}

// CheckTrusted refuses a signed release whose key is no longer trusted:
// removing a key revokes what it signed at the next publish.
func CheckTrusted(r store.Release, trusted map[string]store.Key) error {
	if r.Signer == "" {
		return nil // installed with --allow-unsigned, recorded on the release
	}
	if _, ok := trusted[r.KeyID]; ok {
		return nil
	}
	return kernel.Errorf(kernel.CodeDenied, "%s@%s is signed by key %s (%s), which is no longer trusted", r.Name, r.Version, r.Signer, r.KeyID).
		WithHint("trust the publisher's key again with 'rukh trust add', or 'rukh deactivate " + r.Name + "'")
}

// CurrentTrust describes a release's trust basis as of now.
func CurrentTrust(r store.Release, trusted map[string]store.Key) string {
	if r.Development {
		return "development copy (never signed, published only on endpoint dev)"
	}
	if r.Signer != "" {
		if _, ok := trusted[r.KeyID]; !ok {
			return fmt.Sprintf("signed by key %s (%s), no longer trusted", r.Signer, r.KeyID)
		}
	}
	return TrustBasis(r.Signer, r.AllowUnsigned)
}

// TrustBasis describes what a release was installed on: a trusted key's
// signature, or the owner's --allow-unsigned.
func TrustBasis(signer string, unsigned bool) string {
	switch {
	case signer != "":
		return "signed by trusted key " + signer
	case unsigned:
		return "unsigned (installed with --allow-unsigned)"
	default:
		return "unknown"
	}
}

// checkSignature returns the trusted key name that signed p, or "" when p is
// unsigned or signed by an unknown key. A signature by a trusted key that
// does not verify is always an error: it means tampering.
func (h *Home) checkSignature(p *extpkg.Package) (signer, keyID string, err error) {
	if p.Signature == nil {
		return "", "", nil
	}
	keyID, err = extpkg.SignatureKeyID(p.Signature)
	if err != nil {
		return "", "", kernel.Errorf(kernel.CodeInvalid, "malformed %s", kernel.SignatureFile).Wrap(err)
	}
	keys, err := h.Store.Keys()
	if err != nil {
		return "", "", err
	}
	for _, k := range keys {
		if k.KeyID != keyID {
			continue
		}
		pub, err := extpkg.ParsePublicKey(k.Public)
		if err != nil {
			return "", "", err
		}
		if err := extpkg.Verify(pub, p.Digest, p.Signature); err != nil {
			return "", "", kernel.Errorf(kernel.CodeDenied, "the signature by trusted key %q does not match the package content", k.Name).Wrap(err).
				WithHint("the package was changed after signing; get a fresh copy from the publisher")
		}
		return k.Name, keyID, nil
	}
	return "", keyID, nil
}

// checkSameSigner refuses a version of a package signed by another key than
// its earlier signed versions: trusting two publishers must not let one
// replace the other's package unnoticed.
func (h *Home) checkSameSigner(name, version, signer, keyID string) error {
	rels, err := h.Store.ReleasesOf(name)
	if err != nil {
		return err
	}
	for _, r := range rels {
		if r.KeyID != "" && r.KeyID != keyID && r.Version != version {
			return kernel.Errorf(kernel.CodeDenied, "%s@%s is signed by key %s (%s), but %s@%s was signed by %s (%s)",
				name, version, signer, keyID, name, r.Version, r.Signer, r.KeyID).
				WithHint("if the package really changed hands, install with --allow-new-signer")
		}
	}
	return nil
}
