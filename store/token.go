package store

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"hash/crc32"
	"math/big"
	"strings"

	"github.com/rukh-dev/rukh/kernel"
)

// Token format (docs/agents.md): rukh_<kind>_<body><check>, where kind is key
// (static), agt (short-lived) or otk (one-time), body is 256 random bits in
// base62 (43 characters) and check is the CRC-32 of everything before it in
// base62 (6 characters). Base62 has no "_", so the parts sit at fixed
// offsets; the checksum turns away a typo before any store lookup.
const (
	tokenBodyLen  = 43
	tokenCheckLen = 6
	// TokenLen is the length of every token.
	TokenLen = len("rukh_key_") + tokenBodyLen + tokenCheckLen
)

// Errors Authenticate and ConsumeOnce wrap; an HTTP server answers each
// with 401 (the caller learns nothing more), and logs which it was.
var (
	ErrTokenMalformed = errors.New("not a rukh token (bad format or checksum)")
	ErrTokenUnknown   = errors.New("unknown token")
	ErrTokenExpired   = errors.New("token expired")
	ErrTokenRevoked   = errors.New("token revoked")
	// ErrTokenSpent: a one-time token a call already used. Its record
	// stays (a tombstone) until it would have expired, so that a replay
	// is told apart from a token never seen.
	ErrTokenSpent = errors.New("one-time token already spent")
	// ErrTokenWrongCommand: a one-time token bound to another command; it
	// stays unconsumed.
	ErrTokenWrongCommand = errors.New("one-time token bound to another command")
)

// encode62 writes n in base62 (0-9a-zA-Z), left-padded with '0' to width.
func encode62(n *big.Int, width int) string {
	s := n.Text(62)
	if len(s) < width {
		s = strings.Repeat("0", width-len(s)) + s
	}
	return s
}

func is62(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

func tokenCheck(head string) string {
	return encode62(new(big.Int).SetUint64(uint64(crc32.ChecksumIEEE([]byte(head)))), tokenCheckLen)
}

// newToken mints a token of a credential kind and returns it with its hash.
func newToken(kind string) (string, kernel.TokenHash, error) {
	p := kernel.TokenPrefix(kind)
	if p == "" {
		return "", kernel.TokenHash{}, kernel.Errorf(kernel.CodeInternal, "no token kind %q", kind)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", kernel.TokenHash{}, kernel.Errorf(kernel.CodeInternal, "cannot read random bytes").Wrap(err)
	}
	head := "rukh_" + p + "_" + encode62(new(big.Int).SetBytes(raw[:]), tokenBodyLen)
	tok := head + tokenCheck(head)
	return tok, HashToken(tok), nil
}

// HashToken is the SHA-256 of a token, the only form the store keeps.
func HashToken(token string) kernel.TokenHash { return sha256.Sum256([]byte(token)) }

// ParseToken checks a token's shape and checksum without any store lookup
// and returns its credential kind and hash. Errors wrap ErrTokenMalformed
// and never quote the token.
func ParseToken(token string) (kind string, hash kernel.TokenHash, err error) {
	bad := kernel.Errorf(kernel.CodeDenied, "invalid bearer token").Wrap(ErrTokenMalformed)
	if len(token) != TokenLen || !strings.HasPrefix(token, "rukh_") || token[8] != '_' {
		return "", hash, bad
	}
	for _, k := range []string{kernel.CredentialStatic, kernel.CredentialShortLived, kernel.CredentialOneTime} {
		if token[5:8] == kernel.TokenPrefix(k) {
			kind = k
		}
	}
	head, check := token[:TokenLen-tokenCheckLen], token[TokenLen-tokenCheckLen:]
	if kind == "" || !is62(token[9:]) || subtle.ConstantTimeCompare([]byte(tokenCheck(head)), []byte(check)) != 1 {
		return "", hash, bad
	}
	return kind, HashToken(token), nil
}
