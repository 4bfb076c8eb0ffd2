//go:build linux && rukh_portable

package kernel

import "os"

// A rukh_portable Linux build reads the same /proc, without the
// primitives macOS lacks.
func osSnapshot() procTable                { return procSnapshot() }
func osLookup(pid int) (procInfo, bool)    { return procLookup(pid) }
func osWaitExited(pid int) error           { return procWaitExited(pid) }
func osMarker(pid int, kv string) bool     { return procMarker(pid, kv) }
func osFileNames(f []*os.File) []string    { return procFileNames(f) }
func osHolds(pid int, names []string) bool { return procHolds(pid, names) }
