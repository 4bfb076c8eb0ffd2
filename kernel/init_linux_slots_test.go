//go:build linux && !rukh_portable

package kernel

// slotInits are the pids of the slots' inits, idle or serving.
func slotInits() map[int]bool {
	procs.mu.Lock()
	defer procs.mu.Unlock()
	m := map[int]bool{}
	for pid, t := range procs.live {
		if t.id == "" {
			m[pid] = true
		}
	}
	return m
}
