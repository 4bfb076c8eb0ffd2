package kernel

import (
	"os"
	"runtime"
	"testing"
)

func TestProbeHostWithout(t *testing.T) {
	h := probeHost(map[string]bool{"namespaces": true, "landlock": true})
	if h.Containment != ContainSweep || h.NoNamespaces == "" || h.NoLandlock == "" || h.Landlock != 0 {
		t.Fatalf("probe without namespaces and landlock = %+v", h)
	}
	if why := h.Unavailable(&Confine{Network: NetworkNone}); why == "" {
		t.Fatal("a confined template is available on a host without namespaces")
	}
	if why := h.Unavailable(nil); why != "" {
		t.Fatalf("an unconfined template is unavailable: %s", why)
	}
}

// On a Linux host that has them (this one does when RUKH_EXPECT_NAMESPACES
// is set, as the test script sets it on its CI hosts), the probe finds
// namespaces and Landlock.
func TestProbeHostFinds(t *testing.T) {
	h := probeHost(nil)
	t.Logf("host: %+v", h)
	if runtime.GOOS != "linux" || os.Getenv("RUKH_EXPECT_NAMESPACES") == "" {
		if h.Containment == ContainNamespace && runtime.GOOS != "linux" {
			t.Fatalf("namespaces on %s", runtime.GOOS)
		}
		return
	}
	if h.Containment != ContainNamespace || h.Landlock == 0 {
		t.Fatalf("probe on a host with namespaces and Landlock = %+v", h)
	}
}
