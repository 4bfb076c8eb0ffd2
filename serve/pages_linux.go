package serve

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// dropStartupPages unmaps from this process the pages of its own binary
// that it has touched so far, once serving starts. Reading the home, the
// catalogue and the command line touches code and data that serving
// never uses again; the kernel then maps the neighbours of each touched
// page too, so most of the binary stays counted in the resident set. The
// pages are clean copies of the file, kept in the page cache: dropping
// them frees no memory of the host's by itself, but what the process
// holds (its RSS, what a container's limit sees mapped) becomes only what
// it uses after start, and the rest is page cache the kernel can reclaim
// (docs/performance.md). Serving maps back what it needs on first use.
//
// Only read-only mappings of the executable with no private copy of any
// page are dropped: a writable segment, or one the loader relocated (a
// position-independent build's read-only-after-relocation part), holds
// data the file does not, which dropping would lose.
func dropStartupPages() {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return
	}
	for _, m := range exeMappings(smaps, exe) {
		syscall.Syscall(syscall.SYS_MADVISE, m.start, m.end-m.start, syscall.MADV_DONTNEED)
	}
}

type mapping struct{ start, end uintptr }

// exeMappings reads /proc/self/smaps text: the read-only mappings of the
// file exe whose pages are all the file's (none Anonymous).
func exeMappings(smaps []byte, exe string) []mapping {
	var out []mapping
	var cur mapping
	ok := false
	flush := func() {
		if ok {
			out = append(out, cur)
		}
		ok = false
	}
	sc := bufio.NewScanner(bytes.NewReader(smaps))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if lo, hi, isRange := strings.Cut(f[0], "-"); isRange && len(f) >= 5 {
			flush()
			start, err1 := strconv.ParseUint(lo, 16, 64)
			end, err2 := strconv.ParseUint(hi, 16, 64)
			ok = err1 == nil && err2 == nil && len(f) == 6 && f[5] == exe && len(f[1]) == 4 && f[1][1] == '-' && end > start
			cur = mapping{uintptr(start), uintptr(end)}
			continue
		}
		switch f[0] {
		case "Anonymous:", "Swap:": // a private copy; a dirty page is the file's, not yet written back
			if len(f) < 2 || f[1] != "0" {
				ok = false
			}
		}
	}
	flush()
	return out
}
