//go:build linux

package kernel

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Scratch directories for confined calls, made ahead of them: making one
// costs more than the rest of the directory's life. A spare is made by
// this rukh, private to its user like any scratch directory, and named a
// spare ("PID-START-spare-N"); a call takes it by renaming it to a call's
// name (never over another's), so each serves exactly one call, and the
// call removes it as it ends. The first such call of a process makes its
// own (a one-shot CLI makes nothing ahead); from the second on, a spare
// is made just after each call ends (afterReply), so that making it
// competes neither with the call it serves nor with the ended one's reply. Spares a process leaves at its exit are
// removed by the next sweep, which does not count them as what a killed
// rukh left.
var scratchPool struct {
	ready   chan string
	calls   atomic.Int64
	filling atomic.Bool
	once    sync.Once
}

const (
	scratchSpares = 2
	spareMark     = "spare-"
)

// takeScratch is a new scratch directory for one call.
func takeScratch() (string, error) {
	scratchPool.once.Do(func() { scratchPool.ready = make(chan string, scratchSpares) })
	scratchPool.calls.Add(1)
	for {
		var spare string
		select {
		case spare = <-scratchPool.ready:
		default:
			return makeScratch()
		}
		dir := filepath.Join(filepath.Dir(spare), strings.Replace(filepath.Base(spare), "-"+spareMark, "-", 1))
		if unix.Renameat2(unix.AT_FDCWD, spare, unix.AT_FDCWD, dir, unix.RENAME_NOREPLACE) == nil {
			return dir, nil
		}
		os.Remove(spare)
	}
}

// fillScratch makes spares until there are scratchSpares. It runs at the
// calls' priority: a mkdir holds the parent directory, which the calls'
// renames and rmdirs need, and at a lower one it could hold it long.
func fillScratch() {
	defer scratchPool.filling.Store(false)
	for len(scratchPool.ready) < scratchSpares {
		parent, err := privateParent()
		if err != nil {
			return
		}
		spare, err := os.MkdirTemp(parent, ownerTag()+"-"+spareMark)
		if err != nil {
			return
		}
		select {
		case scratchPool.ready <- spare:
		default:
			os.Remove(spare)
			return
		}
	}
}

// removeScratch removes a call's scratch directory as the call ends:
// most are left empty, and one rmdir removes those. From a process's
// second call on, it makes the spares of the next calls.
func removeScratch(dir string) {
	if unix.Rmdir(dir) != nil {
		os.RemoveAll(dir)
	}
	if scratchPool.calls.Load() > 1 && scratchPool.filling.CompareAndSwap(false, true) {
		afterReply(fillScratch)
	}
}
