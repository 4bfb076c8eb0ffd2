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
}

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
	var peers []peer
	for _, p := range []peer{{"go-sdk", c.peerGoSDK}, {"mcp-go", c.peerMCPGo}} {
		if p.bin != "" {
			peers = append(peers, p)
		}
	}
	logf("small home: 1 trivial tool (+1 SDK tool)")
	small, err := setupSmall(c)
	if err != nil {
		return fmt.Errorf("small home: %w", err)
	}
	logf("confined home: the trivial tool under a confined template")
	confined, err := setupConfined(c)
	if err != nil {
		return fmt.Errorf("confined home: %w", err)
	}
	rows, notes, base, err := benchSmall(c, small, confined, peers)
	if err != nil {
		return fmt.Errorf("1-command home: %w", err)
	}
	logf("small home over serve-http")
	httpRows, httpNotes, err := benchHTTP(c, small, peers)
	if err != nil {
		return fmt.Errorf("serve-http: %w", err)
	}
	rows, notes = append(rows, httpRows...), append(notes, httpNotes...)
	for _, z := range sizes {
		r, n, err := benchSize(c, z, base)
		if err != nil {
			return fmt.Errorf("%d commands: %w", z.tools(), err)
		}
		rows, notes = append(rows, r...), append(notes, n...)
	}
	for _, z := range discoverySizes {
		r, err := benchDiscoverySize(c, z)
		if err != nil {
			return fmt.Errorf("%d commands (discovery): %w", z.tools(), err)
		}
		rows = append(rows, r...)
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

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "rukhbench: "+format+"\n", args...)
}
