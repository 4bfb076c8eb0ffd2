//go:build unix && (rukh_portable || !linux)

package kernel

func slotInits() map[int]bool { return nil }
