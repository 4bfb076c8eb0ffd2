//go:build linux

package main

import (
	"fmt"
	"sync"
	"time"
)

// inFlight is how many tools/call requests the throughput rows keep
// outstanding at once.
const inFlight = 16

// benchInFlight: calls per second with inFlight calls outstanding, for
// rukh's serve-mcp and the mcp-go peer over stdio (one pipe, requests
// written as answers come back: target rukh ≥ mcp-go), and for serve-http
// (inFlight keep-alive connections, one call at a time each: target within
// the 1.1× bar of the stdio rate). The template allows inFlight calls at
// once (setPolicyNS), so none is refused as overload.
func benchInFlight(c config, h *smallHome, peers []peer, hs *httpServer) ([]row, error) {
	n := max(c.calls*2, 4*inFlight)
	s, err := h.start()
	if err != nil {
		return nil, err
	}
	defer s.close()
	name, err := s.toolNamed("trivial_ping__")
	if err != nil {
		return nil, err
	}
	rukhRate, err := pipelined(s, n, func() []byte { return s.call(name, "{}") }, checkCall)
	if err != nil {
		return nil, fmt.Errorf("stdio, %d in flight: %w", inFlight, err)
	}
	peerRate := 0.0
	for _, p := range peers {
		if p.name != "mcp-go" {
			continue
		}
		ps, _, err := startPeer(p, c.trivial)
		if err != nil {
			return nil, err
		}
		peerRate, err = pipelined(ps, n, func() []byte { return ps.legacy("tools/call", `"name":"trivial_ping","arguments":{}`) }, checkPeerCall)
		ps.close()
		if err != nil {
			return nil, fmt.Errorf("%s peer, %d in flight: %w", p.name, inFlight, err)
		}
	}
	httpRate, err := httpInFlight(hs, name, string(s.call(name, "{}")), n)
	if err != nil {
		return nil, fmt.Errorf("HTTP, %d in flight: %w", inFlight, err)
	}

	stdio := row{name: fmt.Sprintf("%d calls in flight, stdio (rukh), calls/s", inFlight), n: n, median: fmt.Sprintf("%.0f/s", rukhRate)}
	if peerRate > 0 {
		stdio.target = "≥ mcp-go peer"
		stdio.ratio = fmt.Sprintf("%.2f×", rukhRate/peerRate)
		stdio.verdict = verdict(rukhRate >= peerRate)
	}
	rows := []row{stdio}
	if peerRate > 0 {
		rows = append(rows, row{name: "   mcp-go peer, same tool, calls/s", n: n, median: fmt.Sprintf("%.0f/s", peerRate)})
	}
	rows = append(rows, row{name: fmt.Sprintf("%d calls in flight, HTTP (serve-http), calls/s", inFlight), n: n,
		median: fmt.Sprintf("%.0f/s", httpRate), target: "≥ stdio / 1.1",
		ratio: fmt.Sprintf("%.2f×", httpRate/rukhRate), verdict: verdict(httpRate*1.1 >= rukhRate)})
	return rows, nil
}

// pipelined sends n requests on one stdio session, keeping inFlight
// outstanding, checks every answer and returns the rate. The first
// inFlight answers warm up and are not timed.
func pipelined(s *session, n int, next func() []byte, check func([]byte) error) (float64, error) {
	sent, got := 0, 0
	send := func() error {
		sent++
		_, err := s.stdin.Write(next())
		return err
	}
	for range min(inFlight, n+inFlight) {
		if err := send(); err != nil {
			return 0, err
		}
	}
	var t0 time.Time
	for got < n+inFlight {
		select {
		case line, ok := <-s.lines:
			if !ok {
				return 0, fmt.Errorf("the server closed its stdout (stderr: %s)", s.stderr.String())
			}
			if err := check(line); err != nil {
				return 0, err
			}
		case <-time.After(30 * time.Second):
			return 0, fmt.Errorf("no answer in 30 s (stderr: %s)", s.stderr.String())
		}
		if got++; got == inFlight {
			t0 = time.Now()
		}
		if sent < n+inFlight {
			if err := send(); err != nil {
				return 0, err
			}
		}
	}
	return float64(n) / time.Since(t0).Seconds(), nil
}

// httpInFlight runs n calls over inFlight connections at once and returns
// the rate.
func httpInFlight(hs *httpServer, name, line string, n int) (float64, error) {
	per := max(n/inFlight, 1)
	errs := make(chan error, inFlight)
	call := func() error {
		body, _, err := hs.post("tools/call", name, line)
		if err == nil {
			err = checkCall(body)
		}
		return err
	}
	run := func(k int) time.Duration {
		var wg sync.WaitGroup
		t0 := time.Now()
		for range inFlight {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range k {
					if err := call(); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		return time.Since(t0)
	}
	run(1) // warm: every connection made
	d := run(per)
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	return float64(per*inFlight) / d.Seconds(), nil
}
