//go:build (linux && rukh_portable) || darwin || freebsd

package kernel

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// The generic path: no subreaper, no parent-death signal, no pidfd. This
// is the path of macOS and FreeBSD, and of a Linux build with the
// rukh_portable tag, which tests it.
var plat platform = genericPlatform{}

type genericPlatform struct{}

func (genericPlatform) setup()                                {}
func (genericPlatform) subreaper() bool                       { return false }
func (genericPlatform) procAttr(*syscall.SysProcAttr)         {}
func (genericPlatform) snapshot() procTable                   { return osSnapshot() }
func (genericPlatform) lookup(pid int) (procInfo, bool)       { return osLookup(pid) }
func (genericPlatform) waitExited(pid int) error              { return osWaitExited(pid) }
func (genericPlatform) onlyChildren(int, func(int) bool) bool { return false }
func (genericPlatform) marker(pid int, kv string) bool        { return osMarker(pid, kv) }
func (genericPlatform) fileNames(f []*os.File) []string       { return osFileNames(f) }
func (genericPlatform) holds(pid int, names []string) bool    { return osHolds(pid, names) }

// The watchdog stands in for the parent-death signal: one small shell per
// rukh process (not per call), in a process group of its own, that reads
// "+ LEADER" and "- LEADER" lines and, when rukh is gone (its input ends),
// sends SIGKILL to the process group of every leader still listed.
const watchdogScript = `trap '' HUP INT TERM QUIT PIPE
g=' '
while read -r op p; do
  case $op in
  +) g="$g$p " ;;
  -) case $g in *" $p "*) g="${g%% $p *} ${g#* $p }" ;; esac ;;
  esac
done
for p in $g; do kill -s KILL -- "-$p" 2>/dev/null; done
`

var watchdog struct {
	once sync.Once
	mu   sync.Mutex
	w    *os.File // nil: no watchdog could be started
}

func (genericPlatform) watchdog() {
	watchdog.once.Do(func() {
		r, w, err := os.Pipe()
		if err != nil {
			return
		}
		cmd := &exec.Cmd{
			Path:        "/bin/sh",
			Args:        []string{"sh", "-c", watchdogScript},
			Env:         []string{"PATH=/usr/bin:/bin"},
			Stdin:       r,
			SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
		}
		if err := cmd.Start(); err != nil {
			r.Close()
			w.Close()
			return
		}
		r.Close()
		go cmd.Wait() // reaped if it ever ends
		watchdog.w = w
	})
}

func watchdogSay(op string, leader int) {
	watchdog.mu.Lock()
	defer watchdog.mu.Unlock()
	if watchdog.w != nil {
		fmt.Fprintf(watchdog.w, "%s %d\n", op, leader)
	}
}

func (genericPlatform) guard(leader int)   { watchdogSay("+", leader) }
func (genericPlatform) unguard(leader int) { watchdogSay("-", leader) }
