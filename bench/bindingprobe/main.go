// Command bindingprobe explains where a revision's size and serve-mcp's
// memory go: for the active revision of a RUKH_HOME it prints the encoded
// binding's size by section, and the time, allocation and live heap of
// decoding it the way serve-mcp does (store.Revision, then json.Unmarshal
// into policy.Binding, as commands/binding.go decodeBinding).
//
//	go run ./bench/bindingprobe HOME
package main

import (
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: bindingprobe RUKH_HOME")
		os.Exit(2)
	}
	if err := probe(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "bindingprobe:", err)
		os.Exit(1)
	}
}

func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func probe(home string) error {
	s := store.New(home)
	n, err := s.Active()
	if err != nil {
		return err
	}
	h0 := heap()
	t := time.Now()
	rev, err := s.Revision(n)
	if err != nil {
		return err
	}
	read := time.Since(t)
	h1 := heap()
	fmt.Printf("revision %s: binding %s (store.Revision %s, live heap +%s)\n", rev.ID, mib(uint64(len(rev.Binding))), read.Round(time.Microsecond), mib(h1-h0))

	// Size by top-level section.
	var sections map[string]jsontext.Value
	if err := json.Unmarshal(rev.Binding, &sections); err != nil {
		return err
	}
	for _, k := range []string{"revision", "profile", "releases", "commands", "routes", "endpoints"} {
		fmt.Printf("  %-10s %s\n", k, mib(uint64(len(sections[k]))))
	}
	sections = nil

	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	t = time.Now()
	var b policy.Binding
	if err := json.Unmarshal(rev.Binding, &b); err != nil {
		return err
	}
	dec := time.Since(t)
	runtime.ReadMemStats(&ms1)
	h2 := heap()
	tools, wire := 0, 0
	for _, e := range b.Endpoints {
		tools += len(e.Tools)
		for _, tl := range e.Tools {
			wire += len(tl.Wire)
		}
	}
	fmt.Printf("full decode (as serve-mcp and the CLI do): %s, %s allocated in %d objects; the decoded binding holds %s live\n",
		dec.Round(time.Microsecond), mib(ms1.TotalAlloc-ms0.TotalAlloc), ms1.Mallocs-ms0.Mallocs, mib(h2-h1))
	fmt.Printf("decoded: %d commands, %d routes, %d tools, tool wire bytes %s\n", len(b.Commands), len(b.Routes), tools, mib(uint64(wire)))
	b = policy.Binding{}

	// What serve-mcp needs to list and resolve: the releases and the
	// projections, without the CLI routes and the command declarations.
	var view struct {
		Revision  string                `json:"revision"`
		Releases  []policy.BoundRelease `json:"releases"`
		Endpoints []policy.Projection   `json:"endpoints"`
	}
	runtime.ReadMemStats(&ms0)
	t = time.Now()
	if err := json.Unmarshal(rev.Binding, &view); err != nil {
		return err
	}
	dec = time.Since(t)
	runtime.ReadMemStats(&ms1)
	rev.Binding = nil
	h4 := heap()
	fmt.Printf("a serve-only view (releases + projections, no declarations or routes): decode %s, %s allocated; it holds %s live\n",
		dec.Round(time.Microsecond), mib(ms1.TotalAlloc-ms0.TotalAlloc), mib(h4-h0))
	runtime.KeepAlive(&view)
	return nil
}
