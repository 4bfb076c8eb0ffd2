package mcphttp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rukh-dev/rukh/kernel"
)

// budget bounds a wait the test does not measure: far above any bound the
// server applies in these tests, far below "forever".
const budget = 20 * time.Second

// rawExchange writes a request as it is on a fresh connection and returns
// the response (nil if the connection ended without one) and, if
// waitClose, whether the server closed the connection afterwards.
func rawExchange(t *testing.T, addr, req string, waitClose bool) (res *http.Response, body string, closed bool) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(budget))
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	res, err = http.ReadResponse(br, nil)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("no answer within %v", budget)
			return nil, "", false
		}
		return nil, "", true // closed without an answer
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !waitClose {
		return res, string(b), false
	}
	_, err = br.ReadByte()
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return res, string(b), false
	}
	return res, string(b), err != nil
}

const modernCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"std","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`

// head is a modern tools/call's request line and headers, before the
// blank line; extra headers are appended as given.
func head(host, path string, extra ...string) string {
	h := "POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\n" +
		"Accept: application/json, text/event-stream\r\nMcp-Method: tools/call\r\nMcp-Name: std\r\nMCP-Protocol-Version: 2026-07-28\r\n"
	for _, e := range extra {
		h += e + "\r\n"
	}
	return h
}

// TestHostileRequests: requests meant to hold a connection or to get past
// the checks in the order they are made. Every one is answered from its
// headers, or its connection is closed, well within the budget; nothing
// runs.
func TestHostileRequests(t *testing.T) {
	c := &creds{byTk: map[string]kernel.Credential{
		"key": {Agent: "a", Endpoint: "e", Kind: kernel.CredentialStatic, Hash: kernel.TokenHash{1}},
	}}
	for _, tc := range []struct {
		name string
		// bodyTimeout is the server's bound on reading a body: long where
		// the answer must not wait for it, short where it is what ends
		// the request.
		bodyTimeout time.Duration
		req         func(host string) string
		status      int // 0: the connection is closed without an answer
		body        string
		closed      bool // the server closes the connection after answering
	}{
		{"slow body, no credentials", time.Hour, func(h string) string {
			return head(h, "/mcp/v1/ns/e", "Content-Length: 300") + "\r\n{"
		}, 401, "unauthorized", true},
		{"slow body, a bad token", time.Hour, func(h string) string {
			return head(h, "/mcp/v1/ns/e", "Content-Length: 300", "Authorization: Bearer nope") + "\r\n{"
		}, 401, "unauthorized", true},
		{"slow chunked body, no credentials", time.Hour, func(h string) string {
			return head(h, "/mcp/v1/ns/e", "Transfer-Encoding: chunked") + "\r\n1\r\n{\r\n"
		}, 401, "unauthorized", true},
		{"slow body, good credentials", 200 * time.Millisecond, func(h string) string {
			return head(h, "/mcp/v1/ns/e", "Content-Length: 300", "Authorization: Bearer key") + "\r\n{"
		}, 408, "request timeout", true},
		{"declared length over 1 MiB, body withheld", time.Hour, func(h string) string {
			return head(h, "/mcp/v1/ns/e", fmt.Sprintf("Content-Length: %d", 1<<20+1), "Authorization: Bearer key") + "\r\n"
		}, 413, "at most 1 MiB", true},
		{"empty body", time.Hour, func(h string) string {
			return head(h, "/mcp/v1/ns/e", "Content-Length: 0", "Authorization: Bearer key") + "\r\n"
		}, 400, `"code":-32700`, false},
		{"blank body", time.Hour, func(h string) string {
			return head(h, "/mcp/v1/ns/e", "Content-Length: 2", "Authorization: Bearer key") + "\r\n \n"
		}, 400, `"code":-32700`, false},
		{"two Origins, the second foreign", time.Hour, func(h string) string {
			return head(h, "/mcp/v1/ns/e", "Origin: http://"+h, "Origin: http://evil.example", "Authorization: Bearer key",
				fmt.Sprintf("Content-Length: %d", len(modernCall))) + "\r\n" + modernCall
		}, 403, "Origin", false},
		{"two Origins, both its own", time.Hour, func(h string) string {
			return head(h, "/mcp/v1/ns/e", "Origin: http://"+h, "Origin: http://"+h, "Authorization: Bearer key",
				fmt.Sprintf("Content-Length: %d", len(modernCall))) + "\r\n" + modernCall
		}, 403, "Origin", false},
		{"two Origins in one header", time.Hour, func(h string) string {
			return head(h, "/mcp/v1/ns/e", "Origin: http://"+h+", http://evil.example", "Authorization: Bearer key",
				fmt.Sprintf("Content-Length: %d", len(modernCall))) + "\r\n" + modernCall
		}, 403, "Origin", false},
		{"gzip body", time.Hour, func(h string) string {
			return head(h, "/mcp/v1/ns/e", "Content-Encoding: gzip", "Authorization: Bearer key",
				fmt.Sprintf("Content-Length: %d", len(modernCall))) + "\r\n" + modernCall
		}, 415, "Content-Encoding", false},
		{"deflate, identity body", time.Hour, func(h string) string {
			return head(h, "/mcp/v1/ns/e", "Content-Encoding: identity, deflate", "Authorization: Bearer key",
				fmt.Sprintf("Content-Length: %d", len(modernCall))) + "\r\n" + modernCall
		}, 415, "Content-Encoding", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := &countingInvoker{}
			u := newTestServerCfg(t, c, inv, nil, func(cfg *Config) { cfg.BodyTimeout = tc.bodyTimeout })
			pu, _ := url.Parse(u)
			res, body, closed := rawExchange(t, pu.Host, tc.req(pu.Host), tc.closed)
			switch {
			case tc.status == 0 && res != nil:
				t.Errorf("answered %d, want the connection closed: %s", res.StatusCode, body)
			case tc.status != 0 && res == nil:
				t.Errorf("no answer, want %d", tc.status)
			case res != nil && (res.StatusCode != tc.status || !strings.Contains(body, tc.body)):
				t.Errorf("%d %q, want %d and %q", res.StatusCode, body, tc.status, tc.body)
			}
			if tc.closed && !closed {
				t.Error("the connection stays open")
			}
			if n := inv.n.Load(); n != 0 {
				t.Errorf("%d call(s) ran", n)
			}
		})
	}
}

