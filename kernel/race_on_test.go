//go:build race

package kernel

// raceSlowdown scales timing bounds: the race detector makes code 5–20×
// slower, so a bound set for the real build would measure the detector.
const raceSlowdown = 20
