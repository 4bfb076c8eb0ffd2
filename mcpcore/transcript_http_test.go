package mcpcore_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/mcphttp"
	"github.com/rukh-dev/rukh/policy"
)

// serveHTTP is Serve's counterpart for the HTTP harness: it reads the
// client's lines from in and answers them on out until in ends (then every
// call is stopped unanswered, as at the end of stdin) or ctx does (the
// owner's stop: serve-http drains, then closes).
func serveHTTP(ctx context.Context, in io.Reader, out io.Writer, core mcpcore.Config) error {
	h := mcphttp.New(mcphttp.Config{
		Endpoints: []mcphttp.Endpoint{{Core: core, Namespace: "test-ns", HTTPAuth: policy.HTTPAuthNone}},
		Loopback:  true,
		Logf:      core.Logf,
	})
	c := &httpClient{h: h, out: out, url: "http://127.0.0.1" + mcphttp.PathPrefix + "test-ns/" + core.Endpoint, inflight: map[string]context.CancelFunc{}}
	c.ctx, c.gone = context.WithCancel(context.Background())
	eof := make(chan struct{})
	go func() {
		defer close(eof)
		r := bufio.NewReaderSize(in, 64<<10)
		for {
			line, err := r.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				c.post(line)
			}
			if err != nil {
				return
			}
		}
	}()
	var err error
	select {
	case <-eof:
	case <-ctx.Done():
		h.Drain()
		err = ctx.Err()
	}
	h.Close()
	c.gone() // the client hangs up what is still open
	c.wg.Wait()
	return err
}

// httpClient posts transcript lines the way an MCP client over HTTP would.
type httpClient struct {
	h   http.Handler
	out io.Writer
	url string
	ctx context.Context // the client's: its end hangs up every request
	// gone hangs up every request still open.
	gone context.CancelFunc
	wg   sync.WaitGroup

	mu       sync.Mutex
	legacy   string                        // the version a legacy initialize negotiated
	inflight map[string]context.CancelFunc // modern requests by id: cancelled by hanging up
}

// post sends one message and writes its response's messages to out.
func (c *httpClient) post(line []byte) {
	hdr, id, modern := c.headers(line)
	var msg struct {
		Method string `json:"method"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &msg) == nil && msg.Method == "notifications/cancelled" && msg.Params.RequestID != nil {
		c.mu.Lock()
		hangUp := c.inflight[string(msg.Params.RequestID)]
		c.mu.Unlock()
		if hangUp != nil {
			hangUp() // a modern request is cancelled by closing it
			return
		}
	}
	ctx, cancel := context.WithCancel(c.ctx)
	if modern && id != "" {
		c.mu.Lock()
		c.inflight[id] = cancel
		c.mu.Unlock()
	}
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(line))
	req.Header = hdr
	c.wg.Go(func() {
		defer cancel()
		c.h.ServeHTTP(&recorder{out: c.out, header: http.Header{}}, req)
		if modern && id != "" {
			c.mu.Lock()
			delete(c.inflight, id)
			c.mu.Unlock()
		}
	})
}

// headers are the request's headers, as a client following the same era
// rules as stdio's session would send them: initialize and ping without
// the modern _meta key are legacy, and so is every request without it
// after a legacy initialize but server/discover; anything else is modern
// and repeats its method, version and routed name in headers.
func (c *httpClient) headers(line []byte) (hdr http.Header, id string, modern bool) {
	hdr = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	var v map[string]any
	if json.Unmarshal(line, &v) != nil {
		return hdr, "", false
	}
	if raw, ok := v["id"]; ok {
		b, _ := json.Marshal(raw)
		id = string(b)
	}
	method, _ := v["method"].(string)
	params, _ := v["params"].(map[string]any)
	meta, _ := params["_meta"].(map[string]any)
	version, modern := meta["io.modelcontextprotocol/protocolVersion"]
	c.mu.Lock()
	legacy := c.legacy
	c.mu.Unlock()
	if !modern {
		switch {
		case method == "initialize":
			if pv, ok := params["protocolVersion"].(string); ok && id != "" {
				negotiated := mcpcore.LegacyVersion
				if pv == mcpcore.LegacyVersionPrevious {
					negotiated = pv
				}
				c.mu.Lock()
				c.legacy = negotiated
				c.mu.Unlock()
			}
			return hdr, id, false
		case method == "ping":
			return hdr, id, false
		case legacy != "" && method != "server/discover":
			hdr.Set("MCP-Protocol-Version", legacy)
			return hdr, id, false
		}
		version = mcpcore.ModernVersion // a modern client whose body lacks its _meta
	}
	vs, ok := version.(string)
	if !ok {
		vs = mcpcore.ModernVersion
	}
	hdr.Set("MCP-Protocol-Version", vs)
	hdr.Set("Mcp-Method", method)
	var name any
	switch method {
	case "tools/call":
		name = params["name"]
	case "tasks/get", "tasks/update", "tasks/cancel":
		name = params["taskId"]
	default:
		return hdr, id, true
	}
	ns, _ := name.(string)
	hdr.Set("Mcp-Name", encodeHeaderValue(ns))
	return hdr, id, true
}

// encodeHeaderValue is the =?base64?…?= form of a value that is not
// printable ASCII.
func encodeHeaderValue(v string) string {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
		}
	}
	return v
}

// recorder is one response as the harness's client reads it: each JSON
// body or event's data is one message on out; anything else (a refusal of
// the transport's own, in plain text) is written as it came, so it shows.
type recorder struct {
	out    io.Writer
	header http.Header
	status int
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	switch ct := r.header.Get("Content-Type"); {
	case ct == "application/json":
		r.message(p)
	case ct == "text/event-stream":
		for ev := range strings.SplitSeq(string(p), "\n\n") {
			if data, ok := strings.CutPrefix(ev, "event: message\ndata: "); ok {
				r.message([]byte(data))
			}
		}
	default:
		r.out.Write([]byte("#http " + http.StatusText(r.status) + ": " + strings.TrimSpace(string(p)) + "\n"))
	}
	return len(p), nil
}

func (r *recorder) message(p []byte) {
	if len(p) == 0 {
		return
	}
	if p[len(p)-1] != '\n' {
		p = append(p[:len(p):len(p)], '\n')
	}
	r.out.Write(p)
}

// FlushError lets http.ResponseController flush: the recorder keeps nothing.
func (r *recorder) FlushError() error { return nil }
