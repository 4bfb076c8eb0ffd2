//go:build unix

package kernel

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// A confined call leaves two things behind when the rukh running it is
// killed mid-call: its scratch directory and, for a root rukh with a
// processes limit, its pids cgroup (empty: its processes died with their
// namespace). Both are named by the rukh process that made them (pid and
// start time), and SweepLeftovers removes those of rukh processes that are
// gone.

// scratchParent holds this user's scratch directories, below the system's
// temporary directory: a sweep reads one directory, usually absent.
func scratchParent() string {
	return filepath.Join(os.TempDir(), "rukh-scratch-"+strconv.Itoa(os.Getuid()))
}

// ownerTag names this rukh process in what it leaves behind.
var ownerTag = sync.OnceValue(func() string {
	self, _ := Self()
	return fmt.Sprintf("%d-%d", self.PID, self.Start)
})

// parseOwnerTag reads the owner of a name "PID-START-rest".
func parseOwnerTag(name string) (Process, bool) {
	f := strings.SplitN(name, "-", 3)
	if len(f) != 3 {
		return Process{}, false
	}
	pid, err1 := strconv.Atoi(f[0])
	start, err2 := strconv.ParseUint(f[1], 10, 64)
	return Process{PID: pid, Start: start}, err1 == nil && err2 == nil && pid > 0
}

// makeScratch makes a call's scratch directory, private to this user.
func makeScratch() (string, error) {
	parent, err := privateParent()
	if err != nil {
		return "", err
	}
	return os.MkdirTemp(parent, ownerTag()+"-")
}

// privateParent makes (or finds) scratchParent, and refuses one that is not
// this user's own private directory: another user could have made it first.
func privateParent() (string, error) {
	parent := scratchParent()
	if err := os.Mkdir(parent, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	fi, err := os.Lstat(parent)
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() || fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%s is not a private directory of this user", parent)
	}
	return parent, nil
}

// cgroupMark ends the name of the file a call's pids cgroup has in the
// scratch parent for as long as the cgroup may exist: made before the
// cgroup, removed after it.
const cgroupMark = ".pids"

// SweepLeftovers removes the scratch directories and pids cgroups of rukh
// processes that are gone, and returns what it removed. It costs one
// directory read when no rukh that is gone left anything in the scratch
// parent: every cgroup has its mark there, so the cgroups (whose lookup
// reads /proc, at every start of every rukh) are looked at only when a
// gone rukh left an entry.
func SweepLeftovers() (removed []string, warnings []string) {
	parent := scratchParent()
	ents, err := os.ReadDir(parent)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []string{fmt.Sprintf("cannot read %s to remove what killed rukh processes left: %v", parent, err)}
	}
	var gone []string
	for _, e := range ents {
		if owner, ok := parseOwnerTag(e.Name()); ok && !Alive(owner) {
			gone = append(gone, e.Name())
		}
	}
	if len(gone) == 0 {
		return nil, nil
	}
	if _, err := privateParent(); err != nil {
		return nil, []string{err.Error()}
	}
	// The cgroups go first: a mark is removed only once no cgroup of a
	// gone rukh is left, so a sweep that could not remove one tries again.
	removed, warnings = sweepCgroups()
	for _, name := range gone {
		if strings.HasSuffix(name, cgroupMark) {
			if len(warnings) == 0 {
				os.Remove(filepath.Join(parent, name))
			}
			continue
		}
		dir := filepath.Join(parent, name)
		if err := os.RemoveAll(dir); err != nil {
			warnings = append(warnings, fmt.Sprintf("cannot remove the scratch directory %s of a killed rukh: %v", dir, err))
			continue
		}
		if f := strings.SplitN(name, "-", 3); strings.HasPrefix(f[2], spareMark) {
			continue // made ahead, never a call's: any exit leaves them
		}
		removed = append(removed, dir)
	}
	return removed, warnings
}
