//go:build rukhprof

package main

import (
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"time"
)

// profiled runs f under the profiles the environment asks for: a build for
// measuring (go build -tags rukhprof), never a shipped binary.
// RUKH_CPUPROFILE=FILE writes a CPU profile of the whole run;
// RUKH_HEAPPROFILE=FILE a heap profile taken whenever the live heap after
// a collection reaches a new high, so it shows what is held at the peak;
// RUKH_MUTEXPROFILE=FILE and RUKH_BLOCKPROFILE=FILE the contended locks and
// the waits of the whole run, written at its end.
func profiled(f func() int) int {
	if p := os.Getenv("RUKH_CPUPROFILE"); p != "" {
		if out, err := os.Create(p); err == nil {
			if pprof.StartCPUProfile(out) == nil {
				defer func() { pprof.StopCPUProfile(); _ = out.Close() }()
			}
		}
	}
	if p := os.Getenv("RUKH_HEAPPROFILE"); p != "" {
		runtime.MemProfileRate = 64 << 10
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
			var high uint64
			t := time.NewTicker(50 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
				}
				metrics.Read(s)
				if v := s[0].Value.Uint64(); v > high+high/20 {
					high = v
					if out, err := os.Create(p); err == nil {
						_ = pprof.Lookup("heap").WriteTo(out, 0)
						_ = out.Close()
					}
				}
			}
		}()
		defer func() { close(stop); <-done }()
	}
	for _, w := range []struct{ env, name string }{{"RUKH_MUTEXPROFILE", "mutex"}, {"RUKH_BLOCKPROFILE", "block"}} {
		p := os.Getenv(w.env)
		if p == "" {
			continue
		}
		if w.name == "mutex" {
			runtime.SetMutexProfileFraction(1)
		} else {
			runtime.SetBlockProfileRate(1000) // a sample per µs blocked
		}
		defer func() {
			if out, err := os.Create(p); err == nil {
				_ = pprof.Lookup(w.name).WriteTo(out, 0)
				_ = out.Close()
			}
		}()
	}
	return f()
}
