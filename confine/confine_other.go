//go:build !linux || rukh_portable

package confine

import (
	"os"
	"runtime"

	"github.com/rukh-dev/rukh/kernel"
)

// Main reports a setup failure: confinement is Linux's, and the kernel
// never starts the confining init elsewhere.
func Main() int {
	msg := "rukh's confining init needs Linux, and this host runs " + runtime.GOOS
	if runtime.GOOS == "linux" {
		msg = "a rukh_portable build has no confining init"
	}
	b := kernel.AppendRecord(nil, kernel.ReportSetup, uint32(len(msg)))
	f := os.NewFile(kernel.InitReportFD, "report")
	if f != nil {
		_, _ = f.Write(append(b, msg...))
	}
	return 126
}
