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

func (st *stampState) read(path string) (Stamp, bool) {
	// stat by path: a store file replaced (store copy, a restore) is
	// another file, read afresh
	var fi unix.Stat_t
	if unix.Stat(path, &fi) != nil {
		return Stamp{}, false
	}
	fd, ok := st.file(path, &fi)
	if !ok {
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
		dev: uint64(fi.Dev), ino: uint64(fi.Ino), size: fi.Size,
		mtime: fi.Mtim.Nano(), ctime: fi.Ctim.Nano(),
		txid: max(t0, t1),
	}, true
}

// file is the kept descriptor of the file fi describes, opened on first
// use and again when the path names another file. Kept, so that a stamp
// costs a stat and two reads, not an open and a close as well.
func (st *stampState) file(path string, fi *unix.Stat_t) (int, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.open && st.dev == uint64(fi.Dev) && st.ino == uint64(fi.Ino) {
		return st.fd, true
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, false
	}
	var now unix.Stat_t
	if unix.Fstat(fd, &now) != nil || now.Dev != fi.Dev || now.Ino != fi.Ino {
		unix.Close(fd) // replaced between the stat and the open
		return -1, false
	}
	if st.open {
		unix.Close(st.fd)
	}
	st.fd, st.open, st.dev, st.ino = fd, true, uint64(fi.Dev), uint64(fi.Ino)
	return fd, true
}

// close lets the kept descriptor go.
func (st *stampState) close() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.open {
		unix.Close(st.fd)
		st.open = false
	}
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
