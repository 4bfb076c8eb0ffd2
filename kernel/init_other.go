//go:build unix && (rukh_portable || !linux)

package kernel

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"
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
type slotCall struct {
	held  closers
	files []*os.File
}

var slotsAlways bool

const (
	slotFailed = iota
	slotEnded
)

func warmSlots(func(string, ...any))                               {}
func startInSlot(*exec.Cmd, closers, []*os.File) (*slotCall, bool) { return nil, false }
func freeSlotNamespaces(error) bool                                { return false }
func (*slotCall) wait() error                                      { return nil }
func (*slotCall) done() bool                                       { return true }
func (*slotCall) endFD() int                                       { return -1 }
func (*slotCall) finish(string) initEnd                            { return initEnd{} }
func (*slotCall) isStarted() bool                                  { return true }
func (*slotCall) startDue() time.Time                              { return time.Time{} }
func (*slotCall) first(bool, func()) int                           { return slotEnded }
func (*slotCall) awaitStart() int                                  { return slotEnded }
func (*slotCall) signal(syscall.Signal)                            {}
func (*slotCall) end()                                             {}
func failedSlotCall(string) *slotCall                              { return &slotCall{} }
