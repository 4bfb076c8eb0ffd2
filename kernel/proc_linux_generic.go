//go:build linux && rukh_portable

package kernel

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// A rukh_portable Linux build reads the same /proc, without the
// primitives macOS lacks.
func osSnapshot() procTable                { return procSnapshot() }
func osLookup(pid int) (procInfo, bool)    { return procLookup(pid) }
func osWaitExited(pid int) error           { return procWaitExited(pid) }
func osMarker(pid int, kv string) bool     { return procMarker(pid, kv) }
func osFileNames(f []*os.File) []string    { return procFileNames(f) }
func osHolds(pid int, names []string) bool { return procHolds(pid, names) }

// procFileNames names files as /proc/PID/fd links do: "socket:[inode]",
// "pipe:[inode]".
func procFileNames(files []*os.File) []string {
	var names []string
	for _, f := range files {
		var st unix.Stat_t
		if f == nil || unix.Fstat(int(f.Fd()), &st) != nil {
			continue
		}
		kind := ""
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFSOCK:
			kind = "socket"
		case unix.S_IFIFO:
			kind = "pipe"
		default:
			continue // a shared file (a terminal, a log) names no invocation
		}
		names = append(names, kind+":["+strconv.FormatUint(st.Ino, 10)+"]")
	}
	return names
}

func procHolds(pid int, names []string) bool {
	if len(names) == 0 {
		return false
	}
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		l, err := os.Readlink(dir + e.Name())
		if err != nil {
			continue
		}
		for _, n := range names {
			if l == n {
				return true
			}
		}
	}
	return false
}
