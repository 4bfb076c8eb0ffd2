//go:build unix

package store

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// oneReadPage is the page size whose two meta pages a stamp reads at once.
const oneReadPage = 4096

var stampBufs = sync.Pool{New: func() any { return new([oneReadPage + metaEnd]byte) }}

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
	// Both meta pages in one read where the page size is the usual one;
	// otherwise the second page is read where the first says it is.
	bp := stampBufs.Get().(*[oneReadPage + metaEnd]byte)
	defer stampBufs.Put(bp)
	n, err := unix.Pread(fd, bp[:], 0)
	if err != nil || n < metaEnd {
		return Stamp{}, false
	}
	m0, ok0 := decodeMeta(bp[:metaEnd])
	if !ok0 || m0.pageSize < metaEnd {
		return Stamp{}, false
	}
	var m1 snapMeta
	var ok1 bool
	if m0.pageSize == oneReadPage && n == len(bp) {
		m1, ok1 = decodeMeta(bp[oneReadPage:])
	} else {
		m1, ok1 = preadMeta(fd, int64(m0.pageSize), bp[:metaEnd])
	}
	if !ok1 {
		return Stamp{}, false
	}
	s := Stamp{
		dev: uint64(fi.Dev), ino: uint64(fi.Ino), size: fi.Size,
		mtime: fi.Mtim.Nano(), ctime: fi.Ctim.Nano(),
		txid: max(m0.txid, m1.txid),
	}
	st.saw(s.dev, s.ino, s.txid)
	return s, true
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

// preadMeta reads the meta page at off into buf and decodes it.
func preadMeta(fd int, off int64, buf []byte) (snapMeta, bool) {
	if off < 0 {
		return snapMeta{}, false
	}
	n, err := unix.Pread(fd, buf, off)
	if err != nil || n != len(buf) {
		return snapMeta{}, false
	}
	return decodeMeta(buf)
}

// fileIdentity is f's device and inode.
func fileIdentity(f *os.File) (dev, ino uint64, ok bool) {
	var st unix.Stat_t
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, 0, false
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.Fstat(int(fd), &st) }); err != nil || serr != nil {
		return 0, 0, false
	}
	return uint64(st.Dev), uint64(st.Ino), true
}