// TestOddPaths: a path that is not an endpoint's in its one clean form is
// not found (never redirected), and only once Host and Origin passed.
func TestOddPaths(t *testing.T) {
	c := &creds{byTk: map[string]kernel.Credential{
		"key": {Agent: "a", Endpoint: "e", Kind: kernel.CredentialStatic, Hash: kernel.TokenHash{1}},
	}}
	inv := &countingInvoker{}
	u := newTestServer(t, c, inv)
	pu, _ := url.Parse(u)
	for _, p := range []string{"//mcp/v1/ns/e", "/mcp/v1/ns/../ns/e", "/mcp/v1/ns/./e", "/mcp/v1//ns/e", "/mcp/v1/ns/e/",
		"/mcp/v1/ns%2Fe", "/mcp/v1/n%73/e", "/mcp/v1/ns/e/..", "/./mcp/v1/ns/e", "/healthz/", "/mcp/v1/ns/e?x=/../"} {
		for _, tc := range []struct {
			what, host, origin string
			status             int
		}{
			{"", pu.Host, "", 404},
			{"a foreign Host", "evil.example", "", 403},
			{"a foreign Origin", pu.Host, "http://evil.example", 403},
		} {
			if strings.Contains(p, "?") && tc.status == 404 {
				tc.status = 200 // the query is not the path
			}
			extra := []string{"Authorization: Bearer key", fmt.Sprintf("Content-Length: %d", len(modernCall))}
			if tc.origin != "" {
				extra = append(extra, "Origin: "+tc.origin)
			}
			res, body, _ := rawExchange(t, pu.Host, head(tc.host, p, extra...)+"\r\n"+modernCall, false)
			if res == nil || res.StatusCode != tc.status {
				status := 0
				if res != nil {
					status = res.StatusCode
				}
				t.Errorf("%s %s: %d %q, want %d", p, tc.what, status, body, tc.status)
			}
		}
	}
	if n := inv.n.Load(); n != 1 {
		t.Errorf("%d call(s) ran, want 1 (the one with a query)", n)
	}
}

// TestCallerGoneBeforeStart: a call whose client closed its connection
// while the call waited to be started (here: for the store to spend its
// one-time token) starts nothing.
func TestCallerGoneBeforeStart(t *testing.T) {
	c := &creds{byTk: map[string]kernel.Credential{
		"otk": {Agent: "a", Endpoint: "e", Kind: kernel.CredentialOneTime, Hash: kernel.TokenHash{9}},
	}, consuming: make(chan chan struct{})}
	inv := &countingInvoker{}
	reqs := make(chan struct{}, 1)
	gone := make(chan struct{})
	served := make(chan struct{})
	u := newTestServerWrapped(t, c, inv, nil, nil, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// The handler's context is cancelled by our own cancel, which
			// returns only once every context derived from it (the
			// reply's) is cancelled too; gone closes after that, so the
			// test never races the propagation through the contexts.
			ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
			stop := context.AfterFunc(r.Context(), func() { cancel(); close(gone) })
			defer stop()
			defer cancel()
			reqs <- struct{}{}
			h.ServeHTTP(w, r.WithContext(ctx))
			close(served)
		})
	})
	pu, _ := url.Parse(u)
	conn, err := net.Dial("tcp", pu.Host)
	if err != nil {
		t.Fatal(err)
	}
	call := strings.ReplaceAll(modernCall, `"std"`, `"strict"`)
	req := strings.ReplaceAll(head(pu.Host, "/mcp/v1/ns/e", "Authorization: Bearer otk", fmt.Sprintf("Content-Length: %d", len(call))), "Mcp-Name: std", "Mcp-Name: strict")
	if _, err := io.WriteString(conn, req+"\r\n"+call); err != nil {
		t.Fatal(err)
	}
	<-reqs
	var proceed chan struct{}
	select {
	case proceed = <-c.consuming:
	case <-time.After(budget):
		t.Fatal("the call never came to spend its token")
	}
	conn.Close()
	select {
	case <-gone:
	case <-time.After(budget):
		t.Fatal("the server did not notice the client left")
	}
	close(proceed)
	select {
	case <-served:
	case <-time.After(budget):
		t.Fatal("the request was never done with")
	}
	if n := inv.n.Load(); n != 0 {
		t.Errorf("%d call(s) started after their client left", n)
	}
}
