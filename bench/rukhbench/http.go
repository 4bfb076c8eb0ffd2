//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"
)

// httpClients is how many agents list at once in the throughput row.
const httpClients = 16

// callClients are the numbers of agents that call at once in the HTTP
// calls/s rows, each over its own keep-alive connection, one call at a time.
var callClients = []int{inFlight, maxClients}

// maxClients is the most calls any row makes at once.
const maxClients = 64

// benchHTTP: the target "HTTP tools/call ≤ 1.1× the stdio call; ≥ 1,000 list
// requests/s", and serve-http beside the peers' streamable HTTP servers. The
// bench profile serves its endpoint on http too; an agent's static key
// authenticates every request. Direct exec, stdio, HTTP (a client as lean as
// the stdio one), HTTP through Go's net/http client and each peer over HTTP
// (the same lean client) alternate in one loop, as in benchSmall; the 1.1×
// row is the like-for-like one. It returns serve-http's calls/s at inFlight
// clients (and the load then), which the in-flight rows compare with stdio.
func benchHTTP(c config, h *smallHome, peers []peer) ([]row, []string, callRate, error) {
	hs, err := h.startHTTP()
	if err != nil {
		return nil, nil, callRate{}, err
	}
	defer hs.close()

	s, err := h.start()
	if err != nil {
		return nil, nil, callRate{}, err
	}
	defer s.close()
	name, err := s.toolNamed("trivial_ping__")
	if err != nil {
		return nil, nil, callRate{}, err
	}
	wire, err := hs.dialWire()
	if err != nil {
		return nil, nil, callRate{}, err
	}
	defer wire.close()
	type httpPeer struct {
		p     peer
		hs    *httpServer
		wire  *wireClient
		calls []time.Duration
	}
	hp := make([]*httpPeer, len(peers))
	for i, p := range peers {
		ps, err := startPeerHTTP(p, c.trivial)
		if err != nil {
			return nil, nil, callRate{}, err
		}
		defer ps.close()
		w, err := ps.dialWire()
		if err != nil {
			return nil, nil, callRate{}, err
		}
		defer w.close()
		hp[i] = &httpPeer{p: p, hs: ps, wire: w}
	}
	var direct, stdio, overHTTP, overClient []time.Duration
	l0 := loadNow()
	for i := range c.warm + c.calls {
		d0, err := directExec(c.trivial, "trivial.ping")
		if err != nil {
			return nil, nil, callRate{}, err
		}
		line, d1, err := s.roundTrip(s.call(name, "{}"))
		if err != nil {
			return nil, nil, callRate{}, err
		}
		if err := checkCall(line); err != nil {
			return nil, nil, callRate{}, err
		}
		body, d2, err := wire.post("tools/call", name, string(s.call(name, "{}")))
		if err != nil {
			return nil, nil, callRate{}, err
		}
		if err := checkCall(body); err != nil {
			return nil, nil, callRate{}, fmt.Errorf("over HTTP: %w", err)
		}
		body, d3, err := hs.post("tools/call", name, string(s.call(name, "{}")))
		if err != nil {
			return nil, nil, callRate{}, err
		}
		if err := checkCall(body); err != nil {
			return nil, nil, callRate{}, fmt.Errorf("over HTTP (net/http client): %w", err)
		}
		var dp []time.Duration
		for _, p := range hp {
			body, d, err := p.wire.post("tools/call", "", peerCallLine)
			if err == nil {
				err = checkPeerCall(body)
			}
			if err != nil {
				return nil, nil, callRate{}, fmt.Errorf("%s peer over HTTP: %w", p.p.name, err)
			}
			dp = append(dp, d)
		}
		if i >= c.warm {
			direct, stdio, overHTTP, overClient = append(direct, d0), append(stdio, d1), append(overHTTP, d2), append(overClient, d3)
			for k, p := range hp {
				p.calls = append(p.calls, dp[k])
			}
		}
	}
	loop := loadSpan(l0, loadNow())
	ds, ss, hc, cc := newStats(direct), newStats(stdio), newStats(overHTTP), newStats(overClient)
	ratio := float64(hc.median()) / float64(ss.median())
	callRow := timeRow("HTTP tools/call trivial (warm serve-http, static key)", hc, 0)
	callRow.target, callRow.ratio, callRow.verdict = "≤ 1.1× stdio", fmt.Sprintf("%.2f×", ratio), verdict(ratio <= 1.1)
	clientRow := timeRow("   same over Go's net/http client (pool, goroutines)", cc, 0)
	clientRow.ratio = fmt.Sprintf("%.2f×", float64(cc.median())/float64(ss.median()))
	byDirect := func(st stats) string { return fmt.Sprintf("%.2f×", float64(st.median())/float64(ds.median())) }
	direcRow := timeRow("HTTP tools/call ÷ direct exec (rukh serve-http)", hc, 0)
	direcRow.ratio = byDirect(hc)
	var peerRows []row
	best := 0.0
	for _, p := range hp {
		ps := newStats(p.calls)
		r := timeRow("   "+p.p.name+" peer over streamable HTTP, same tool", ps, 0)
		r.ratio = byDirect(ps)
		peerRows = append(peerRows, r)
		if q := float64(ps.median()) / float64(ds.median()); best == 0 || q < best {
			best = q
		}
	}
	if best > 0 {
		q := float64(hc.median()) / float64(ds.median())
		direcRow.target, direcRow.verdict = fmt.Sprintf("≤ better peer (%.2f×)", best), verdict(q <= best)
	}
	callRows := append([]row{callRow, timeRow("   stdio tools/call trivial (same loop)", ss, 0), clientRow, direcRow}, peerRows...)
	callRows = setLoad(append(callRows, timeRow("   direct exec, same program (same loop)", ds, 0)), loop)

	// Throughput: httpClients agents' worth of keep-alive connections, each
	// listing the first page as fast as it is answered.
	list := string(s.list(""))
	per := max(c.lists/httpClients, 1)
	lat := make([][]time.Duration, httpClients)
	errs := make(chan error, httpClients)
	var wg sync.WaitGroup
	l1 := loadNow()
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
		return nil, nil, callRate{}, fmt.Errorf("tools/list over HTTP: %w", err)
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	rate := float64(len(all)) / elapsed.Seconds()
	listRow := timeRow(fmt.Sprintf("HTTP tools/list, %d clients at once (small home)", httpClients), newStats(all), 0)
	listRow.target, listRow.ratio, listRow.verdict = "≥ 1,000/s", fmt.Sprintf("%.0f/s", rate), verdict(rate >= 1000)
	listRow.load = loadSpan(l1, loadNow())

	// Calls/s with k agents calling at once: rukh, then each peer, for
	// each k.
	rows := append(callRows, listRow)
	var rate16 callRate
	callLine := string(s.call(name, "{}"))
	for _, k := range callClients {
		n := max(c.calls*2, 4*k)
		l := loadNow()
		rukhRate, err := httpCallRate(hs, k, n, func(w *wireClient) error {
			body, _, err := w.post("tools/call", name, callLine)
			if err == nil {
				err = checkCall(body)
			}
			return err
		})
		if err != nil {
			return nil, nil, callRate{}, fmt.Errorf("HTTP calls, %d clients: %w", k, err)
		}
		r := row{name: fmt.Sprintf("HTTP calls/s, %d clients at once (rukh serve-http)", k), n: n, median: fmt.Sprintf("%.0f/s", rukhRate)}
		var prs []row
		bestRate := 0.0
		for _, p := range hp {
			pr, err := httpCallRate(p.hs, k, n, func(w *wireClient) error {
				body, _, err := w.post("tools/call", "", peerCallLine)
				if err == nil {
					err = checkPeerCall(body)
				}
				return err
			})
			if err != nil {
				return nil, nil, callRate{}, fmt.Errorf("%s peer, HTTP calls, %d clients: %w", p.p.name, k, err)
			}
			prs = append(prs, row{name: fmt.Sprintf("   %s peer, same tool, calls/s", p.p.name), n: n, median: fmt.Sprintf("%.0f/s", pr)})
			bestRate = max(bestRate, pr)
		}
		if bestRate > 0 {
			r.target, r.ratio, r.verdict = "≥ better peer", fmt.Sprintf("%.2f×", rukhRate/bestRate), verdict(rukhRate >= bestRate)
		}
		rows = append(rows, stamp(append([]row{r}, prs...), l)...)
		if k == inFlight {
			rate16 = callRate{rukhRate, rows[len(rows)-1].load}
		}
	}
	notes := []string{fmt.Sprintf("HTTP tools/call overhead over stdio: %s per call (median difference), bearer authentication and audit included; %d list requests in %s",
		ms(hc.median()-ss.median()), len(all), elapsed.Round(time.Millisecond))}
	return rows, notes, rate16, nil
}

