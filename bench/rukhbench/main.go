//go:build linux

// Command rukhbench measures the targets of docs/performance.md against the
// real rukh binary, side by side in one run, and prints one table: medians,
// p90, the target, and a verdict. It is a report, not a test: it exits 0 when
// a target is missed (and prints MISSED), and non-zero only when it could not
// measure at all.
//
// It drives rukh only through its public surface: the owner verbs
// (install --allow-unsigned, activate, policy set, publish) in fresh
// RUKH_HOME directories under -dir, and serve-mcp over stdin/stdout with
// modern (2026-07-28) JSON-RPC lines, one request at a time.
//
// scripts/bench.sh builds the binaries and runs it.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

type config struct {
	rukh, trivial, trivialSDK string
	dir                       string
	calls, warm               int
	lists                     int
	cold                      int
	packages, commands        int
	sizes                     string
	peerGoSDK, peerMCPGo      string
	jobs                      int
	discoverySizes            string
	searches                  int
	only                      string
	busy                      int
	busyRamp                  time.Duration
}

// parts are the report's parts, in the order they run; -only picks some.
var parts = []string{"stdio", "http", "inflight", "sizes", "discovery"}

func main() {
	var c config
	flag.StringVar(&c.rukh, "rukh", "", "the rukh binary")
	flag.StringVar(&c.trivial, "trivial", "", "the bench/trivial binary (static)")
	flag.StringVar(&c.trivialSDK, "trivialsdk", "", "the bench/trivialsdk binary (static, optional)")
	flag.StringVar(&c.dir, "dir", "", "a scratch directory (homes and packages are made here)")
	flag.IntVar(&c.calls, "calls", 200, "timed tools/call round trips (and direct execs)")
	flag.IntVar(&c.warm, "warm", 20, "warm-up requests before timing")
	flag.IntVar(&c.lists, "lists", 1000, "timed tools/list first-page round trips")
	flag.IntVar(&c.cold, "cold", 30, "serve-mcp cold starts")
	flag.StringVar(&c.sizes, "sizes", "1000x10,1000x100", "the large homes, PACKAGESxCOMMANDS, comma-separated")
	flag.StringVar(&c.peerGoSDK, "peer-gosdk", "", "the bench/peer-gosdk binary (optional)")
	flag.StringVar(&c.peerMCPGo, "peer-mcpgo", "", "the bench/peer-mcpgo binary (optional)")
	flag.StringVar(&c.discoverySizes, "discovery-sizes", "1x100,10x100", "homes measured for discovery alone (besides -sizes), PACKAGESxCOMMANDS; \"\": none")
	flag.IntVar(&c.searches, "searches", 200, "timed warm searches per home")
	flag.IntVar(&c.jobs, "jobs", min(runtime.NumCPU()+1, 4), "parallel installs/activations during setup")
	flag.StringVar(&c.only, "only", "", "run only these parts, comma-separated: "+strings.Join(parts, ",")+" (sizes needs stdio, its baseline)")
	flag.IntVar(&c.busy, "busy", 0, "after the call parts (stdio, http, inflight), run them again beside this many CPU-bound loops, each in its own session")
	flag.DurationVar(&c.busyRamp, "busy-ramp", time.Minute, "at most this long for the 1-minute load to reach -busy before the busy pass")
	flag.Parse()
	if c.rukh == "" || c.trivial == "" || c.dir == "" {
		fmt.Fprintln(os.Stderr, "usage: rukhbench -rukh BIN -trivial BIN [-trivialsdk BIN] -dir DIR")
		os.Exit(2)
	}
	if err := run(c, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "rukhbench:", err)
		os.Exit(1)
	}
}

