//go:build unix

package store

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"
)

// lockHold opens the hold file and locks it, shared (waiting) or exclusive
// (not waiting: errHeld, with the file still open to name the holders). A
// lock on a file that was unlinked meanwhile holds nothing: open again.
func lockHold(dir, path string, exclusive bool) (*os.File, error) {
	for range 100 {
		f, err := openHold(dir, path)
		if err != nil {
			return nil, err
		}
		how := syscall.LOCK_SH
		if exclusive {
			how = syscall.LOCK_EX | syscall.LOCK_NB
		}
		if err := flock(f, how); err != nil {
			if exclusive && errors.Is(err, syscall.EWOULDBLOCK) {
				return f, errHeld
			}
			f.Close()
			return nil, err
		}
		var held, now syscall.Stat_t
		if syscall.Fstat(int(f.Fd()), &held) == nil && syscall.Stat(path, &now) == nil &&
			held.Dev == now.Dev && held.Ino == now.Ino {
			return f, nil
		}
		f.Close()
	}
	return nil, errors.New("the hold file keeps being replaced")
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}

// holders names the processes holding f's lock, from /proc/locks (Linux);
// nil where that cannot be read.
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

// cmdline is a process's command line for a message: the program's base
// name and its first few words, at most 60 bytes.
func cmdline(pid int) string {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || len(data) == 0 {
		return ""
	}
	words := strings.Split(string(bytes.TrimRight(data, "\x00")), "\x00")
	words[0] = filepath.Base(words[0])
	if len(words) > 4 {
		words = append(words[:4], "…")
	}
	s := strings.Join(words, " ")
	if len(s) > 60 {
		n := 57
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}
