//go:build unix && (rukh_portable || !linux)

package kernel

import (
	"errors"
	"os"
)

type pidsCgroup struct{ procs *os.File }

func newPidsCgroup(string, int) (*pidsCgroup, error) {
	return nil, errors.New("pids cgroups are Linux's")
}

func (*pidsCgroup) hitMax() bool { return false }
func (*pidsCgroup) remove()      {}
func noPidsCgroup() string       { return "" }

func sweepCgroups() ([]string, []string) { return nil, nil }
