package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// httpClients is how many agents list at once in the throughput row.
const httpClients = 16

// benchHTTP: SPEC §9 "HTTP tools/call ≤ 1.1× the stdio call; ≥ 1,000 list
// requests/s". The small home is published again with "http" in its
// transports; an agent's static key authenticates every request (one store
// read each). HTTP and stdio calls alternate in one loop, as in benchCall.
func benchHTTP(c config, h *smallHome) ([]row, []string, error) {
	if err := h.setHTTPPolicy(); err != nil {
		return nil, nil, err
	}
	if _, err := h.rukh("publish"); err != nil {
		return nil, nil, err
	}
	out, err := h.rukh("agent", "add", "bench", "--endpoint", "local", "--json")
	if err != nil {
		return nil, nil, err
	}
	var key struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(out), &key); err != nil || key.Token == "" {
		return nil, nil, fmt.Errorf("agent add printed no token: %v", err)
	}
	hs, err := h.startHTTP()
	if err != nil {
		return nil, nil, err
	}
	defer hs.close()
	hs.token = key.Token

	s, err := h.start()
	if err != nil {
		return nil, nil, err
	}
	defer s.close()
	name, err := s.toolNamed("trivial_ping__")
	if err != nil {
		return nil, nil, err
	}
	var stdio, overHTTP []time.Duration
	for i := range c.warm + c.calls {
		line, d1, err := s.roundTrip(s.call(name, "{}"))
		if err != nil {
			return nil, nil, err
		}
		if err := checkCall(line); err != nil {
			return nil, nil, err
		}
		body, d2, err := hs.post("tools/call", name, string(s.call(name, "{}")))
		if err != nil {
			return nil, nil, err
		}
		if err := checkCall(body); err != nil {
			return nil, nil, fmt.Errorf("over HTTP: %w", err)
		}
		if i >= c.warm {
			stdio, overHTTP = append(stdio, d1), append(overHTTP, d2)
		}
	}
	ss, hc := newStats(stdio), newStats(overHTTP)
	ratio := float64(hc.median()) / float64(ss.median())
	callRow := timeRow("HTTP tools/call trivial (warm serve-http, static key)", hc, 0)
	callRow.target, callRow.ratio, callRow.verdict = "≤ 1.1× stdio", fmt.Sprintf("%.2f×", ratio), verdict(ratio <= 1.1)

	// Throughput: httpClients agents' worth of keep-alive connections, each
	// listing the first page as fast as it is answered.
	list := string(s.list(""))
	per := max(c.lists/httpClients, 1)
	lat := make([][]time.Duration, httpClients)
	errs := make(chan error, httpClients)
	var wg sync.WaitGroup
	t0 := time.Now()
	for g := range httpClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				body, d, err := hs.post("tools/list", "", list)
				if err == nil {
					_, err = decode(body)
				}
				if err != nil {
					errs <- err
					return
				}
				lat[g] = append(lat[g], d)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(t0)
	close(errs)
	if err := <-errs; err != nil {
		return nil, nil, fmt.Errorf("tools/list over HTTP: %w", err)
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	rate := float64(len(all)) / elapsed.Seconds()
	listRow := timeRow(fmt.Sprintf("HTTP tools/list, %d clients at once (small home)", httpClients), newStats(all), 0)
	listRow.target, listRow.ratio, listRow.verdict = "≥ 1,000/s", fmt.Sprintf("%.0f/s", rate), verdict(rate >= 1000)

	rows := []row{callRow, timeRow("   stdio tools/call trivial (same loop)", ss, 0), listRow}
	notes := []string{fmt.Sprintf("HTTP tools/call overhead over stdio: %s per call (median difference), bearer authentication and audit included; %d list requests in %s",
		ms(hc.median()-ss.median()), len(all), elapsed.Round(time.Millisecond))}
	return rows, notes, nil
}

// setHTTPPolicy serves the draft profile's endpoint on stdio and http.
func (h *smallHome) setHTTPPolicy() error {
	f := filepath.Join(h.pkgs, "..", "profile.json")
	out, err := h.rukh("policy", "show")
	if err != nil {
		return err
	}
	var p map[string]any
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		return fmt.Errorf("policy show: %v", err)
	}
	ep := p["endpoints"].(map[string]any)["local"].(map[string]any)
	ep["transports"] = []string{"stdio", "http"}
	b, _ := json.Marshal(p)
	if err := os.WriteFile(f, b, 0o644); err != nil {
		return err
	}
	_, err = h.rukh("policy", "set", f)
	return err
}

// httpServer is one running `rukh serve-http` on a loopback port.
type httpServer struct {
	cmd    *exec.Cmd
	url    string
	token  string
	client *http.Client
	stderr *lockedBuffer
}

var listeningRE = regexp.MustCompile(`listening on (http://\S+)`)

func (h *home) startHTTP() (*httpServer, error) {
	cmd := exec.Command(h.c.rukh, "serve-http", "--listen", "127.0.0.1:0", "--rate", "0")
	cmd.Env = h.env()
	cmd.Dir = h.dir
	pr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &httpServer{cmd: cmd, stderr: &lockedBuffer{},
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: httpClients * 2}}}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			s.stderr.Write(append(sc.Bytes(), '\n'))
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case base := <-found:
		s.url = base + "/mcp/v1/bench/local"
		return s, nil
	case <-time.After(10 * time.Second):
		s.close()
		return nil, fmt.Errorf("serve-http did not start: %s", s.stderr.String())
	}
}

// post sends one modern request line and returns the JSON response body
// and the time from just before the request to the end of the body.
func (s *httpServer) post(method, tool, line string) ([]byte, time.Duration, error) {
	r, _ := http.NewRequest("POST", s.url, strings.NewReader(strings.TrimSuffix(line, "\n")))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Method", method)
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	if tool != "" {
		r.Header.Set("Mcp-Name", tool)
	}
	r.Header.Set("Authorization", "Bearer "+s.token)
	t := time.Now()
	res, err := s.client.Do(r)
	if err != nil {
		return nil, 0, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	d := time.Since(t)
	if err != nil {
		return nil, 0, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("HTTP %d: %.300s (stderr: %s)", res.StatusCode, body, s.stderr.String())
	}
	return body, d, nil
}

// close stops serve-http (SIGINT drains) and waits for it.
func (s *httpServer) close() {
	s.cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}
