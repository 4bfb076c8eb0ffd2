//go:build linux && !rukh_portable

package kernel

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The kernel holds no process of the host's root to RLIMIT_NPROC, so a
// confined call of a root rukh has its processes limit enforced by a pids
// cgroup of its own instead: created below rukh's cgroup with pids.max
// the template's processes, the program put in it by the init while it is
// stopped at its exec, its pids.events read after the call and the cgroup
// removed.

var pidsRoot = sync.OnceValues(findPidsCgroup)

// findPidsCgroup is rukh's own cgroup in the pids hierarchy (cgroup v1),
// or its cgroup v2 when the pids controller is enabled for its children.
func findPidsCgroup() (string, error) {
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	var v1, v2 string
	haveV1, haveV2 := false, false
	for _, line := range strings.Split(string(own), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			v2, haveV2 = f[2], true
		} else if slices.Contains(strings.Split(f[1], ","), "pids") {
			v1, haveV1 = f[2], true
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(mounts))
	for sc.Scan() {
		// id parent major:minor root mountpoint options ... - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 3 {
			continue
		}
		root, mp := f[3], f[4]
		rel := func(p string) (string, bool) {
			if p != root && !strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/") {
				return "", false
			}
			return filepath.Join(mp, strings.TrimPrefix(p, root)), true
		}
		switch {
		case haveV1 && g[0] == "cgroup" && slices.Contains(strings.Split(g[2], ","), "pids"):
			if dir, ok := rel(v1); ok {
				return dir, nil
			}
		case haveV2 && !haveV1 && g[0] == "cgroup2":
			if dir, ok := rel(v2); ok {
				ctl, _ := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
				if slices.Contains(strings.Fields(string(ctl)), "pids") {
					return dir, nil
				}
				return "", fmt.Errorf("the pids controller is not enabled below rukh's cgroup %s", dir)
			}
		}
	}
	return "", errors.New("rukh's cgroup has no pids controller")
}

// pidsCgroup is one call's pids cgroup.
type pidsCgroup struct {
	dir   string
	mark  string   // its mark in the scratch parent
	procs *os.File // its cgroup.procs, for the init
}

// newPidsCgroup makes the pids cgroup of invocation id, limited to max
// tasks.
func newPidsCgroup(id string, max int) (*pidsCgroup, error) {
	root, err := pidsRoot()
	if err != nil {
		return nil, err
	}
	// The cgroup's mark in the scratch parent is what makes a sweep look
	// for cgroups at all (SweepLeftovers).
	parent, err := privateParent()
	if err != nil {
		return nil, err
	}
	name := ownerTag() + "-" + id
	mark := filepath.Join(parent, name+cgroupMark)
	if err := os.WriteFile(mark, nil, 0o600); err != nil {
		return nil, err
	}
	dir := filepath.Join(root, "rukh-"+name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		os.Remove(mark)
		return nil, err
	}
	c := &pidsCgroup{dir: dir, mark: mark}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(max)), 0); err != nil {
		c.remove()
		return nil, err
	}
	if c.procs, err = os.OpenFile(filepath.Join(dir, "cgroup.procs"), os.O_WRONLY|unix.O_CLOEXEC, 0); err != nil {
		c.remove()
		return nil, err
	}
	return c, nil
}

// hitMax reports whether a fork or clone was refused for the limit.
func (c *pidsCgroup) hitMax() bool {
	b, _ := os.ReadFile(filepath.Join(c.dir, "pids.events"))
	for _, line := range strings.Split(string(b), "\n") {
		if n, ok := strings.CutPrefix(line, "max "); ok {
			v, _ := strconv.Atoi(strings.TrimSpace(n))
			return v > 0
		}
	}
	return false
}

// remove removes the cgroup once its last task is gone (the kernel frees
// a task's cgroup a moment after its exit is reaped).
func (c *pidsCgroup) remove() {
	if c.procs != nil {
		c.procs.Close()
	}
	for pause := time.Millisecond; ; pause *= 2 {
		err := unix.Rmdir(c.dir)
		if err == nil || err == unix.ENOENT {
			os.Remove(c.mark)
			return
		}
		if pause > 200*time.Millisecond {
			return // the mark stays: the next sweep tries again
		}
		time.Sleep(pause)
	}
}

// noPidsCgroup says why a root rukh cannot limit processes ("" when it can).
func noPidsCgroup() string {
	if os.Getuid() != 0 {
		return ""
	}
	if _, err := pidsRoot(); err != nil {
		return err.Error()
	}
	return ""
}

// sweepCgroups removes the empty pids cgroups of rukh processes that are
// gone (a cgroup with a task left is not removed: rmdir refuses it).
func sweepCgroups() (removed []string, warnings []string) {
	if os.Getuid() != 0 {
		return nil, nil
	}
	root, err := pidsRoot()
	if err != nil {
		return nil, nil
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, nil
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), "rukh-")
		if !ok || !e.IsDir() {
			continue
		}
		owner, ok := parseOwnerTag(rest)
		if !ok || Alive(owner) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if err := unix.Rmdir(dir); err != nil {
			warnings = append(warnings, fmt.Sprintf("cannot remove the pids cgroup %s of a killed rukh: %v", dir, err))
			continue
		}
		removed = append(removed, dir)
	}
	return removed, warnings
}
