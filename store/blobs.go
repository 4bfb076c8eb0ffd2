package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/rukh-dev/rukh/kernel"
)

// Package archives are kept in the store as content-addressed blobs when
// the store is shared (etcd), so that a release installed on one machine
// can be materialised on any other: a header under the package digest,
// and the archive in chunks small enough for one etcd request each.
var bucketBlobs = []byte("blobs") // digest 0x00 "h" → blobRec; digest 0x00 "c" 8-byte index → chunk

// MaxBlobBytes bounds one package archive kept in a shared store.
const MaxBlobBytes = 64 << 20

// blobChunk is the size of one stored chunk.
const blobChunk = 512 << 10

type blobRec struct {
	Size   int    `json:"size"`
	Chunks int    `json:"chunks"`
	SHA256 string `json:"sha256"` // of the archive bytes
}

func blobKey(digest string, tag byte, rest ...byte) []byte {
	k := append([]byte(digest), 0, tag)
	return append(k, rest...)
}

// PutBlob keeps archive as the package with this digest; it is a no-op when
// the store already has it. Chunks go first, each in its own transaction;
// the header, written last, makes the blob exist.
func (s *Store) PutBlob(digest string, archive []byte) error {
	if len(archive) > MaxBlobBytes {
		return kernel.Errorf(kernel.CodeInvalid, "the package archive is %d bytes, over the %d a shared store keeps per package", len(archive), MaxBlobBytes).
			WithHint("make the package smaller (leave build outputs and test data out of it)")
	}
	if ok, err := s.HasBlob(digest); err != nil || ok {
		return err
	}
	sum := sha256.Sum256(archive)
	n := 0
	for off := 0; off < len(archive) || n == 0; off += blobChunk {
		chunk := archive[off:min(off+blobChunk, len(archive))]
		i := n
		if err := s.update(func(tx txn) error {
			b, err := tx.CreateBucketIfNotExists(bucketBlobs)
			if err != nil {
				return err
			}
			return b.Put(blobKey(digest, 'c', itob(uint64(i))...), chunk)
		}); err != nil {
			return err
		}
		n++
	}
	rec, _ := json.Marshal(blobRec{Size: len(archive), Chunks: n, SHA256: hex.EncodeToString(sum[:])})
	return s.update(func(tx txn) error {
		b, err := tx.CreateBucketIfNotExists(bucketBlobs)
		if err != nil {
			return err
		}
		return b.Put(blobKey(digest, 'h'), rec)
	})
}

// HasBlob reports whether the store keeps the archive of digest.
func (s *Store) HasBlob(digest string) (bool, error) {
	ok := false
	_, err := s.view(func(tx txn) error {
		b := tx.Bucket(bucketBlobs)
		ok = b != nil && b.Get(blobKey(digest, 'h')) != nil
		return nil
	})
	return ok, err
}

// Blob returns the archive of digest, checked against the hash its header
// records; CodeNotFound when the store has none.
func (s *Store) Blob(digest string) ([]byte, error) {
	var out []byte
	var rec blobRec
	found := false
	_, err := s.view(func(tx txn) error {
		out, found = nil, false
		b := tx.Bucket(bucketBlobs)
		if b == nil {
			return nil
		}
		raw := b.Get(blobKey(digest, 'h'))
		if raw == nil {
			return nil
		}
		if err := s.decode("blob header", raw, &rec); err != nil {
			return err
		}
		found = true
		out = make([]byte, 0, rec.Size)
		for i := range rec.Chunks {
			c := b.Get(blobKey(digest, 'c', itob(uint64(i))...))
			if c == nil {
				return s.internal(fmt.Sprintf("the archive of %s lacks chunk %d", digest, i), nil)
			}
			out = append(out, c...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, kernel.Errorf(kernel.CodeNotFound, "%s", "the store keeps no archive of package "+digest).
			WithHint("install the package again on any machine that shares this store ('rukh install PATH')")
	}
	if sum := sha256.Sum256(out); len(out) != rec.Size || hex.EncodeToString(sum[:]) != rec.SHA256 {
		return nil, s.internal("the stored archive of "+digest+" does not match its hash", nil)
	}
	return out, nil
}
