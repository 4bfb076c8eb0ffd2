//go:build unix && (rukh_portable || !linux)

package kernel

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// prepared is empty where there is no machine-code confining init.
type prepared struct {
	steps []byte
	warm  bool
}

func machineConfines(*Confine) bool { return false }

func confiningInitPath() (string, error) { return "", nil }

func prepare(InitSpec, bool) (*prepared, error) { return nil, nil }

func warmConfines() bool { return false }

func warmReady(*Confine) bool { return false }

func startWarm(*underInit, *exec.Cmd) (*tracked, *exec.Cmd, error) {
	return nil, nil, errors.ErrUnsupported
}

func (*prepared) failed(uint32) string { return "" }

func (*prepared) startAttr(*syscall.SysProcAttr) {}

func (*prepared) files(*os.File) []*os.File { return nil }

func (*prepared) startedEnds() []*os.File { return nil }

func (*prepared) close() {}
