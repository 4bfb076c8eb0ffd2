package extpkg

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"

	"github.com/rukh-dev/rukh/kernel"
)

// Textual key and signature formats. Key files hold one line.
const (
	PublicKeyPrefix  = "rukh-ed25519-pub:"
	PrivateKeyPrefix = "rukh-ed25519-key:" // followed by the base64 32-byte seed
	signaturePrefix  = "rukh-sig:1"
	// signedContext separates what a package signature signs from anything
	// else the same key might sign.
	signedContext = "rukh-extension-digest/1\n"
)

// GenerateKey makes a new ed25519 publisher key pair in text form.
func GenerateKey() (pub, priv string, err error) {
	pk, sk, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", "", kernel.Errorf(kernel.CodeInternal, "cannot generate key").Wrap(err)
	}
	return FormatPublicKey(pk), PrivateKeyPrefix + base64.StdEncoding.EncodeToString(sk.Seed()), nil
}

// FormatPublicKey returns the text form of a public key.
func FormatPublicKey(pub ed25519.PublicKey) string {
	return PublicKeyPrefix + base64.StdEncoding.EncodeToString(pub)
}

// ParsePublicKey reads "rukh-ed25519-pub:<base64>"; surrounding white space
// (a key file's newline) is ignored.
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, PrivateKeyPrefix) {
		return nil, kernel.Errorf(kernel.CodeInvalid, "this is a private key, not a public key").
			WithHint("give the publisher's public key (" + PublicKeyPrefix + "…)")
	}
	b64, ok := strings.CutPrefix(s, PublicKeyPrefix)
	if !ok {
		return nil, kernel.Errorf(kernel.CodeInvalid, "public key does not start with %q", PublicKeyPrefix)
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(b64)
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, kernel.Errorf(kernel.CodeInvalid, "public key is not %d bytes of base64", ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(raw), nil
}

// ParsePrivateKey reads "rukh-ed25519-key:<base64 seed>".
func ParsePrivateKey(s string) (ed25519.PrivateKey, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, PublicKeyPrefix) {
		return nil, kernel.Errorf(kernel.CodeInvalid, "this is a public key, not a private key")
	}
	b64, ok := strings.CutPrefix(s, PrivateKeyPrefix)
	if !ok {
		return nil, kernel.Errorf(kernel.CodeInvalid, "private key does not start with %q", PrivateKeyPrefix)
	}
	seed, err := base64.StdEncoding.Strict().DecodeString(b64)
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, kernel.Errorf(kernel.CodeInvalid, "private key is not a %d-byte base64 seed", ed25519.SeedSize)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// KeyID is a short fingerprint of a public key: the first 16 hex digits of
// the SHA-256 of its 32 bytes.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

func signedMessage(digest string) []byte { return []byte(signedContext + digest) }

// Sign returns the content of rukh-extension.sig for digest: one line
// "rukh-sig:1 <keyid> <base64 signature>".
func Sign(priv ed25519.PrivateKey, digest string) []byte {
	sig := ed25519.Sign(priv, signedMessage(digest))
	pub := priv.Public().(ed25519.PublicKey)
	return []byte(signaturePrefix + " " + KeyID(pub) + " " + base64.StdEncoding.EncodeToString(sig) + "\n")
}

func parseSignature(sig []byte) (keyID string, raw []byte, err error) {
	line := string(bytes.TrimSuffix(sig, []byte("\n")))
	f := strings.Split(line, " ")
	if len(f) != 3 || f[0] != signaturePrefix {
		return "", nil, invalid(kernel.SignatureFile, "signature is not a %q line", signaturePrefix+" <keyid> <signature>")
	}
	if len(f[1]) != 16 || strings.Trim(f[1], "0123456789abcdef") != "" {
		return "", nil, invalid(kernel.SignatureFile, "signature has an invalid key id %q", f[1])
	}
	raw, derr := base64.StdEncoding.Strict().DecodeString(f[2])
	if derr != nil || len(raw) != ed25519.SignatureSize {
		return "", nil, invalid(kernel.SignatureFile, "signature is not %d bytes of base64", ed25519.SignatureSize)
	}
	return f[1], raw, nil
}

// SignatureKeyID returns the key id a signature file names, so a caller can
// pick the trusted key to verify it with.
func SignatureKeyID(sig []byte) (string, error) {
	id, _, err := parseSignature(sig)
	return id, err
}

// Verify checks that sig (a rukh-extension.sig) is pub's signature of
// digest. A signature by another key or of another digest is denied.
func Verify(pub ed25519.PublicKey, digest string, sig []byte) error {
	id, raw, err := parseSignature(sig)
	if err != nil {
		return err
	}
	if len(pub) != ed25519.PublicKeySize {
		return kernel.Errorf(kernel.CodeInvalid, "public key is not %d bytes", ed25519.PublicKeySize)
	}
	if want := KeyID(pub); id != want {
		return kernel.Errorf(kernel.CodeDenied, "package is signed by key %s, not by key %s", id, want)
	}
	if !ed25519.Verify(pub, signedMessage(digest), raw) {
		return kernel.Errorf(kernel.CodeDenied, "signature by key %s does not match the package digest %s", id, digest)
	}
	return nil
}

// SignDir checks the package directory dir as Load does, then writes its
// rukh-extension.sig signed by priv, replacing any earlier one.
func SignDir(dir string, priv ed25519.PrivateKey) (digest string, err error) {
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return "", kernel.Errorf(kernel.CodeUsage, "%q is not a package directory", dir)
	}
	p, err := Load(dir, "")
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp(p.Root, ".rukh-extension.sig-")
	if err != nil {
		return "", kernel.Errorf(kernel.CodeInternal, "cannot write signature").Wrap(err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after the rename
	_, err = f.Write(Sign(priv, p.Digest))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(p.Root, kernel.SignatureFile))
	}
	if err != nil {
		return "", kernel.Errorf(kernel.CodeInternal, "cannot write signature").Wrap(err)
	}
	return p.Digest, nil
}
