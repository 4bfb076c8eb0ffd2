package mcpcore

import (
	"encoding/base64"
	"testing"
)

func TestCursor(t *testing.T) {
	c := cursorCodec{secret: []byte("k1"), endpoint: "local"}
	s := c.encode(7, 64)
	if rev, pos, ok := c.decode(s); !ok || rev != 7 || pos != 64 {
		t.Fatalf("decode(encode(7, 64)) = %d, %d, %v", rev, pos, ok)
	}
	others := map[string]cursorCodec{
		"other endpoint": {secret: []byte("k1"), endpoint: "remote"},
		"other secret":   {secret: []byte("k2"), endpoint: "local"},
	}
	for name, o := range others {
		if _, _, ok := o.decode(s); ok {
			t.Errorf("%s accepted the cursor", name)
		}
	}
	raw, _ := base64.RawURLEncoding.DecodeString(s)
	for i := range raw {
		for _, bit := range []byte{1, 0x80} {
			b := append([]byte(nil), raw...)
			b[i] ^= bit
			if _, _, ok := c.decode(base64.RawURLEncoding.EncodeToString(b)); ok {
				t.Errorf("flipping bit %#x of byte %d was accepted", bit, i)
			}
		}
	}
	for _, bad := range []string{"", "x", s[:len(s)-1], s + "A", s + "=", base64.URLEncoding.EncodeToString(raw), base64.StdEncoding.EncodeToString(raw)} {
		if _, _, ok := c.decode(bad); ok && bad != s {
			t.Errorf("decode(%q) accepted", bad)
		}
	}
}
