package extpkg

import (
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rukh-dev/rukh/kernel"
)

func newKey(t *testing.T) (ed25519.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	pubText, privText, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ParsePublicKey(pubText + "\n")
	if err != nil {
		t.Fatal(err)
	}
	priv, err := ParsePrivateKey(privText + "\n")
	if err != nil {
		t.Fatal(err)
	}
	if !pub.Equal(priv.Public()) {
		t.Fatal("public key does not match private key")
	}
	return pub, priv
}

func TestKeyText(t *testing.T) {
	pubText, privText, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(pubText, "rukh-ed25519-pub:") || !strings.HasPrefix(privText, "rukh-ed25519-key:") {
		t.Fatalf("key text %q / %q", pubText, privText)
	}
	pub, _ := ParsePublicKey(pubText)
	if FormatPublicKey(pub) != pubText {
		t.Error("FormatPublicKey does not round-trip")
	}
	if id := KeyID(pub); len(id) != 16 || strings.Trim(id, "0123456789abcdef") != "" {
		t.Errorf("KeyID = %q", id)
	}
	tests := []struct {
		name string
		text string
		priv bool
		msg  string
	}{
		{"private as public", privText, false, "this is a private key, not a public key"},
		{"public as private", pubText, true, "this is a public key, not a private key"},
		{"no prefix", "AAAA", false, `public key does not start with "rukh-ed25519-pub:"`},
		{"short", "rukh-ed25519-pub:AAAA", false, "public key is not 32 bytes of base64"},
		{"not base64", "rukh-ed25519-pub:!!!!", false, "public key is not 32 bytes of base64"},
		{"short seed", "rukh-ed25519-key:AAAA", true, "private key is not a 32-byte base64 seed"},
		{"private no prefix", "ssh-ed25519 AAAA", true, `private key does not start with "rukh-ed25519-key:"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.priv {
				_, err = ParsePrivateKey(tt.text)
			} else {
				_, err = ParsePublicKey(tt.text)
			}
			wantErr(t, err, kernel.CodeInvalid, "", tt.msg)
		})
	}
}

func TestSignVerify(t *testing.T) {
	pub, priv := newKey(t)
	otherPub, otherPriv := newKey(t)
	const digest = "h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
	sig := Sign(priv, digest)
	if err := Verify(pub, digest, sig); err != nil {
		t.Fatalf("round trip: %v", err)
	}
	if id, err := SignatureKeyID(sig); err != nil || id != KeyID(pub) {
		t.Errorf("SignatureKeyID = %q, %v; want %q", id, err, KeyID(pub))
	}
	// A signature claiming pub's key id but made with another key.
	forged := Sign(otherPriv, digest)
	forged = []byte(strings.Replace(string(forged), KeyID(otherPub), KeyID(pub), 1))
	// The same key's signature over a bare digest, without the context.
	bare := []byte("rukh-sig:1 " + KeyID(pub) + " " + b64(ed25519.Sign(priv, []byte(digest))) + "\n")

	tests := []struct {
		name   string
		pub    ed25519.PublicKey
		digest string
		sig    []byte
		code   kernel.Code
		msg    string
	}{
		{"tampered digest", pub, "h1:AAAAQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", sig, kernel.CodeDenied, "does not match the package digest"},
		{"wrong key", otherPub, digest, sig, kernel.CodeDenied, "package is signed by key " + KeyID(pub) + ", not by key " + KeyID(otherPub)},
		{"forged key id", pub, digest, forged, kernel.CodeDenied, "does not match the package digest"},
		{"no domain separation", pub, digest, bare, kernel.CodeDenied, "does not match the package digest"},
		{"empty", pub, digest, nil, kernel.CodeInvalid, "signature is not a"},
		{"extra field", pub, digest, append(sig[:len(sig)-1:len(sig)-1], " x\n"...), kernel.CodeInvalid, "signature is not a"},
		{"bad key id", pub, digest, []byte("rukh-sig:1 XYZ " + b64(make([]byte, 64))), kernel.CodeInvalid, `invalid key id "XYZ"`},
		{"short signature", pub, digest, []byte("rukh-sig:1 " + KeyID(pub) + " AAAA"), kernel.CodeInvalid, "signature is not 64 bytes of base64"},
		{"other version", pub, digest, []byte(strings.Replace(string(sig), "rukh-sig:1", "rukh-sig:2", 1)), kernel.CodeInvalid, "signature is not a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantErr(t, Verify(tt.pub, tt.digest, tt.sig), tt.code, "-", tt.msg)
		})
	}
}

func TestSignDir(t *testing.T) {
	pub, priv := newKey(t)
	root := copyDir(t, filepath.Join("testdata", "hello"))
	digest, err := SignDir(root, priv)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Load(root, "")
	if err != nil {
		t.Fatal(err)
	}
	if p.Digest != digest {
		t.Errorf("Load digest %s, SignDir digest %s", p.Digest, digest)
	}
	if err := Verify(pub, p.Digest, p.Signature); err != nil {
		t.Fatalf("verify signed dir: %v", err)
	}
	// Signing again (the sig file is not part of the digest) is stable.
	if d2, err := SignDir(root, priv); err != nil || d2 != digest {
		t.Errorf("re-sign: %s, %v", d2, err)
	}
	// A change after signing breaks the signature.
	write(t, root, "extra.txt", "late")
	p2, err := Load(root, "")
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, Verify(pub, p2.Digest, p2.Signature), kernel.CodeDenied, "", "does not match the package digest")
	// No temp files are left in the package.
	des, _ := os.ReadDir(root)
	for _, de := range des {
		if strings.HasPrefix(de.Name(), ".") {
			t.Errorf("left behind: %s", de.Name())
		}
	}
	// A broken package is not signed.
	bad := makeDir(t, []ent{file(kernel.ManifestFile, validManifest)})
	_, err = SignDir(bad, priv)
	wantErr(t, err, kernel.CodeInvalid, "bin/tool", "does not exist")
	if _, err := os.Stat(filepath.Join(bad, kernel.SignatureFile)); err == nil {
		t.Error("signature written for an invalid package")
	}
}
