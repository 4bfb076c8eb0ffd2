//go:build linux && !amd64 && !rukh_portable

package kernel

// containmentInit is empty where rukh has no machine-code init: rukh
// itself serves as the containment init when it can (SelfInit).
const containmentInit = ""
