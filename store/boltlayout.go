package store

import (
	"encoding/binary"
	"hash/fnv"
)

// The store reads bbolt's file itself in three places: snapshot reads
// (snapshot.go), commit stamps (stamp_unix.go) and the damage checks
// (damage.go). They rest on bbolt internals that its API does not promise:
// the layout of the meta, branch, leaf and freelist pages below, and the
// order in which a transaction reuses pages (the pages of committed
// transaction N are rewritten no earlier than by N+2). checkedBoltVersion
// is the bbolt version they were last checked against; a test fails when
// go.mod names another, until they are checked again.
const checkedBoltVersion = "v1.5.0"

// bbolt's meta page (go.etcd.io/bbolt internal/common): a 16-byte page
// header, then magic, version, page size, flags, root bucket (16), freelist,
// high page id, txid and an FNV-64a checksum of the fields before it, in
// native byte order. Pages 0 and 1 hold the two alternating metas.
const (
	metaOff         = 16
	metaMagic       = 0xED0CDAED
	metaVersion     = 2
	metaPageSize    = metaOff + 8
	metaRootOff     = metaOff + 16
	metaFreelistOff = metaOff + 32
	metaPgidOff     = metaOff + 40
	metaTxidOff     = metaOff + 48
	metaSumOff      = metaOff + 56
	metaEnd         = metaOff + 64
	noFreelist      = ^uint64(0)
)

// bbolt's page header (id, flags, count, overflow), the branch and leaf
// elements after it, and a bucket's header in its leaf value.
const (
	pageHeader   = 16
	pageElem     = 16
	pageBranch   = 0x01
	pageLeaf     = 0x02
	pageFreelist = 0x10
	leafIsBuckt  = 0x01
	bucketHdr    = 16
)

// snapMeta is what the store reads of one meta page.
type snapMeta struct {
	pageSize int
	root     uint64 // the root bucket's page
	freelist uint64 // the freelist's page, or noFreelist
	hwm      uint64 // pages at or above it are not in this state
	txid     uint64
}

// decodeMeta decodes a meta page's first metaEnd bytes; ok is false
// unless the magic, version and checksum are bbolt's (a meta torn
// mid-write is not valid).
func decodeMeta(buf []byte) (m snapMeta, ok bool) {
	ne := binary.NativeEndian
	if len(buf) < metaEnd || ne.Uint32(buf[metaOff:]) != metaMagic || ne.Uint32(buf[metaOff+4:]) != metaVersion {
		return snapMeta{}, false
	}
	h := fnv.New64a()
	h.Write(buf[metaOff:metaSumOff])
	if h.Sum64() != ne.Uint64(buf[metaSumOff:]) {
		return snapMeta{}, false
	}
	return snapMeta{pageSize: int(ne.Uint32(buf[metaPageSize:])), root: ne.Uint64(buf[metaRootOff:]),
		freelist: ne.Uint64(buf[metaFreelistOff:]), hwm: ne.Uint64(buf[metaPgidOff:]), txid: ne.Uint64(buf[metaTxidOff:])}, true
}
