//go:build unix

package store

import (
	"encoding/binary"
	"hash/fnv"

	"golang.org/x/sys/unix"
)

// bbolt's meta page (go.etcd.io/bbolt internal/common): a 16-byte page
// header, then magic, version, page size, flags, root bucket (16), freelist,
// high page id, txid and an FNV-64a checksum of the fields before it, in
// native byte order. Pages 0 and 1 hold the two alternating metas.
const (
	metaOff      = 16
	metaMagic    = 0xED0CDAED
	metaVersion  = 2
	metaTxidOff  = metaOff + 48
	metaSumOff   = metaOff + 56
	metaEnd      = metaOff + 64
	metaPageSize = metaOff + 8
)

func fileStamp(path string) (Stamp, bool) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return Stamp{}, false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return Stamp{}, false
	}
	var buf [metaEnd]byte
	t0, ok0 := metaTxid(fd, 0, buf[:])
	if !ok0 {
		return Stamp{}, false
	}
	pageSize := int64(binary.NativeEndian.Uint32(buf[metaPageSize:]))
	if pageSize < metaEnd {
		return Stamp{}, false
	}
	t1, ok1 := metaTxid(fd, pageSize, buf[:])
	if !ok1 {
		return Stamp{}, false
	}
	return Stamp{
		dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(),
		txid: max(t0, t1),
	}, true
}

// metaTxid reads the meta page at off into buf and returns its txid when
// it is a valid meta (a torn one, mid-write, is not).
func metaTxid(fd int, off int64, buf []byte) (uint64, bool) {
	if off < 0 {
		return 0, false
	}
	n, err := unix.Pread(fd, buf, off)
	if err != nil || n != len(buf) {
		return 0, false
	}
	ne := binary.NativeEndian
	if ne.Uint32(buf[metaOff:]) != metaMagic || ne.Uint32(buf[metaOff+4:]) != metaVersion {
		return 0, false
	}
	h := fnv.New64a()
	h.Write(buf[metaOff:metaSumOff])
	if h.Sum64() != ne.Uint64(buf[metaSumOff:]) {
		return 0, false
	}
	return ne.Uint64(buf[metaTxidOff:]), true
}
