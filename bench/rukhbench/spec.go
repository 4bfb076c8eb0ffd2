//go:build linux

package main

import (
	"fmt"
	"github.com/rukh-dev/rukh/store"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// size is one published catalogue: packages × commands.
type size struct{ packages, commands int }

func (z size) tools() int { return z.packages * z.commands }

func parseSizes(s string) ([]size, error) {
	var out []size
	for _, f := range strings.Split(s, ",") {
		p, c, ok := strings.Cut(strings.TrimSpace(f), "x")
		np, err1 := strconv.Atoi(p)
		nc, err2 := strconv.Atoi(c)
		if !ok || err1 != nil || err2 != nil || np < 1 || nc < 1 || nc > 100 {
			return nil, fmt.Errorf("size %q: want PACKAGESxCOMMANDS (commands ≤ 100)", f)
		}
		out = append(out, size{np, nc})
	}
	return out, nil
}

// baseline is what the 1-command home measured, that the larger ones are
// compared with.
type baseline struct {
	cli    stats // `rukh trivial ping`
	list   stats // warm tools/list of a 1-tool revision
	direct stats
}

func ratioRow(name string, s stats, base time.Duration, limit float64, target string) row {
	r := timeRow(name, s, 0)
	q := float64(s.median()) / float64(base)
	r.target, r.ratio, r.verdict = target, fmt.Sprintf("%.2f×", q), verdict(q <= limit)
	return r
}

// addedRow is a row for a sample measured by what it adds to base's
// median: the target is at most limit more.
func addedRow(name string, s stats, base, limit time.Duration) row {
	r := timeRow(name, s, 0)
	added := s.median() - base
	r.target = "≤ " + ms(limit) + " added"
	r.ratio = ms(added)
	if added >= 0 {
		r.ratio = "+" + r.ratio
	}
	r.verdict = verdict(added <= limit)
	return r
}

// benchSmall: the 1-command home, with the peers side by side. Direct
// execs, rukh's tools/call and each peer's tools/call alternate in one loop
// so that all see the same machine state.
func benchSmall(c config, h, confined *smallHome, peers []peer) ([]row, []string, baseline, error) {
	var b baseline
	s, err := h.start()
	if err != nil {
		return nil, nil, b, err
	}
	defer s.close()
	name, err := s.toolNamed("trivial_ping__")
	if err != nil {
		return nil, nil, b, err
	}
	// The same server without namespaces (the recorded sweep contains its
	// calls), to show what containment in a PID namespace costs.
	sw, err := h.startEnv("RUKH_WITHOUT=namespaces")
	if err != nil {
		return nil, nil, b, err
	}
	defer sw.close()
	// The same call under a confined template (its own home), to show
	// what confinement adds to a call.
	cs, err := confined.start()
	if err != nil {
		return nil, nil, b, err
	}
	defer cs.close()
	// And under rukh's own confining init, which the machine-code one
	// replaces where it can.
	cg, err := confined.startEnv("RUKH_WITHOUT=machine-init")
	if err != nil {
		return nil, nil, b, err
	}
	defer cg.close()
	cname, err := cs.toolNamed("trivial_ping__")
	if err != nil {
		return nil, nil, b, err
	}
	ps := make([]*peerStats, len(peers))
	for i, p := range peers {
		ps[i] = &peerStats{p: p}
		if ps[i].s, _, err = startPeer(p, c.trivial); err != nil {
			return nil, nil, b, err
		}
		defer ps[i].s.close()
	}
	var direct, call, list, swept, conf, confGo []time.Duration
	l0 := loadNow()
	for i := range c.warm + c.calls {
		d1, err := directExec(c.trivial, "trivial.ping")
		if err != nil {
			return nil, nil, b, err
		}
		line, d2, err := s.roundTrip(s.call(name, "{}"))
		if err == nil {
			err = checkCall(line)
		}
		if err != nil {
			return nil, nil, b, err
		}
		_, d3, err := s.roundTrip(s.list(""))
		if err != nil {
			return nil, nil, b, err
		}
		line, d4, err := sw.roundTrip(sw.call(name, "{}"))
		if err == nil {
			err = checkCall(line)
		}
		if err != nil {
			return nil, nil, b, fmt.Errorf("without namespaces: %v", err)
		}
		line, d5, err := cs.roundTrip(cs.call(cname, "{}"))
		if err == nil {
			err = checkCall(line)
		}
		if err != nil {
			return nil, nil, b, fmt.Errorf("confined: %v", err)
		}
		line, d6, err := cg.roundTrip(cg.call(cname, "{}"))
		if err == nil {
			err = checkCall(line)
		}
		if err != nil {
			return nil, nil, b, fmt.Errorf("confined under rukh's own init: %v", err)
		}
		var dp []time.Duration
		for _, p := range ps {
			line, d, err := p.s.roundTrip(p.s.legacy("tools/call", `"name":"trivial_ping","arguments":{}`))
			if err == nil {
				err = checkPeerCall(line)
			}
			if err != nil {
				return nil, nil, b, fmt.Errorf("%s: %v", p.p.name, err)
			}
			dp = append(dp, d)
		}
		if i < c.warm {
			continue
		}
		direct, call, list, swept = append(direct, d1), append(call, d2), append(list, d3), append(swept, d4)
		conf, confGo = append(conf, d5), append(confGo, d6)
		for k, p := range ps {
			p.calls = append(p.calls, dp[k])
		}
	}
	l1 := loadNow()
	for _, p := range ps {
		p.hwmKB, _ = procStatus(p.s.cmd.Process.Pid, "VmHWM")
		if err := peerColdAndList(p, c.trivial, c.cold); err != nil {
			return nil, nil, b, err
		}
	}
	// The same program through the CLI route (a whole rukh process per
	// call), alternating with its direct exec.
	l2 := loadNow()
	// `rukh --version` is a rukh process that starts and exits and does
	// nothing else: with the program's own run it is the floor of the
	// whole CLI row.
	var cli, cliDirect, cliVersion []time.Duration
	for i := range 5 + c.calls/2 {
		t := time.Now()
		if _, err := h.rukh("trivial", "ping"); err != nil {
			return nil, nil, b, err
		}
		d := time.Since(t)
		t = time.Now()
		if _, err := h.rukh("--version"); err != nil {
			return nil, nil, b, err
		}
		dv := time.Since(t)
		dd, err := directExec(c.trivial, "trivial.ping")
		if err != nil {
			return nil, nil, b, err
		}
		if i >= 5 {
			cli, cliDirect, cliVersion = append(cli, d), append(cliDirect, dd), append(cliVersion, dv)
		}
	}
	l3 := loadNow()
	b = baseline{cli: newStats(cli), list: newStats(list), direct: newStats(direct)}
	ds := newStats(direct)
	rows := []row{
		{name: "1 published command"},
		ratioRow("tools/call trivial, stdio (rukh)", newStats(call), ds.median(), 1.15, "≤ 1.15× direct"),
	}
	sweptRow := timeRow("   the same call without namespaces (recorded sweep)", newStats(swept), 0)
	sweptRow.ratio = fmt.Sprintf("%.2f×", float64(newStats(swept).median())/float64(ds.median()))
	goInit := timeRow("   the same confined call under rukh's own init (RUKH_WITHOUT=machine-init)", newStats(confGo), 0)
	goInit.ratio = "+" + ms(newStats(confGo).median()-newStats(call).median())
	rows = append(rows, sweptRow, addedRow("tools/call trivial, stdio, confined (template "+benchConfineName+")", newStats(conf), newStats(call).median(), time.Millisecond), goInit)
	for _, p := range ps {
		r := timeRow("   "+p.p.name+" peer, same tool", newStats(p.calls), 0)
		r.ratio = fmt.Sprintf("%.2f×", float64(newStats(p.calls).median())/float64(ds.median()))
		rows = append(rows, r)
	}
	rows = append(rows, timeRow("   direct exec, same program (fd-3 exchange)", ds, 0))
	loop, cold := loadSpan(l0, l1), loadSpan(l1, l2)
	rows = setLoad(rows, loop)
	rows = append(rows, setLoad([]row{
		ratioRow("`rukh trivial ping` (whole CLI process)", b.cli, newStats(cliDirect).median(), 2, "≤ 2× direct"),
		timeRow("   direct exec, same program", newStats(cliDirect), 0),
		versionRow(newStats(cliVersion), newStats(cliDirect).median()),
	}, loadSpan(l2, l3))...)
	rows = append(rows, setLoad([]row{timeRow("tools/list, 1-tool revision (warm)", b.list, 0)}, loop)...)
	for _, p := range ps {
		rows = append(rows, setLoad([]row{
			timeRow("   "+p.p.name+" peer: cold start → initialize", newStats(p.cold), 0),
			timeRow("   "+p.p.name+" peer: first tools/list (1 tool)", newStats(p.list), 0)}, cold)...)
		rows = append(rows, setLoad([]row{
			{name: "   " + p.p.name + " peer: peak RSS after the calls", n: 1, median: fmt.Sprintf("%.1f MiB", float64(p.hwmKB)/1024)}}, loop)...)
	}
	notes := []string{
		fmt.Sprintf("tools/call overhead over the direct exec: %s per call (median difference)", ms(newStats(call).median()-ds.median())),
		fmt.Sprintf("containment in a PID namespace under rukh's init: %s per call (median difference from the same call without namespaces)", ms(newStats(call).median()-newStats(swept).median())),
		fmt.Sprintf("confinement (rukh's confining init, namespaces, Landlock): %s per call (median difference from the same call unconfined)", ms(newStats(conf).median()-newStats(call).median())),
	}
	return rows, notes, b, nil
}

// runMaxRSS runs one rukh verb and returns its time and peak RSS.
func (h *home) runMaxRSS(args ...string) (time.Duration, int64, error) {
	cmd := exec.Command(h.c.rukh, args...)
	cmd.Env = h.env()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	t := time.Now()
	err := cmd.Run()
	d := time.Since(t)
	if err != nil {
		return 0, 0, fmt.Errorf("rukh %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	var kb int64
	if ru != nil {
		kb = ru.Maxrss
	}
	return d, kb, nil
}

// benchSize measures one large home: publish, cold start, first list, full
// walk, memory and the CLI route, against the targets of
// docs/performance.md.
func benchSize(c config, z size, b baseline) ([]row, []string, error) {
	c.packages, c.commands = z.packages, z.commands
	logf("home of %d commands: setup", z.tools())
	h, notes, err := setupLarge(c)
	if err != nil {
		return nil, nil, err
	}
	logf("home of %d commands: publish", z.tools())
	dry, _, err := h.runMaxRSS("publish", "--dry-run")
	if err != nil {
		return nil, nil, err
	}
	pub, pubKB, err := h.runMaxRSS("publish")
	if err != nil {
		return nil, nil, err
	}
	var storeBytes int64
	if fi, err := os.Stat(h.dir + "/rukh.db"); err == nil {
		storeBytes = fi.Size()
	}

	logf("home of %d commands: cold starts and first lists", z.tools())
	var cold, first []time.Duration
	for i := range 2 + c.cold {
		t := time.Now()
		s, err := h.start()
		if err != nil {
			return nil, nil, err
		}
		line, _, err := s.roundTrip(s.discover())
		d := time.Since(t)
		if err == nil {
			_, err = decode(line)
		}
		var dl time.Duration
		if err == nil {
			line, dl, err = s.roundTrip(s.list(""))
			if err == nil {
				_, err = decode(line)
			}
		}
		s.close()
		if err != nil {
			return nil, nil, err
		}
		if i >= 2 {
			cold, first = append(cold, d), append(first, dl)
		}
	}

	logf("home of %d commands: warm lists, full walk, memory", z.tools())
	s, err := h.start()
	if err != nil {
		return nil, nil, err
	}
	var warm, pages []time.Duration
	for i := range c.warm + c.lists {
		_, d, err := s.roundTrip(s.list(""))
		if err != nil {
			s.close()
			return nil, nil, err
		}
		if i >= c.warm {
			warm = append(warm, d)
		}
	}
	cursor, tools, listBytes := "", 0, 0
	for {
		line, d, err := s.roundTrip(s.list(cursor))
		listBytes += len(line)
		var r *response
		if err == nil {
			r, err = decode(line)
		}
		if err != nil {
			s.close()
			return nil, nil, err
		}
		pages, tools = append(pages, d), tools+len(r.Result.Tools)
		if r.Result.NextCursor == "" {
			break
		}
		cursor = r.Result.NextCursor
	}
	hwm, err := procStatus(s.cmd.Process.Pid, "VmHWM")
	s.close()
	if err != nil {
		return nil, nil, err
	}
	if tools != z.tools() {
		return nil, nil, fmt.Errorf("full listing has %d tools, want %d", tools, z.tools())
	}

	var cli []time.Duration
	for i := range 5 + c.calls/4 {
		t := time.Now()
		if _, err := h.rukh("p0000", "c00", "--title", "x"); err != nil {
			return nil, nil, err
		}
		if i >= 5 {
			cli = append(cli, time.Since(t))
		}
	}

	ps := newStats(pages)
	perPage := ps.median() - b.list.median()
	walk := timeRow("tools/list, full walk: per page above a 1-tool list", ps, 0)
	walk.median = ms(perPage)
	walk.target, walk.verdict = "≤ 0.050 ms", verdict(perPage <= 50*time.Microsecond)
	perCmd := float64(storeBytes) / float64(z.tools())
	rows := []row{
		{name: fmt.Sprintf("%d published commands (%d packages)", z.tools(), z.packages)},
		ratioRow("`rukh p0000 c00` (whole CLI process)", newStats(cli), b.cli.median(), 1.2, "≤ 1.2× 1-command"),
		timeRow("tools/list first page, first request after start", newStats(first), time.Millisecond),
		timeRow("   tools/list first page, warm", newStats(warm), 0),
		walk,
		timeRow("serve-mcp cold start → server/discover", newStats(cold), 10*time.Millisecond),
		{name: "serve-mcp peak RSS after the lists", n: 1, median: fmt.Sprintf("%.1f MiB", float64(hwm)/1024), target: "≤ 20 MiB",
			ratio: fmt.Sprintf("%.2f×", float64(hwm)/(20<<10)), verdict: verdict(hwm <= 20<<10)},
	}
	pubRow := timeRow(fmt.Sprintf("rukh publish (%d packages)", z.packages), stats{pub}, 0)
	switch {
	case z.tools() >= 100_000:
		pubRow.target, pubRow.ratio, pubRow.verdict = "≤ 10 s", fmt.Sprintf("%.2f×", pub.Seconds()/10), verdict(pub <= 10*time.Second)
	case z.packages == 1000:
		pubRow.target, pubRow.ratio, pubRow.verdict = "≤ 2 s", fmt.Sprintf("%.2f×", pub.Seconds()/2), verdict(pub <= 2*time.Second)
	}
	memRow := row{name: "   rukh publish peak RSS", n: 1, median: fmt.Sprintf("%.0f MiB", float64(pubKB)/1024)}
	if z.tools() >= 100_000 {
		memRow.target, memRow.ratio, memRow.verdict = "≤ 256 MiB", fmt.Sprintf("%.2f×", float64(pubKB)/(256<<10)), verdict(pubKB <= 256<<10)
	}
	rows = append(rows, pubRow, memRow, timeRow("   rukh publish --dry-run", stats{dry}, 0),
		row{name: "   store file per command, 1 revision (releases included)", n: 1, median: fmt.Sprintf("%.2f KiB", perCmd/1024)})
	notes = append(notes, fmt.Sprintf("%d commands: store file %.1f MiB after one publish; %d list pages", z.tools(), float64(storeBytes)/(1<<20), len(pages)))
	logf("home of %d commands: serve-http memory", z.tools())
	hr, hn, err := benchHTTPMemory(c, h)
	if err != nil {
		return nil, nil, fmt.Errorf("serve-http: %w", err)
	}
	rows, notes = append(rows, hr...), append(notes, hn...)

	// One more revision of the same releases (--force: in compact naming
	// every tool is renamed, so the whole index is new; declarations and
	// bodies are shared): what a revision costs per command.
	logf("home of %d commands: store growth of one more revision", z.tools())
	before, err := storeInUse(h.dir)
	if err != nil {
		return nil, nil, err
	}
	if _, err := h.rukh("publish", "--force"); err != nil {
		return nil, nil, err
	}
	after, err := storeInUse(h.dir)
	if err != nil {
		return nil, nil, err
	}
	perRev := float64(after-before) / float64(z.tools())
	rows = append(rows, row{name: "   store growth per command, one more revision", n: 1, median: fmt.Sprintf("%.2f KiB", perRev/1024),
		target: "≤ 2 KiB", ratio: fmt.Sprintf("%.2f×", perRev/2048), verdict: verdict(perRev <= 2048)})

	logf("home of %d commands: discovery, direct and progressive", z.tools())
	dr, err := measureDiscovery(c, h, z, c.searches, listBytes, len(pages))
	if err != nil {
		return nil, nil, fmt.Errorf("discovery: %w", err)
	}
	rows = append(rows, dr.rows(true)...)
	return rows, notes, nil
}

// storeInUse is the bytes the store's buckets use (pages in use, not the
// file, which bbolt grows in large steps).
func storeInUse(dir string) (int64, error) {
	stats, err := store.New(dir).Stats()
	if err != nil {
		return 0, err
	}
	var n int64
	for _, st := range stats {
		n += int64(st.Bytes)
	}
	return n, nil
}

// versionRow is `rukh --version` beside the direct exec, and the floor it
// sets for the whole CLI process: rukh's own start and exit, then the
// program's run.
func versionRow(v stats, direct time.Duration) row {
	r := timeRow("   `rukh --version` (start and exit alone; floor of the row above: this + direct)", v, 0)
	r.ratio = fmt.Sprintf("%.2f× (floor %.2f×)", float64(v.median())/float64(direct), float64(v.median()+direct)/float64(direct))
	return r
}
