package store

import (
	"bytes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/rukh-dev/rukh/kernel"
	"golang.org/x/crypto/chacha20poly1305"
)

// A sensitive setting's value is sealed with XChaCha20-Poly1305 under a
// key kept apart from the store (the home's settings key file, or the
// same key handed to every replica of an etcd store), so that a copy of
// the store, a backup of its file or an etcd snapshot never holds the
// value. The sealed bytes are
//
//	version 1 ‖ key id (8 bytes) ‖ nonce (24 random bytes) ‖ ciphertext and tag
//
// and the additional data names the setting ("rukh-setting/1" 0x00
// package 0x00 endpoint 0x00 id), so a sealed value moved to another
// setting or scope does not open.

const (
	sealVersion  = 1
	keyIDLen     = 8
	sealedHeader = 1 + keyIDLen + chacha20poly1305.NonceSizeX
	// sealedOverhead is what sealing adds to a value.
	sealedOverhead = sealedHeader + chacha20poly1305.Overhead
	keyTextPrefix  = "rukh-settings-key-"
	keyTextV1      = keyTextPrefix + "1:"
	// SettingsKeyName is the settings key file inside the home.
	SettingsKeyName = "settings.key"
)

// SettingsKey seals and opens sensitive settings' values. Its String
// names it by its id only, so printing one never shows the key.
type SettingsKey struct {
	key  [chacha20poly1305.KeySize]byte
	id   [keyIDLen]byte
	aead cipher.AEAD
}

func newSettingsKey(key []byte) (*SettingsKey, error) {
	k := &SettingsKey{}
	copy(k.key[:], key)
	sum := sha256.Sum256(k.key[:])
	copy(k.id[:], sum[:keyIDLen])
	aead, err := chacha20poly1305.NewX(k.key[:])
	if err != nil {
		return nil, kernel.Errorf(kernel.CodeInternal, "cannot make the settings cipher").Wrap(err)
	}
	k.aead = aead
	return k, nil
}

// NewSettingsKey makes a new random key.
func NewSettingsKey() (*SettingsKey, error) {
	key := make([]byte, chacha20poly1305.KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, kernel.Errorf(kernel.CodeInternal, "cannot read random bytes for a settings key").Wrap(err)
	}
	return newSettingsKey(key)
}

// ParseSettingsKey reads a key's text (Text): one line
// "rukh-settings-key-1:" and the key's 32 bytes in unpadded base64url;
// white space around it is ignored. Its errors never quote the text.
func ParseSettingsKey(text []byte) (*SettingsKey, error) {
	bad := func(why string) error {
		return kernel.Errorf(kernel.CodeInvalid, "%s", "not a rukh settings key: "+why).
			WithHint("a settings key is one line " + keyTextV1 + "… as rukh writes it; restore the key the values were sealed with")
	}
	t := bytes.TrimSpace(text)
	switch {
	case len(t) == 0:
		return nil, bad("it is empty")
	case bytes.ContainsAny(t, "\r\n"):
		return nil, bad("it has more than one line")
	case !bytes.HasPrefix(t, []byte(keyTextPrefix)):
		return nil, bad("it does not start with " + keyTextV1)
	case !bytes.HasPrefix(t, []byte(keyTextV1)):
		v, _, _ := bytes.Cut(t[len(keyTextPrefix):], []byte(":"))
		if len(v) > 8 {
			v = v[:8]
		}
		return nil, kernel.Errorf(kernel.CodeUnsupported, "the settings key has version %s, which this rukh does not know", strconv.Quote(string(v))).
			WithHint("use the newer rukh that made it")
	}
	enc := t[len(keyTextV1):]
	key := make([]byte, base64.RawURLEncoding.DecodedLen(len(enc)))
	n, err := base64.RawURLEncoding.Decode(key, enc)
	if err != nil {
		return nil, bad("what follows " + keyTextV1 + " is not unpadded base64url")
	}
	if n != chacha20poly1305.KeySize {
		return nil, bad(fmt.Sprintf("it holds %d bytes, not %d", n, chacha20poly1305.KeySize))
	}
	return newSettingsKey(key[:n])
}