// callRate is a measured calls/s and the load it was measured at.
type callRate struct {
	rate float64
	load string
}

// httpCallRate runs about n calls over k connections at once, each making
// its calls one after another, and returns the rate. Every connection makes
// one untimed call first.
func httpCallRate(hs *httpServer, k, n int, call func(*wireClient) error) (float64, error) {
	per := max(n/k, 1)
	ws := make([]*wireClient, k)
	for i := range ws {
		w, err := hs.dialWire()
		if err != nil {
			return 0, err
		}
		defer w.close()
		ws[i] = w
	}
	errs := make(chan error, k)
	run := func(m int) time.Duration {
		var wg sync.WaitGroup
		t0 := time.Now()
		for _, w := range ws {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range m {
					if err := call(w); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		return time.Since(t0)
	}
	run(1)
	d := run(per)
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	return float64(per*k) / d.Seconds(), nil
}

// httpServer is one running `rukh serve-http` on a loopback port.
type httpServer struct {
	cmd    *exec.Cmd
	url    string
	token  string
	client *http.Client
	stderr *lockedBuffer
	// protocol is a peer's legacy protocol version; "": rukh (modern
	// requests, the agent's key).
	protocol string
}

var listeningRE = regexp.MustCompile(`listening on (http://\S+)`)

// startHTTP adds an agent and starts serve-http with its static key.
func (h *home) startHTTP() (*httpServer, error) {
	name := fmt.Sprintf("bench-%d", time.Now().UnixNano()%1e9)
	out, err := h.rukh("agent", "add", name, "--endpoint", "local", "--json")
	if err != nil {
		return nil, err
	}
	var key struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(out), &key); err != nil || key.Token == "" {
		return nil, fmt.Errorf("agent add printed no token: %v", err)
	}
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
	s := &httpServer{cmd: cmd, token: key.Token, stderr: &lockedBuffer{},
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * memoryClients[len(memoryClients)-1]}}}
	if err := s.waitListening(pr, "/mcp/v1/bench/local", "serve-http"); err != nil {
		return nil, err
	}
	return s, nil
}

