package policy_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/gowebpki/jcs"
	"github.com/rukh-dev/rukh/policy"
)

// Fingerprint's RFC 8785 form agrees with an independent implementation on
// the strings where canonical forms differ most: escapes, control
// characters, non-ASCII, line separators, surrogate pairs.
func TestFingerprintMatchesIndependentJCS(t *testing.T) {
	odd := []string{
		"", "cmd.id", `q"uote`, `back\slash`, "tab\tnl\ncr\rff\fbs\b", "\x00\x01\x1f\x7f",
		"é ü ß", "日本語", "\u2028\u2029", "emoji 😀", "</script>&<>", "a/b", "\ufeffbom",
	}
	for _, ns := range odd {
		for _, id := range odd {
			got, err := policy.Fingerprint(ns, "r7", id)
			if err != nil {
				t.Fatalf("Fingerprint(%q, %q): %v", ns, id, err)
			}
			raw, err := json.Marshal([]string{policy.ToolNameDomain, ns, "r7", id})
			if err != nil {
				t.Fatal(err)
			}
			canon, err := jcs.Transform(raw)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(canon)
			if want := hex.EncodeToString(sum[:]); got != want {
				t.Errorf("Fingerprint(%q, %q) = %s, want %s (JCS form %s)", ns, id, got, want, canon)
			}
		}
	}
}