// Text is the key's text, one line ending in a newline: what the key
// file holds.
func (k *SettingsKey) Text() []byte {
	return []byte(keyTextV1 + base64.RawURLEncoding.EncodeToString(k.key[:]) + "\n")
}

// ID names the key without revealing it: the hex of the first 8 bytes of
// its SHA-256, which every value it seals carries.
func (k *SettingsKey) ID() string { return hex.EncodeToString(k.id[:]) }

func (k *SettingsKey) String() string { return "settings key " + k.ID() }

// GoString keeps %#v from printing the key.
func (k *SettingsKey) GoString() string { return k.String() }

// sealAD is the additional data that binds a sealed value to its setting.
func sealAD(pkg, endpoint, id string) []byte {
	return []byte("rukh-setting/1\x00" + pkg + "\x00" + endpoint + "\x00" + id)
}

// Seal seals plain, the canonical JSON of the value of setting id of pkg
// in scope endpoint ("" is the package's own), for SettingRecord.Sealed.
func (k *SettingsKey) Seal(pkg, endpoint, id string, plain []byte) []byte {
	out := make([]byte, sealedHeader, sealedHeader+len(plain)+chacha20poly1305.Overhead)
	out[0] = sealVersion
	copy(out[1:], k.id[:])
	nonce := out[1+keyIDLen : sealedHeader]
	// crypto/rand.Read does not fail: it ends the program instead.
	_, _ = rand.Read(nonce)
	return k.aead.Seal(out, nonce, plain, sealAD(pkg, endpoint, id))
}

// sealedProblem says what is wrong with sealed bytes, as far as they can
// be checked without the key; "" when nothing is.
func sealedProblem(sealed []byte) string {
	switch {
	case len(sealed) < sealedOverhead+1:
		return fmt.Sprintf("its sealed value has %d bytes, too few to be one", len(sealed))
	case sealed[0] != sealVersion:
		return fmt.Sprintf("its sealed value has version %d, not %d", sealed[0], sealVersion)
	case len(sealed) > sealedOverhead+maxSettingValue:
		return fmt.Sprintf("its sealed value has %d bytes, over the limit of %d", len(sealed), sealedOverhead+maxSettingValue)
	}
	return ""
}

// Open opens the sealed value of a sensitive record and returns its
// canonical JSON. A value sealed with another key is refused naming both
// keys' ids; one that does not open (damaged, or moved from another
// setting) is refused as damaged.
func (k *SettingsKey) Open(r SettingRecord) ([]byte, error) {
	if !r.Sensitive || len(r.Sealed) == 0 {
		return nil, kernel.Errorf(kernel.CodeInternal, "%s", r.what()+" holds no sealed value to open")
	}
	resetHint := "set it again: rukh settings set " + r.Package + " " + r.ID
	if r.Endpoint != "" {
		resetHint += " --endpoint " + r.Endpoint
	}
	if p := sealedProblem(r.Sealed); p != "" {
		return nil, kernel.Errorf(kernel.CodeInternal, "%s", "the stored "+r.what()+" is damaged: "+p).WithHint(resetHint)
	}
	if got := r.Sealed[1 : 1+keyIDLen]; !bytes.Equal(got, k.id[:]) {
		return nil, kernel.Errorf(kernel.CodeDenied, "%s was sealed with settings key %s, not with this rukh's settings key %s", r.what(), hex.EncodeToString(got), k.ID()).
			WithHint("give this rukh the key " + hex.EncodeToString(got) + " (RUKH_SETTINGS_KEY, RUKH_SETTINGS_KEY_FILE or the home's " + SettingsKeyName + "), or " + resetHint)
	}
	plain, err := k.aead.Open(nil, r.Sealed[1+keyIDLen:sealedHeader], r.Sealed[sealedHeader:], sealAD(r.Package, r.Endpoint, r.ID))
	if err != nil {
		return nil, kernel.Errorf(kernel.CodeInternal, "%s", "the stored "+r.what()+" does not open with settings key "+k.ID()+": it is damaged, or was sealed for another setting").
			WithHint(resetHint)
	}
	return plain, nil
}
