//go:build linux

package main

import (
	"fmt"
	"time"
)

// inFlight is how many tools/call requests the throughput rows keep
// outstanding at once.
const inFlight = 16

// benchInFlight: calls per second with inFlight calls outstanding over
// stdio, for rukh's serve-mcp and each peer (one pipe, requests written as
// answers come back: target rukh ≥ the better peer), and, when httpRate
// (serve-http's calls/s at inFlight clients, from benchHTTP) is known,
// serve-http against the stdio rate (target within the 1.1× bar). The
// template allows more calls at once than any row makes (setPolicyNS), so
// none is refused as overload.
func benchInFlight(c config, h *smallHome, peers []peer, httpRate callRate) ([]row, error) {
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
	l := loadNow()
	rukhRate, err := pipelined(s, n, func() []byte { return s.call(name, "{}") }, checkCall)
	if err != nil {
		return nil, fmt.Errorf("stdio, %d in flight: %w", inFlight, err)
	}
	stdio := row{name: fmt.Sprintf("%d calls in flight, stdio (rukh), calls/s", inFlight), n: n, median: fmt.Sprintf("%.0f/s", rukhRate),
		load: loadSpan(l, loadNow())}
	var peerRows []row
	best := 0.0
	for _, p := range peers {
		ps, _, err := startPeer(p, c.trivial)
		if err != nil {
			return nil, err
		}
		l := loadNow()
		rate, err := pipelined(ps, n, func() []byte { return ps.legacy("tools/call", `"name":"trivial_ping","arguments":{}`) }, checkPeerCall)
		ps.close()
		if err != nil {
			return nil, fmt.Errorf("%s peer, %d in flight: %w", p.name, inFlight, err)
		}
		peerRows = append(peerRows, row{name: "   " + p.name + " peer, same tool, calls/s", n: n, median: fmt.Sprintf("%.0f/s", rate),
			load: loadSpan(l, loadNow())})
		best = max(best, rate)
	}
	if best > 0 {
		stdio.target = "≥ better peer"
		stdio.ratio = fmt.Sprintf("%.2f×", rukhRate/best)
		stdio.verdict = verdict(rukhRate >= best)
	}
	rows := append([]row{stdio}, peerRows...)
	if h := httpRate.rate; h > 0 {
		rows = append(rows, row{name: fmt.Sprintf("%d calls in flight, HTTP (serve-http, above), calls/s", inFlight), n: n,
			median: fmt.Sprintf("%.0f/s", h), target: "≥ stdio / 1.1",
			ratio: fmt.Sprintf("%.2f×", h/rukhRate), verdict: verdict(h*1.1 >= rukhRate), load: httpRate.load})
	}
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
