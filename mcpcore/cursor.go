package mcpcore

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
)

// A cursor is base64url(revision uint64 | position uint32 | mac[:16]) where
// mac = HMAC-SHA256(secret, "rukh.mcp-cursor/1" 0 endpoint 0 revision position).
// The endpoint stands for the whole visibility context: the launch binding is
// fixed for the process and the projection is a function of revision and
// endpoint. The secret is per process unless Config.Secret pins it.
const (
	cursorDomain  = "rukh.mcp-cursor/1"
	cursorPayload = 8 + 4
	cursorMAC     = 16
	cursorLen     = cursorPayload + cursorMAC
)

type cursorCodec struct {
	secret   []byte
	endpoint string
}

func (c *cursorCodec) mac(payload []byte) []byte {
	h := hmac.New(sha256.New, c.secret)
	h.Write([]byte(cursorDomain))
	h.Write([]byte{0})
	h.Write([]byte(c.endpoint))
	h.Write([]byte{0})
	h.Write(payload)
	return h.Sum(nil)[:cursorMAC]
}

func (c *cursorCodec) encode(rev uint64, pos int) string {
	var b [cursorLen]byte
	binary.BigEndian.PutUint64(b[:8], rev)
	binary.BigEndian.PutUint32(b[8:12], uint32(pos))
	copy(b[cursorPayload:], c.mac(b[:cursorPayload]))
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// decode checks the cursor's integrity and returns what it names. ok is
// false for anything this process did not issue for this endpoint.
func (c *cursorCodec) decode(s string) (rev uint64, pos int, ok bool) {
	if base64.RawURLEncoding.DecodedLen(len(s)) != cursorLen {
		return 0, 0, false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil || len(b) != cursorLen {
		return 0, 0, false
	}
	if !hmac.Equal(b[cursorPayload:], c.mac(b[:cursorPayload])) {
		return 0, 0, false
	}
	return binary.BigEndian.Uint64(b[:8]), int(binary.BigEndian.Uint32(b[8:12])), true
}
