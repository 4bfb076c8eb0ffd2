//go:build !rukh_portable

package kernel

import (
	"bytes"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Linux: rukh is a child subreaper and every leader gets SIGKILL when rukh
// dies (parent-death signal).
var plat platform = linuxPlatform{}

type linuxPlatform struct{ noGuard }

func (linuxPlatform) setup() { unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }

func (linuxPlatform) subreaper() bool { return true }

func (linuxPlatform) procAttr(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

func (linuxPlatform) snapshot() procTable             { return procSnapshot() }
func (linuxPlatform) lookup(pid int) (procInfo, bool) { return procLookup(pid) }
func (linuxPlatform) waitExited(pid int) error        { return procWaitExited(pid) }
func (linuxPlatform) marker(pid int, kv string) bool  { return procMarker(pid, kv) }
func (linuxPlatform) fileNames([]*os.File) []string   { return nil }
func (linuxPlatform) holds(int, []string) bool        { return false }

// onlyChildren reads the main thread's children file. A thread's children
// file lists the children it forked, and Linux re-parents an orphan to the
// first living thread of its reaper: the main thread, which Go never ends.
// Only rukh's starts fork, and each of those children is a leader,
// registered (under startMu) before anyone looks; so every child that is
// not a leader, the only kind that can mean an escape, is in the main
// thread's file, and that one file is read, not one per thread.
func (linuxPlatform) onlyChildren(self int, ok func(int) bool) bool {
	var buf [512]byte
	b, err := readProcFile(buf[:0], "/proc/"+strconv.Itoa(self)+"/task/"+strconv.Itoa(self)+"/children")
	if err != nil {
		return false // no children files in this kernel: scan
	}
	for _, f := range bytes.Fields(b) {
		pid, _ := strconv.Atoi(string(f))
		if !ok(pid) {
			return false
		}
	}
	return true
}

// noGuard is the watchdog of a platform with a parent-death signal.
type noGuard struct{}

func (noGuard) watchdog()   {}
func (noGuard) guard(int)   {}
func (noGuard) unguard(int) {}
