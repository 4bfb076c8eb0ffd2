//go:build unix && (rukh_portable || !linux)

package kernel

import (
	"os"
	"syscall"
)

// prepared is empty where there is no machine-code confining init.
type prepared struct {
	steps []byte
}

func machineConfines(*Confine) bool { return false }

func confiningInitPath() (string, error) { return "", nil }

func prepare(InitSpec) (*prepared, error) { return nil, nil }

func (*prepared) failed(uint32) string { return "" }

func (*prepared) startAttr(*syscall.SysProcAttr) {}

func (*prepared) files(*os.File) []*os.File { return nil }

func (*prepared) startedEnds() []*os.File { return nil }

func (*prepared) close() {}
