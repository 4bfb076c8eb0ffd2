//go:build unix && !linux

package kernel

import "runtime"

func probeLandlock() (int, string) {
	return 0, "Landlock is Linux's, and this host runs " + runtime.GOOS
}

func probeNamespaces() string {
	return "PID namespaces are Linux's, and this host runs " + runtime.GOOS
}
