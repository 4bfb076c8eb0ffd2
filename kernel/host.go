package kernel

import (
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
)

// How nothing an invocation started outlives it (Host.Containment).
const (
	// ContainNamespace: each invocation runs in its own PID namespace
	// under rukh's init; the kernel kills what is left when it ends, even
	// after a SIGKILL of rukh.
	ContainNamespace = "pid-namespace"
	// ContainSweep: rukh kills what is left when an invocation ends and
	// records its processes, so that the next rukh process on the home
	// kills what survived a SIGKILL of this one.
	ContainSweep = "recorded-sweep"
)

// WithoutEnv names host features rukh must behave as if it lacked
// (comma-separated: "namespaces", "landlock"): for testing the paths of
// hosts without them, and for hosts whose owners do not want them used.
const WithoutEnv = "RUKH_WITHOUT"

// Host is what this host provides for containment and confinement.
type Host struct {
	Containment string // ContainNamespace or ContainSweep
	// NoNamespaces says why there are no PID namespaces ("" when there are).
	NoNamespaces string
	Landlock     int    // the Landlock ABI version; 0 when there is none
	NoLandlock   string // why there is no Landlock ("" when there is)
	// NoSelfInit says why this executable cannot be the confining init
	// ("" when it can; see SelfInit).
	NoSelfInit string
	// NoPidsCgroup says why rukh, running as root, has no pids cgroup to
	// enforce a processes limit with ("" when it has, or is not root).
	NoPidsCgroup string
}

var selfInit atomic.Bool

// SelfInit tells the kernel that this executable runs as the confining
// init when started with argv[0] InitArgv0 (main dispatches it). Without
// it every confined template is unavailable.
func SelfInit() { selfInit.Store(true) }

var host struct {
	once sync.Once
	h    Host
}

// ProbeHost reports what this host provides; it is computed once per
// process.
func ProbeHost() Host {
	host.once.Do(func() { host.h = probeHost(without()) })
	return host.h
}

func without() map[string]bool {
	w := map[string]bool{}
	for _, f := range strings.Split(os.Getenv(WithoutEnv), ",") {
		if f = strings.TrimSpace(f); f != "" {
			w[f] = true
		}
	}
	return w
}

func probeHost(without map[string]bool) Host {
	h := Host{Containment: ContainSweep}
	switch {
	case without["namespaces"]:
		h.NoNamespaces = WithoutEnv + " lists namespaces"
	default:
		h.NoNamespaces = probeNamespaces()
	}
	if h.NoNamespaces == "" {
		h.Containment = ContainNamespace
	}
	switch {
	case without["landlock"]:
		h.NoLandlock = WithoutEnv + " lists landlock"
	default:
		h.Landlock, h.NoLandlock = probeLandlock()
	}
	h.NoPidsCgroup = noPidsCgroup()
	if !selfInit.Load() {
		h.NoSelfInit = "this program does not run as rukh's init"
	}
	return h
}

// Unavailable says why this host cannot enforce c, naming what it lacks;
// "" when it can (always, for an unconfined template).
func (h Host) Unavailable(c *Confine) string {
	switch {
	case c == nil:
		return ""
	case runtime.GOOS != "linux":
		return "confinement needs Linux (Landlock and namespaces), and this host runs " + runtime.GOOS
	case h.NoLandlock != "":
		return "confinement needs Landlock: " + h.NoLandlock
	case h.NoNamespaces != "":
		return "confinement needs PID, mount and network namespaces: " + h.NoNamespaces
	case h.NoSelfInit != "":
		return "confinement needs rukh's init: " + h.NoSelfInit
	case c.Processes > 0 && h.NoPidsCgroup != "":
		return "a processes limit needs, for rukh running as root, a pids cgroup: " + h.NoPidsCgroup
	}
	return ""
}
