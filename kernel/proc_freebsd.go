package kernel

// FreeBSD's process table is sysctl kern.proc.

func osSnapshot() procTable {
	b, err := sysctlRaw("kern.proc.proc")
	if err != nil {
		return nil
	}
	t, _ := parseFreeBSDKinfo(b)
	return t
}

func osLookup(pid int) (procInfo, bool) {
	b, err := sysctlRaw("kern.proc.pid", pid)
	if err != nil {
		return procInfo{}, false
	}
	t, _ := parseFreeBSDKinfo(b)
	pi, ok := t[pid]
	return pi, ok
}

func osMarker(pid int, kv string) bool {
	b, err := sysctlRaw("kern.proc.env", pid)
	return err == nil && envHas(b, kv)
}
