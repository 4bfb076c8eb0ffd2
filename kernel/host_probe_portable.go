//go:build linux && rukh_portable

package kernel

func probeNamespaces() string { return "a rukh_portable build uses no namespaces" }
