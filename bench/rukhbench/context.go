package main

import (
	"fmt"
	"strings"
	"time"
)

// benchContext times things the targets do not name but that explain them
// or that a person meets with 10,000 published tools: the first tools/list
// of a fresh serve-mcp (the revision cache miss) and its memory, the CLI
// route, and activation by name.
func benchContext(c config, l *largeHome) ([]row, []string, error) {
	var first []time.Duration
	var hwm []int64
	for range 5 {
		s, err := l.start()
		if err != nil {
			return nil, nil, err
		}
		if _, _, err := s.roundTrip(s.discover()); err != nil {
			s.close()
			return nil, nil, err
		}
		line, d, err := s.roundTrip(s.list(""))
		if err == nil {
			_, err = decode(line)
		}
		var kb int64
		if err == nil {
			kb, err = procStatus(s.cmd.Process.Pid, "VmHWM")
		}
		s.close()
		if err != nil {
			return nil, nil, err
		}
		first, hwm = append(first, d), append(hwm, kb)
	}
	timed := func(n int, args ...string) ([]time.Duration, error) {
		var ds []time.Duration
		for range n {
			t := time.Now()
			if _, err := l.rukh(args...); err != nil {
				return nil, err
			}
			ds = append(ds, time.Since(t))
		}
		return ds, nil
	}
	cli, err := timed(5, "p0000", "c00", "--title", "x")
	if err != nil {
		return nil, nil, err
	}
	ver, err := timed(5, "--version")
	if err != nil {
		return nil, nil, err
	}
	mid := l.names[len(l.names)/2]
	byName, err := timed(3, "activate", mid)
	if err != nil {
		return nil, nil, err
	}
	byVersion, err := timed(3, "activate", mid+"@1.0.0")
	if err != nil {
		return nil, nil, err
	}
	// Publishes while one serve-mcp keeps serving: each new revision is
	// loaded on the next list and the old ones stay cached (up to 4).
	s, err := l.start()
	if err != nil {
		return nil, nil, err
	}
	var afterPub []string
	for k := range 4 {
		if k > 0 {
			if err := l.setPolicyNS(fmt.Sprintf("bench-%d", k), l.names); err != nil {
				s.close()
				return nil, nil, err
			}
			if _, err := l.rukh("publish"); err != nil {
				s.close()
				return nil, nil, err
			}
		}
		line, _, err := s.roundTrip(s.list(""))
		if err == nil {
			_, err = decode(line)
		}
		var hwmKB, rssKB int64
		if err == nil {
			hwmKB, err = procStatus(s.cmd.Process.Pid, "VmHWM")
		}
		if err == nil {
			rssKB, err = procStatus(s.cmd.Process.Pid, "VmRSS")
		}
		if err != nil {
			s.close()
			return nil, nil, err
		}
		afterPub = append(afterPub, fmt.Sprintf("%d: VmHWM %.0f MiB, VmRSS %.0f MiB", k, float64(hwmKB)/1024, float64(rssKB)/1024))
	}
	if err := s.close(); err != nil {
		return nil, nil, err
	}

	tools := c.packages * c.commands
	rows := []row{
		{name: fmt.Sprintf("context, %d published tools:", tools)},
		timeRow("   first tools/list of a fresh serve-mcp", newStats(first), 0),
		timeRow("   CLI `rukh p0000 c00` (whole process)", newStats(cli), 0),
		timeRow("   CLI `rukh --version`", newStats(ver), 0),
		timeRow(fmt.Sprintf("   `rukh activate NAME`, %d releases", c.packages), newStats(byName), 0),
		timeRow("   `rukh activate NAME@VERSION`", newStats(byVersion), 0),
	}
	notes := []string{fmt.Sprintf("a fresh serve-mcp after discover and ONE tools/list: VmHWM %d kB (median of 5), to compare with the peak after the whole workload above",
		newStats64(hwm)),
		"one serve-mcp listing after each of N further publishes (policy-only, new tool names) — " + strings.Join(afterPub, "; "),
	}
	return rows, notes, nil
}

func newStats64(v []int64) int64 {
	d := make([]time.Duration, len(v))
	for i, x := range v {
		d[i] = time.Duration(x)
	}
	return int64(newStats(d).median())
}
