//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// loadNow is the host's 1-minute load average (0 when it cannot be read).
func loadNow() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _, _ := strings.Cut(string(b), " ")
	v, _ := strconv.ParseFloat(f, 64)
	return v
}

// loadSpan says the load before and after a measurement.
func loadSpan(before, after float64) string {
	a, b := fmt.Sprintf("%.1f", before), fmt.Sprintf("%.1f", after)
	if a == b {
		return a
	}
	return a + "→" + b
}

// stamp gives every measured row of rows that has no load yet the load
// from before to now.
func stamp(rows []row, before float64) []row {
	l := loadSpan(before, loadNow())
	for i := range rows {
		if rows[i].load == "" && rows[i].n > 0 {
			rows[i].load = l
		}
	}
	return rows
}

// setLoad gives every measured row of rows load l.
func setLoad(rows []row, l string) []row {
	for i := range rows {
		if rows[i].n > 0 {
			rows[i].load = l
		}
	}
	return rows
}

// busyLoops are CPU-bound shell loops, each in its own session as a loaded
// host's other work is (so each is its own scheduler group where the kernel
// groups by session).
type busyLoops []*exec.Cmd

// startBusy starts n loops and waits until the 1-minute load has risen by
// half of n and is at least n, or ramp has passed, so the rows measured
// next are measured on a loaded host and say so.
func startBusy(n int, ramp time.Duration) (busyLoops, error) {
	goal := max(float64(n), loadNow()+float64(n)/2)
	var b busyLoops
	for range n {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		// Pdeathsig: no loop outlives a rukhbench that is killed.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			b.stop()
			return nil, fmt.Errorf("busy loop: %w", err)
		}
		b = append(b, cmd)
	}
	t := time.Now()
	for time.Since(t) < ramp && loadNow() < goal {
		time.Sleep(time.Second)
	}
	logf("busy host: %d loops, load %.1f after %s", n, loadNow(), time.Since(t).Round(time.Second))
	return b, nil
}

// stop kills the loops (each leads its own process group) and reaps them.
func (b busyLoops) stop() {
	for _, cmd := range b {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}
}