// waitListening reads what the server writes to stderr into s.stderr and
// waits for its "listening on URL" line; s.url is URL plus path.
func (s *httpServer) waitListening(pr io.Reader, path, what string) error {
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
		s.url = base + path
		return nil
	case <-time.After(10 * time.Second):
		s.close()
		return fmt.Errorf("%s did not start: %s", what, s.stderr.String())
	}
}

// request is one modern request line as the bench's clients post it.
func (s *httpServer) request(method, tool, line string) *http.Request {
	r, _ := http.NewRequest("POST", s.url, strings.NewReader(strings.TrimSuffix(line, "\n")))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if s.protocol != "" {
		r.Header.Set("MCP-Protocol-Version", s.protocol)
		return r
	}
	r.Header.Set("Mcp-Method", method)
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	if tool != "" {
		r.Header.Set("Mcp-Name", tool)
	}
	r.Header.Set("Authorization", "Bearer "+s.token)
	return r
}

// post sends one modern request line and returns the JSON response body
// and the time from just before the request to the end of the body.
func (s *httpServer) post(method, tool, line string) ([]byte, time.Duration, error) {
	r := s.request(method, tool, line)
	t := time.Now()
	res, err := s.client.Do(r)
	if err != nil {
		return nil, 0, err
	}
	return s.body(res, t)
}

