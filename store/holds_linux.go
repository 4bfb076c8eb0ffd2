package store

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// holders names the processes holding f's lock, from /proc/locks; nil
// where that cannot be read.
func holders(f *os.File) []Holder {
	var st syscall.Stat_t
	if syscall.Fstat(int(f.Fd()), &st) != nil {
		return nil
	}
	locks, err := os.Open("/proc/locks")
	if err != nil {
		return nil
	}
	defer locks.Close()
	// "1: FLOCK  ADVISORY  READ  1234 fd:01:5678 0 EOF"; waiters ("1: ->
	// FLOCK …") hold nothing. The device is the filesystem's, which on
	// overlay filesystems need not be st_dev: match the inode.
	ino := ":" + strconv.FormatUint(uint64(st.Ino), 10)
	var out []Holder
	seen := map[int]bool{}
	sc := bufio.NewScanner(locks)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" || !strings.HasSuffix(fields[5], ino) {
			continue
		}
		pid, err := strconv.Atoi(fields[4])
		if err != nil || pid <= 0 || seen[pid] {
			continue
		}
		seen[pid] = true
		out = append(out, Holder{PID: pid, Command: cmdline(pid)})
	}
	return out
}

// cmdline is another process's command line for a message, from /proc.
func cmdline(pid int) string {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || len(data) == 0 {
		return ""
	}
	return commandLine(strings.Split(string(bytes.TrimRight(data, "\x00")), "\x00"))
}
