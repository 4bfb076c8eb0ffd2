//go:build unix

package kernel

import (
	"os"
	"syscall"
)

// platform is the seam below the process layer's policy (procs.go): the
// few primitives an operating system supplies. plat is chosen at build
// time by the platform_*.go files.
type platform interface {
	// setup runs once per process before the first start.
	setup()
	// subreaper reports whether orphans of rukh's descendants are
	// re-parented to rukh (and its leaders get a parent-death signal).
	subreaper() bool
	// procAttr completes the attributes every program starts with.
	procAttr(a *syscall.SysProcAttr)
	// snapshot lists every process; lookup reads one (false: gone).
	snapshot() procTable
	lookup(pid int) (procInfo, bool)
	// waitExited blocks until child pid exited, without reaping it, so its
	// pid and group id are not reused before the group is killed.
	waitExited(pid int) error
	// onlyChildren reports whether every child of self satisfies ok; false
	// when the platform cannot tell cheaply.
	onlyChildren(self int, ok func(pid int) bool) bool
	// marker reports whether pid's environment holds the entry kv; false
	// where environments cannot be read.
	marker(pid int, kv string) bool
	// fileNames names the descriptors rukh gives a child, and holds reports
	// whether pid holds one of them; nil and false where descriptors of
	// other processes cannot be read.
	fileNames(files []*os.File) []string
	holds(pid int, names []string) bool
	// watchdog, guard and unguard stand in for a parent-death signal:
	// leaders guarded when rukh dies are killed (no-ops with a subreaper).
	watchdog()
	guard(leader int)
	unguard(leader int)
}
