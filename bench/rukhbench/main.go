// Command rukhbench measures the SPEC §9 targets against the real rukh
// binary, side by side in one run, and prints one table: medians, p90, the
// target, and a verdict. It is a report, not a test: it exits 0 when a
// target is missed (and prints MISSED), and non-zero only when it could not
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
	jobs                      int
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
	flag.IntVar(&c.packages, "packages", 1000, "packages published in the large home")
	flag.IntVar(&c.commands, "commands", 10, "commands per package in the large home")
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
	var rows []row
	var notes []string

	logf("small home: 1 trivial tool (+1 SDK tool)")
	small, err := setupSmall(c)
	if err != nil {
		return fmt.Errorf("small home: %w", err)
	}
	callRows, n, err := benchCall(c, small)
	if err != nil {
		return fmt.Errorf("tools/call: %w", err)
	}
	notes = append(notes, n...)

	logf("serve-http")
	httpRows, n, err := benchHTTP(c, small)
	if err != nil {
		return fmt.Errorf("serve-http: %w", err)
	}
	notes = append(notes, n...)

	logf("large home: %d packages x %d commands (setup)", c.packages, c.commands)
	large, setupNotes, err := setupLarge(c)
	if err != nil {
		return fmt.Errorf("large home: %w", err)
	}
	notes = append(notes, setupNotes...)

	logf("publish")
	pubRows, n, err := benchPublish(c, large)
	if err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	notes = append(notes, n...)

	logf("tools/list and memory")
	listRows, memRows, n, err := benchList(c, large)
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	notes = append(notes, n...)

	logf("serve-http memory")
	httpMem, n, err := benchHTTPMemory(c, large)
	if err != nil {
		return fmt.Errorf("serve-http memory: %w", err)
	}
	notes = append(notes, n...)

	logf("cold starts")
	coldRows, n, err := benchCold(c, large, small)
	if err != nil {
		return fmt.Errorf("cold start: %w", err)
	}
	notes = append(notes, n...)

	logf("context")
	ctxRows, n, err := benchContext(c, large)
	if err != nil {
		return fmt.Errorf("context: %w", err)
	}
	notes = append(notes, n...)

	for _, rs := range [][]row{callRows, httpRows, listRows, coldRows, pubRows, memRows, httpMem, ctxRows} {
		rows = append(rows, rs...)
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
