package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// directExec runs prog the way the kernel runs a managed command, minus
// Rukh: a socket pair on fd 3, its own process group, the minimal
// environment, stdin/stdout/stderr on /dev/null; it writes the invoke line,
// reads the report line and waits for the exit. This is the "exec a trivial
// static program directly" baseline of SPEC §9 with the same tiny channel
// exchange the program needs to do its job.
func directExec(prog, command string) (time.Duration, error) {
	t := time.Now()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	parent := os.NewFile(uintptr(fds[0]), "channel")
	child := os.NewFile(uintptr(fds[1]), "channel-child")
	defer parent.Close()
	const id = "inv_benchbenchbenchbenchbenc"
	cmd := &exec.Cmd{
		Path:        prog,
		Args:        []string{prog},
		Env:         []string{"RUKH_PROTOCOL=rukh.invoke/1", "RUKH_CHANNEL_FD=3", "RUKH_INVOCATION_ID=" + id, "PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LANG=C.UTF-8"},
		ExtraFiles:  []*os.File{child},
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if err := cmd.Start(); err != nil {
		child.Close()
		return 0, err
	}
	child.Close()
	invoke := `{"type":"invoke","invocationId":"` + id + `","command":"` + command + `","input":{},"explicit":[],"interactive":false,"deadlineMs":30000}` + "\n"
	if _, err := parent.Write([]byte(invoke)); err != nil {
		cmd.Wait()
		return 0, err
	}
	report, err := bufio.NewReader(parent).ReadBytes('\n')
	if err != nil || !bytes.Contains(report, []byte(`"outcome":"succeeded"`)) {
		cmd.Wait()
		return 0, fmt.Errorf("direct exec of %s: report %q: %v", prog, report, err)
	}
	if err := cmd.Wait(); err != nil {
		return 0, fmt.Errorf("direct exec of %s: %v", prog, err)
	}
	return time.Since(t), nil
}

// plainExec is fork/exec/wait of prog with no channel (it exits at once).
func plainExec(prog string) (time.Duration, error) {
	t := time.Now()
	cmd := &exec.Cmd{Path: prog, Args: []string{prog}, Env: []string{}}
	if err := cmd.Run(); err != nil {
		return 0, err
	}
	return time.Since(t), nil
}

// benchCall: target 1. Direct execs and tools/call round trips alternate in
// one loop so that both see the same machine state.
func benchCall(c config, h *smallHome) ([]row, []string, error) {
	s, err := h.start()
	if err != nil {
		return nil, nil, err
	}
	defer s.close()
	name, err := s.toolNamed("trivial_ping__")
	if err != nil {
		return nil, nil, err
	}
	sdkName := ""
	if h.sdk {
		if sdkName, err = s.toolNamed("trivial_sdk__"); err != nil {
			return nil, nil, err
		}
	}
	var direct, plain, call, sdkDirect, sdkCall, cli []time.Duration
	for i := range c.warm + c.calls {
		d1, err := directExec(c.trivial, "trivial.ping")
		if err != nil {
			return nil, nil, err
		}
		line, d2, err := s.roundTrip(s.call(name, "{}"))
		if err != nil {
			return nil, nil, err
		}
		if err := checkCall(line); err != nil {
			return nil, nil, err
		}
		d3, err := plainExec(c.trivial)
		if err != nil {
			return nil, nil, err
		}
		var d4, d5 time.Duration
		if h.sdk {
			if d4, err = directExec(c.trivialSDK, "trivial.sdk"); err != nil {
				return nil, nil, err
			}
			line, d5, err = s.roundTrip(s.call(sdkName, "{}"))
			if err != nil {
				return nil, nil, err
			}
			if err := checkCall(line); err != nil {
				return nil, nil, err
			}
		}
		if i < c.warm {
			continue
		}
		direct, call, plain = append(direct, d1), append(call, d2), append(plain, d3)
		if h.sdk {
			sdkDirect, sdkCall = append(sdkDirect, d4), append(sdkCall, d5)
		}
	}
	// The same command through the CLI route (a whole rukh process per call).
	for i := range 5 + c.calls/4 {
		t := time.Now()
		if _, err := h.rukh("trivial", "ping"); err != nil {
			return nil, nil, err
		}
		if i >= 5 {
			cli = append(cli, time.Since(t))
		}
	}
	ds, cs := newStats(direct), newStats(call)
	ratio := float64(cs.median()) / float64(ds.median())
	rows := []row{
		timeRow("1. tools/call trivial (warm serve-mcp)", cs, 0),
		timeRow("   direct exec + fd-3 invoke/report", ds, 0),
		timeRow("   plain fork/exec/wait (no channel)", newStats(plain), 0),
	}
	rows[0].target = "≤ 1.2× direct"
	rows[0].ratio = fmt.Sprintf("%.2f×", ratio)
	rows[0].verdict = verdict(ratio <= 1.2)
	notes := []string{fmt.Sprintf("tools/call overhead over the direct exec: %s per call (median difference); p90 ratio %.2f×",
		ms(cs.median()-ds.median()), float64(cs.p90())/float64(ds.p90()))}
	if h.sdk {
		sd, sc := newStats(sdkDirect), newStats(sdkCall)
		r := timeRow("   tools/call, SDK extension", sc, 0)
		r.ratio = fmt.Sprintf("%.2f×", float64(sc.median())/float64(sd.median()))
		rows = append(rows, r, timeRow("   direct exec, SDK extension", sd, 0))
	}
	rows = append(rows, timeRow("   CLI `rukh trivial ping` (whole process)", newStats(cli), 0))
	return rows, notes, nil
}

// benchPublish: target 4, then a second, no-change publish for context.
func benchPublish(c config, h *largeHome) ([]row, []string, error) {
	t := time.Now()
	if _, err := h.rukh("publish", "--dry-run"); err != nil {
		return nil, nil, err
	}
	dry := time.Since(t)
	t = time.Now()
	if _, err := h.rukh("publish"); err != nil {
		return nil, nil, err
	}
	pub := time.Since(t)
	fi, err := os.Stat(h.dir + "/rukh.db")
	size := "?"
	if err == nil {
		size = fmt.Sprintf("%.1f MiB", float64(fi.Size())/(1<<20))
	}
	rows := []row{
		timeRow(fmt.Sprintf("4. rukh publish (%d pkgs / %d cmds)", c.packages, c.packages*c.commands), stats{pub}, 2*time.Second),
		timeRow("   rukh publish --dry-run (same draft)", stats{dry}, 0),
	}
	return rows, []string{"store file after publish: " + size}, nil
}

// benchList: target 2 and target 5 on one warm serve-mcp of the large home.
func benchList(c config, h *largeHome) (list, mem []row, notes []string, err error) {
	s, err := h.start()
	if err != nil {
		return nil, nil, nil, err
	}
	defer s.close()
	var first []time.Duration
	var pageBytes int
	for i := range c.warm + c.lists {
		line, d, err := s.roundTrip(s.list(""))
		if err != nil {
			return nil, nil, nil, err
		}
		if i == 0 {
			r, err := decode(line)
			if err != nil {
				return nil, nil, nil, err
			}
			if len(r.Result.Tools) == 0 || r.Result.NextCursor == "" {
				return nil, nil, nil, fmt.Errorf("first page has %d tools and no cursor", len(r.Result.Tools))
			}
			pageBytes = len(line)
		}
		if i >= c.warm {
			first = append(first, d)
		}
	}
	// A full listing: every page, following cursors.
	t := time.Now()
	var pages []time.Duration
	tools, cursor := 0, ""
	callName := ""
	for {
		line, d, err := s.roundTrip(s.list(cursor))
		if err != nil {
			return nil, nil, nil, err
		}
		r, err := decode(line)
		if err != nil {
			return nil, nil, nil, err
		}
		pages = append(pages, d)
		tools += len(r.Result.Tools)
		for _, tl := range r.Result.Tools {
			if callName == "" && len(tl.Name) > 10 && tl.Name[:10] == "p0000_c00_" {
				callName = tl.Name
			}
		}
		if r.Result.NextCursor == "" {
			break
		}
		cursor = r.Result.NextCursor
	}
	full := time.Since(t)
	if tools != c.packages*c.commands {
		return nil, nil, nil, fmt.Errorf("full listing has %d tools, want %d", tools, c.packages*c.commands)
	}
	if callName == "" {
		return nil, nil, nil, fmt.Errorf("no p0000_c00 tool listed")
	}
	var calls []time.Duration
	for range 10 {
		line, d, err := s.roundTrip(s.call(callName, `{"title":"x","tags":["a","b"]}`))
		if err != nil {
			return nil, nil, nil, err
		}
		if err := checkCall(line); err != nil {
			return nil, nil, nil, err
		}
		calls = append(calls, d)
	}
	// Discover on the warm server, for context.
	var disc []time.Duration
	for range 100 {
		_, d, err := s.roundTrip(s.discover())
		if err != nil {
			return nil, nil, nil, err
		}
		disc = append(disc, d)
	}
	pid := s.cmd.Process.Pid
	hwm, err := procStatus(pid, "VmHWM")
	if err != nil {
		return nil, nil, nil, err
	}
	rss, _ := procStatus(pid, "VmRSS")
	anon, _ := procStatus(pid, "RssAnon")
	file, _ := procStatus(pid, "RssFile")

	const limit = 40 << 20
	peak := int64(hwm) << 10
	memRow := row{name: fmt.Sprintf("5. serve-mcp peak RSS (VmHWM), %d tools", tools), n: 1,
		median: fmt.Sprintf("%.1f MiB", float64(peak)/(1<<20)), target: "≤ 40 MiB",
		ratio: fmt.Sprintf("%.2f×", float64(peak)/limit), verdict: verdict(peak <= limit)}
	list = []row{
		timeRow(fmt.Sprintf("2. tools/list first page, %d tools", tools), newStats(first), 350*time.Microsecond),
		timeRow("   tools/list any page (full listing)", newStats(pages), 0),
		timeRow("   server/discover (warm)", newStats(disc), 0),
		timeRow(fmt.Sprintf("   tools/call trivial, %d-tool revision", tools), newStats(calls), 0),
	}
	notes = []string{
		fmt.Sprintf("first page: %d bytes; full listing of %d tools: %d pages in %s", pageBytes, tools, len(pages), ms(full)),
		fmt.Sprintf("serve-mcp after %d first-page lists, a full listing, 10 calls and 100 discovers: VmHWM %d kB, VmRSS %d kB (RssAnon %d kB, RssFile %d kB)", c.warm+c.lists, hwm, rss, anon, file),
	}
	return list, []row{memRow}, notes, nil
}

// coldStart spawns serve-mcp, writes server/discover at once and times the
// response line from just before the spawn.
func coldStart(h *home) (time.Duration, error) {
	t := time.Now()
	s, err := h.start()
	if err != nil {
		return 0, err
	}
	line, _, err := s.roundTrip(s.discover())
	d := time.Since(t)
	if err != nil {
		s.close()
		return 0, err
	}
	if _, err := decode(line); err != nil {
		s.close()
		return 0, err
	}
	return d, s.close()
}

// benchCold: target 3 against the large home (the target row) and the
// small one, interleaved.
func benchCold(c config, large *largeHome, small *smallHome) ([]row, []string, error) {
	var l, sm []time.Duration
	for i := range 3 + c.cold {
		d1, err := coldStart(large.home)
		if err != nil {
			return nil, nil, err
		}
		d2, err := coldStart(small.home)
		if err != nil {
			return nil, nil, err
		}
		if i >= 3 {
			l, sm = append(l, d1), append(sm, d2)
		}
	}
	rows := []row{
		timeRow(fmt.Sprintf("3. serve-mcp cold start → discover, %d tools", c.packages*c.commands), newStats(l), 15*time.Millisecond),
		timeRow("   same, 1-tool home", newStats(sm), 15*time.Millisecond),
	}
	return rows, nil, nil
}
