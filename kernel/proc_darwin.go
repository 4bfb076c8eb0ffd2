package kernel

import "golang.org/x/sys/unix"

// macOS's process table is sysctl kern.proc; its records carry no session
// id, so getsid fills it in.

func osSnapshot() procTable {
	b, err := sysctlRaw("kern.proc.all")
	if err != nil {
		return nil
	}
	t, _ := parseDarwinKinfo(b)
	for pid, pi := range t {
		pi.sid, _ = unix.Getsid(pid)
		t[pid] = pi
	}
	return t
}

func osLookup(pid int) (procInfo, bool) {
	b, err := sysctlRaw("kern.proc.pid", pid)
	if err != nil {
		return procInfo{}, false
	}
	t, _ := parseDarwinKinfo(b)
	pi, ok := t[pid]
	if ok {
		pi.sid, _ = unix.Getsid(pid)
	}
	return pi, ok
}

func osMarker(pid int, kv string) bool {
	b, err := sysctlRaw("kern.procargs2", pid)
	return err == nil && envHas(procargs2Env(b), kv)
}
