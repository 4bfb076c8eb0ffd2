//go:build linux && !amd64 && !rukh_portable

package kernel

// confiningInit is empty where rukh has no machine-code confining init:
// confined calls run under rukh itself (package confine).
const confiningInit = ""
