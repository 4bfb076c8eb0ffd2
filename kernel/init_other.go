//go:build unix && (rukh_portable || !linux)

package kernel

import (
	"os/exec"
	"runtime"
	"syscall"
)

func namespaced() (bool, string) {
	if runtime.GOOS == "linux" {
		return false, "a rukh_portable build uses no namespaces"
	}
	return false, "PID namespaces are Linux's, and this host runs " + runtime.GOOS
}

func containmentInitPath() (string, error) { return "", nil }

func containAttr(*syscall.SysProcAttr, bool, bool, bool) {}

func mountNamespace() uint64 { return 0 }

func namespaceRefused(error) bool { return false }

// Slots need PID namespaces and the machine-code init.
type slotCall struct{ pid int }

var slotsAlways bool

func warmSlots()                              {}
func startInSlot(*exec.Cmd) (*slotCall, bool) { return nil, false }
func (*slotCall) wait() error                 { return nil }
func (*slotCall) done() bool                  { return true }
func (*slotCall) endFD() int                  { return -1 }
func (*slotCall) finish(string) initEnd       { return initEnd{} }
