//go:build unix

package extpkg

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// fileStamp is what a fingerprint records of one entry.
type fileStamp struct {
	dev, ino     uint64
	mode         uint32
	size         int64
	ctime, mtime int64 // nanoseconds
}

// lstamp fills st from lstat(path), without the allocations of os.Lstat.
func lstamp(path string, st *fileStamp) error {
	var s unix.Stat_t
	for {
		err := unix.Lstat(path, &s)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &pathError{path: path, err: err}
		}
		break
	}
	*st = fileStamp{
		dev: uint64(s.Dev), ino: uint64(s.Ino), mode: uint32(s.Mode), size: int64(s.Size),
		ctime: s.Ctim.Nano(), mtime: s.Mtim.Nano(),
	}
	return nil
}

func (st *fileStamp) isDir() bool { return st.mode&unix.S_IFMT == unix.S_IFDIR }

// append writes the six numbers, space-separated.
func (st *fileStamp) append(b []byte) []byte {
	b = strconv.AppendUint(b, st.dev, 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, st.ino, 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, uint64(st.mode), 8)
	b = append(b, ' ')
	b = strconv.AppendInt(b, st.size, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, st.ctime, 10)
	b = append(b, ' ')
	return strconv.AppendInt(b, st.mtime, 10)
}
