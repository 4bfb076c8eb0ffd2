package store

import (
	"crypto/sha256"
	"strconv"
	"testing"
)

// Refs cut from shared blocks are each their own sum, across blocks, and
// stay so as more are cut.
func TestRefsFromBlocks(t *testing.T) {
	w := &IndexWriter{}
	var refs, want []string
	for i := range 3*refBlock/refLen + 5 {
		sum := sha256.Sum256([]byte(strconv.Itoa(i)))
		refs, want = append(refs, w.ref(sum[:])), append(want, string(sum[:]))
	}
	for i := range refs {
		if refs[i] != want[i] {
			t.Fatalf("ref %d is %x, want %x", i, refs[i], want[i])
		}
	}
}