// body reads a response that must be a 200, and the time since t.
func (s *httpServer) body(res *http.Response, t time.Time) ([]byte, time.Duration, error) {
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

// wireClient is the HTTP twin of the stdio rows' client, which writes a
// line to a pipe and reads one back: one keep-alive connection, each
// request written whole by net/http's request writer and each response
// read by its parser, with no connection pool or goroutines in between.
// The call ratio compares like with like: what serve-http adds to a call
// over what serve-mcp adds.
type wireClient struct {
	s    *httpServer
	conn net.Conn
	bw   *bufio.Writer
	br   *bufio.Reader
}

func (s *httpServer) dialWire() (*wireClient, error) {
	u, err := neturl.Parse(s.url)
	if err != nil {
		return nil, err
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		return nil, err
	}
	return &wireClient{s: s, conn: conn, bw: bufio.NewWriter(conn), br: bufio.NewReader(conn)}, nil
}

// post is httpServer.post over the one connection.
func (w *wireClient) post(method, tool, line string) ([]byte, time.Duration, error) {
	r := w.s.request(method, tool, line)
	t := time.Now()
	if err := r.Write(w.bw); err != nil {
		return nil, 0, err
	}
	if err := w.bw.Flush(); err != nil {
		return nil, 0, err
	}
	res, err := http.ReadResponse(w.br, r)
	if err != nil {
		return nil, 0, err
	}
	return w.s.body(res, t)
}

func (w *wireClient) close() { w.conn.Close() }

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

// memoryClients are the agents at once of the serve-http memory rows.
var memoryClients = []int{16, 64}

// benchHTTPMemory: the target "serve-http peak RSS ≤ 20 MiB at 100,000 tools,
// flat in tool count": k agents' connections each walk every page of the
// large home, then the server's VmHWM is read; a fresh server for each k.
func benchHTTPMemory(c config, h *largeHome) ([]row, []string, error) {
	var rows []row
	var notes []string
	want := c.packages * c.commands
	for _, k := range memoryClients {
		hwm, err := httpPeak(h.home, k, func(hs *httpServer) error {
			tools, cursor, id := 0, "", 0
			for {
				id++
				params := ""
				if cursor != "" {
					b, _ := json.Marshal(cursor)
					params = `,"cursor":` + string(b)
				}
				line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{%s%s}}`, id, modernMeta, params)
				body, _, err := hs.post("tools/list", "", line)
				if err != nil {
					return err
				}
				r, err := decode(body)
				if err != nil {
					return err
				}
				tools += len(r.Result.Tools)
				if cursor = r.Result.NextCursor; cursor == "" {
					break
				}
			}
			if tools != want {
				return fmt.Errorf("a full listing over HTTP has %d tools, want %d", tools, want)
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		rows = append(rows, peakRow(fmt.Sprintf("serve-http peak RSS (VmHWM), %d tools, %d clients", want, k), hwm))
		notes = append(notes, fmt.Sprintf("serve-http after %d full listings at once over HTTP: VmHWM %d kB", k, hwm))
	}
	return rows, notes, nil
}

// benchHTTPSmallMemory: the same target on the 1-tool home, with k agents
// at once each listing, then calling the trivial tool 20 times.
func benchHTTPSmallMemory(h *smallHome) ([]row, error) {
	var rows []row
	for _, k := range memoryClients {
		hwm, err := httpPeak(h.home, k, func(hs *httpServer) error {
			body, _, err := hs.post("tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+modernMeta+`}}`)
			if err != nil {
				return err
			}
			r, err := decode(body)
			if err != nil {
				return err
			}
			name := ""
			for _, t := range r.Result.Tools {
				if strings.HasPrefix(t.Name, "trivial_ping__") {
					name = t.Name
				}
			}
			if name == "" {
				return fmt.Errorf("tools/list over HTTP has no trivial_ping tool")
			}
			n, _ := json.Marshal(name)
			line := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{` + modernMeta + `,"name":` + string(n) + `,"arguments":{}}}`
			for range 20 {
				body, _, err := hs.post("tools/call", name, line)
				if err == nil {
					err = checkCall(body)
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		rows = append(rows, peakRow(fmt.Sprintf("serve-http peak RSS (VmHWM), 1-tool home, %d clients (list + 20 calls each)", k), hwm))
	}
	return rows, nil
}

// httpPeak starts serve-http on h, runs agent k times at once, and returns
// the server's VmHWM in kB.
func httpPeak(h *home, k int, agent func(*httpServer) error) (int64, error) {
	hs, err := h.startHTTP()
	if err != nil {
		return 0, err
	}
	defer hs.close()
	errs := make(chan error, k)
	var wg sync.WaitGroup
	for range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := agent(hs); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	return procStatus(hs.cmd.Process.Pid, "VmHWM")
}

func peakRow(name string, hwmKB int64) row {
	const limit = 20 << 20
	peak := hwmKB << 10
	return row{name: name, n: 1, median: fmt.Sprintf("%.1f MiB", float64(peak)/(1<<20)), target: "≤ 20 MiB",
		ratio: fmt.Sprintf("%.2f×", float64(peak)/limit), verdict: verdict(peak <= limit)}
}