func run(c config, out io.Writer) error {
	t0 := time.Now()
	sizes, err := parseSizes(c.sizes)
	if err != nil {
		return err
	}
	var discoverySizes []size
	if c.discoverySizes != "" {
		if discoverySizes, err = parseSizes(c.discoverySizes); err != nil {
			return err
		}
	}
	want, err := parseOnly(c.only)
	if err != nil {
		return err
	}
	if want["sizes"] && !want["stdio"] {
		return fmt.Errorf("-only: sizes needs stdio (the 1-command home is its baseline)")
	}
	var peers []peer
	for _, p := range []peer{{"go-sdk", c.peerGoSDK}, {"mcp-go", c.peerMCPGo}} {
		if p.bin != "" {
			peers = append(peers, p)
		}
	}
	var small, confined *smallHome
	if want["stdio"] || want["http"] || want["inflight"] {
		logf("small home: 1 trivial tool (+1 SDK tool)")
		if small, err = setupSmall(c); err != nil {
			return fmt.Errorf("small home: %w", err)
		}
	}
	if want["stdio"] {
		logf("confined home: the trivial tool under a confined template")
		if confined, err = setupConfined(c); err != nil {
			return fmt.Errorf("confined home: %w", err)
		}
	}
	var rows []row
	var notes []string
	var base baseline
	// calls is one pass of the call parts; the busy pass repeats them, its
	// notes prefixed.
	calls := func(prefix string) error {
		n0 := len(notes)
		defer func() {
			for i := n0; i < len(notes); i++ {
				notes[i] = prefix + notes[i]
			}
		}()
		if want["stdio"] {
			l := loadNow()
			r, n, b, err := benchSmall(c, small, confined, peers)
			if err != nil {
				return fmt.Errorf("1-command home: %w", err)
			}
			if base.direct == nil {
				base = b
			}
			rows, notes = append(rows, stamp(r, l)...), append(notes, n...)
		}
		var httpRate callRate
		if want["http"] {
			logf("small home over serve-http, beside the peers over streamable HTTP")
			l := loadNow()
			r, n, rate, err := benchHTTP(c, small, peers)
			if err != nil {
				return fmt.Errorf("serve-http: %w", err)
			}
			httpRate = rate
			rows, notes = append(rows, stamp(r, l)...), append(notes, n...)
			l = loadNow()
			mr, err := benchHTTPSmallMemory(small)
			if err != nil {
				return fmt.Errorf("serve-http memory: %w", err)
			}
			rows = append(rows, stamp(mr, l)...)
		}
		if want["inflight"] {
			logf("calls in flight over stdio")
			l := loadNow()
			r, err := benchInFlight(c, small, peers, httpRate)
			if err != nil {
				return err
			}
			rows = append(rows, stamp(r, l)...)
		}
		return nil
	}
	if err := calls(""); err != nil {
		return err
	}
	if c.busy > 0 && (want["stdio"] || want["http"] || want["inflight"]) {
		b, err := startBusy(c.busy, c.busyRamp)
		if err != nil {
			return err
		}
		rows = append(rows, row{name: fmt.Sprintf("busy host: the same beside %d CPU-bound loops, each in its own session", c.busy)})
		err = calls(fmt.Sprintf("busy host (%d loops): ", c.busy))
		b.stop()
		if err != nil {
			return fmt.Errorf("busy host: %w", err)
		}
	}
	if want["sizes"] {
		for _, z := range sizes {
			l := loadNow()
			r, n, err := benchSize(c, z, base)
			if err != nil {
				return fmt.Errorf("%d commands: %w", z.tools(), err)
			}
			rows, notes = append(rows, stamp(r, l)...), append(notes, n...)
		}
	}
	if want["discovery"] {
		for _, z := range discoverySizes {
			l := loadNow()
			r, err := benchDiscoverySize(c, z)
			if err != nil {
				return fmt.Errorf("%d commands (discovery): %w", z.tools(), err)
			}
			rows = append(rows, stamp(r, l)...)
		}
	}
	printTable(out, rows)
	fmt.Fprintln(out)
	for _, n := range notes {
		fmt.Fprintln(out, "- "+n)
	}
	fmt.Fprintf(out, "- whole run (build excluded): %s on %d CPUs, %s/%s, %s\n",
		time.Since(t0).Round(100*time.Millisecond), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	return nil
}

// parseOnly is the set of parts -only names; "" is every part.
func parseOnly(s string) (map[string]bool, error) {
	want := map[string]bool{}
	if s == "" {
		for _, p := range parts {
			want[p] = true
		}
		return want, nil
	}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(parts, f) {
			return nil, fmt.Errorf("-only: no part %q (parts: %s)", f, strings.Join(parts, ","))
		}
		want[f] = true
	}
	return want, nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "rukhbench: "+format+"\n", args...)
}
