//go:build !race

package kernel

const raceSlowdown = 1
