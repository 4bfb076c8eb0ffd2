//go:build linux

package main

import (
	"bufio"
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"time"
)

// peer is one go-sdk or mcp-go MCP stdio server built from bench/, serving
// the same trivial tool (bench/peerexec). They speak the legacy era: an
// initialize handshake, then requests.
type peer struct {
	name, bin string
}

// startPeer spawns a peer and reads its initialize response; it returns
// the session and the time from just before the spawn to that response.
func startPeer(p peer, trivial string) (*session, time.Duration, error) {
	t := time.Now()
	cmd := exec.Command(p.bin, trivial)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, 0, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, 0, err
	}
	s := &session{cmd: cmd, stdin: stdin, lines: make(chan []byte, 1), stderr: &lockedBuffer{}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	go func() {
		r := bufio.NewReaderSize(stdout, 4<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				s.lines <- line
			}
			if err != nil {
				close(s.lines)
				return
			}
		}
	}()
	s.nextID++
	line, _, err := s.roundTrip([]byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(s.nextID) + `,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"rukhbench","version":"1"}}}` + "\n"))
	d := time.Since(t)
	if err == nil {
		_, err = decode(line)
	}
	if err == nil {
		_, err = s.stdin.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	}
	if err != nil {
		s.close()
		return nil, 0, fmt.Errorf("%s: initialize: %v", p.name, err)
	}
	return s, d, nil
}

func (s *session) legacy(method, params string) []byte {
	s.nextID++
	return []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(s.nextID) + `,"method":"` + method + `","params":{` + params + "}}\n")
}

// checkPeerCall fails unless a peer's tools/call answered a result that is
// not an error.
func checkPeerCall(line []byte) error {
	r, err := decode(line)
	if err != nil {
		return err
	}
	if r.Result.IsError {
		return fmt.Errorf("peer call failed: %.300s", line)
	}
	return nil
}

// peerStats is what is measured of one peer, side by side with rukh.
type peerStats struct {
	p                 peer
	s                 *session
	calls, cold, list []time.Duration
	hwmKB             int64
}

// peerColdAndList starts a peer fresh n times: cold start to the initialize
// response, then the first tools/list.
func peerColdAndList(ps *peerStats, trivial string, n int) error {
	for i := range n + 2 {
		s, d, err := startPeer(ps.p, trivial)
		if err != nil {
			return err
		}
		line, dl, err := s.roundTrip(s.legacy("tools/list", ""))
		if err == nil {
			_, err = decode(line)
		}
		s.close()
		if err != nil {
			return fmt.Errorf("%s: tools/list: %v", ps.p.name, err)
		}
		if i >= 2 {
			ps.cold, ps.list = append(ps.cold, d), append(ps.list, dl)
		}
	}
	return nil
}

// peerCallLine is the peers' tools/call request over HTTP (stateless: no
// initialize first, the id need not be unique).
const peerCallLine = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"trivial_ping","arguments":{}}}`

// startPeerHTTP starts a peer's streamable HTTP server on a loopback port.
func startPeerHTTP(p peer, trivial string) (*httpServer, error) {
	cmd := exec.Command(p.bin, trivial, "127.0.0.1:0")
	pr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &httpServer{cmd: cmd, stderr: &lockedBuffer{}, protocol: "2025-06-18",
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: httpClients * 2}}}
	if err := s.waitListening(pr, "/mcp", p.name+" peer over HTTP"); err != nil {
		return nil, err
	}
	return s, nil
}
