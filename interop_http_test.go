package main

// End-to-end MCP over Streamable HTTP: the real rukh binary's serve-http,
// driven by the go-sdk and mcp-go HTTP clients through the same checks as
// stdio (exercise: every page, calls, errors, rejections, cancel with the
// child gone afterwards), plus raw requests for the wire rules (status
// codes, header checks, Host and Origin, limits) and the CLI ≡ stdio ≡
// HTTP equivalence.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// newHTTPHome is newInteropHome with the endpoint also served over HTTP,
// anonymously on loopback.
func newHTTPHome(t *testing.T, bin, fixture, name string) string {
	t.Helper()
	dir := t.TempDir()
	pkg := copyInteropFixture(t, fixture, dir)
	home := filepath.Join(dir, "home")
	profile := filepath.Join(dir, "profile.json")
	p := fmt.Sprintf(`{"endpoints":{"local":{"namespace":%q,"transports":["stdio","http"],"httpAuth":"none","publish":{"packages":[%q]}}}}`, interopNamespace, name)
	if err := os.WriteFile(profile, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRukh(t, bin, home, "install", "--allow-unsigned", pkg)
	mustRukh(t, bin, home, "activate", name)
	mustRukh(t, bin, home, "policy", "set", profile)
	mustRukh(t, bin, home, "publish")
	return home
}

var listeningRE = regexp.MustCompile(`listening on (https?://\S+)`)

// startHTTP runs serve-http on a free loopback port and returns the
// interop endpoint's URL; the server is stopped (SIGINT, drained) at cleanup.
func startHTTP(t *testing.T, bin, home string, args ...string) (url string, stderr *lockedBuffer) {
	t.Helper()
	base, stderr := startHTTPServer(t, bin, home, args...)
	return base + "/mcp/v1/" + interopNamespace + "/local", stderr
}

// startHTTPServer runs serve-http on a free loopback port and returns its
// base URL (http://127.0.0.1:PORT).
func startHTTPServer(t *testing.T, bin, home string, args ...string) (base string, stderr *lockedBuffer) {
	t.Helper()
	base, _, stderr = startServeHTTP(t, bin, rukhEnv(home), filepath.Dir(home), args...)
	return base, stderr
}

// startServeHTTP runs serve-http with env in dir on a free loopback port
// (unless args hold a --listen);
// it is stopped (SIGINT, drained) at cleanup unless the test killed it.
func startServeHTTP(t *testing.T, bin string, env []string, dir string, args ...string) (base string, cmd *exec.Cmd, stderr *lockedBuffer) {
	t.Helper()
	if !slices.Contains(args, "--listen") {
		args = append([]string{"--listen", "127.0.0.1:0"}, args...)
	}
	cmd = exec.Command(bin, append([]string{"serve-http"}, args...)...)
	cmd.Env, cmd.Dir = env, dir
	stderr = &lockedBuffer{}
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			stderr.Write(append(sc.Bytes(), '\n'))
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			t.Errorf("serve-http did not stop on SIGINT\n%s", stderr.String())
		}
		pw.Close()
		if t.Failed() {
			t.Logf("serve-http (%s) stderr:\n%s", dir, stderr.String())
		}
	})
	select {
	case base = <-found:
		return base, cmd, stderr
	case <-time.After(time.Minute):
		t.Fatalf("serve-http did not start:\n%s", stderr.String())
	}
	return "", nil, nil
}

func TestInteropHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: Go MCP client libraries over HTTP")
	}
	bin := buildRukh(t)
	home := newHTTPHome(t, bin, "testdata/interop/pkg", "interop.fake")
	want := expectedTools(t, bin, home)
	url, _ := startHTTP(t, bin, home, "--rate", "0")

	for _, v := range []string{"2026-07-28", "2025-11-25", "2025-06-18"} {
		t.Run("go-sdk/"+v, func(t *testing.T) {
			exercise(t, newGoSDKHTTPClient(t, url, v), want)
		})
	}
	// mcp-go 1.2.1 speaks 2026-07-28 over Streamable HTTP too (server/discover,
	// the standard headers), and 2025-06-18 with initialize.
	for _, v := range []string{"2026-07-28", "2025-06-18"} {
		t.Run("mcp-go/"+v, func(t *testing.T) {
			exercise(t, newMCPGoHTTPClient(t, url, v), want)
		})
	}
	t.Run("wire", func(t *testing.T) { httpWire(t, url, toolByID(t, want, "interop.progress")) })
}

func newGoSDKHTTPClient(t *testing.T, url, version string) client {
	return newGoSDKHTTPClientAs(t, url, version, "")
}

// bearerTransport adds an agent's token to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// newGoSDKHTTPClientAs is newGoSDKHTTPClient with a bearer token ("" for
// none).
func newGoSDKHTTPClientAs(t *testing.T, url, version, token string) client {
	wire := &lockedBuffer{}
	st := &mcp.StreamableClientTransport{Endpoint: url}
	if token != "" {
		st.HTTPClient = &http.Client{Transport: bearerTransport{token}}
	}
	tr := &mcp.LoggingTransport{Transport: st, Writer: wire}
	c := mcp.NewClient(&mcp.Implementation{Name: "rukh-interop", Version: "0.0.1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("wire:\n%s", truncate(wire.String(), 20000))
		}
	})
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Errorf("negotiated %q, want %q", got, version)
	}
	return &goSDKClient{t: t, cs: cs, wire: wire, ver: version}
}

func newMCPGoHTTPClient(t *testing.T, url, version string) client {
	tr, err := transport.NewStreamableHTTP(url)
	if err != nil {
		t.Fatal(err)
	}
	c := mcpclient.NewClient(tr, mcpclient.WithProtocolVersion(version))
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := mcpgo.InitializeRequest{}
	req.Params.ProtocolVersion = version
	req.Params.ClientInfo = mcpgo.Implementation{Name: "rukh-interop", Version: "0.0.1"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if res.ProtocolVersion != version {
		t.Errorf("negotiated %q, want %q", res.ProtocolVersion, version)
	}
	return &mcpGoClient{c: c}
}

const httpMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// httpWire checks the status codes and header rules one raw request at a
// time.
func httpWire(t *testing.T, url, progressTool string) {
	type req struct {
		name    string
		method  string
		headers map[string]string
		body    string
		status  int
		want    string // in the body
	}
	modern := func(method string) map[string]string {
		return map[string]string{"Mcp-Method": method, "MCP-Protocol-Version": "2026-07-28"}
	}
	list := `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{` + httpMeta + `}}`
	tests := []req{
		{"discover", "POST", modern("server/discover"), `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + httpMeta + `}}`, 200, `"supportedVersions":["2026-07-28"]`},
		{"list", "POST", modern("tools/list"), list, 200, `"nextCursor"`},
		{"missing meta first", "POST", modern("tools/list"), `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, 400, `"id":2,"error":{"code":-32602`},
		{"method header mismatch", "POST", modern("TOOLS/LIST"), list, 400, `"id":7,"error":{"code":-32020`},
		{"no method header", "POST", map[string]string{"MCP-Protocol-Version": "2026-07-28"}, list, 400, `-32020`},
		{"version header mismatch", "POST", map[string]string{"Mcp-Method": "tools/list", "MCP-Protocol-Version": "2026-08-01"}, list, 400, `-32020`},
		{"name header mismatch", "POST", map[string]string{"Mcp-Method": "tools/call", "MCP-Protocol-Version": "2026-07-28", "Mcp-Name": "other"},
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x",` + httpMeta + `}}`, 400, `-32020`},
		{"unsupported version", "POST", map[string]string{"Mcp-Method": "tools/list", "MCP-Protocol-Version": "v9"},
			`{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v9","io.modelcontextprotocol/clientCapabilities":{}}}}`, 400, `"code":-32022`},
		{"removed method", "POST", modern("ping"), `{"jsonrpc":"2.0","id":5,"method":"ping","params":{` + httpMeta + `}}`, 404, `-32601`},
		{"unknown tool", "POST", map[string]string{"Mcp-Method": "tools/call", "MCP-Protocol-Version": "2026-07-28", "Mcp-Name": "nope"},
			`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope",` + httpMeta + `}}`, 400, `list tools again`},
		{"legacy initialize", "POST", nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`, 200, `"protocolVersion":"2025-11-25"`},
		{"legacy error is 200", "POST", map[string]string{"MCP-Protocol-Version": "2025-11-25"}, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"nope"}}`, 200, `"error":{"code":-32602`},
		{"legacy notification", "POST", map[string]string{"MCP-Protocol-Version": "2025-11-25"}, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 202, ``},
		{"parse error", "POST", nil, `{"jsonrpc":`, 400, `"id":null,"error":{"code":-32700`},
		{"duplicate key", "POST", nil, `{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"ping"}`, 400, `-32700`},
		{"batch", "POST", nil, `[` + list + `]`, 400, `-32600`},
		{"GET", "GET", nil, ``, 405, ``},
		{"DELETE", "DELETE", nil, ``, 405, ``},
		{"wrong content type", "POST", map[string]string{"Content-Type": "text/plain"}, list, 415, ``},
		{"bad Origin", "POST", map[string]string{"Origin": "http://evil.example.com"}, list, 403, ``},
		{"rebinding Host", "POST", map[string]string{"Host": "evil.example.com"}, list, 403, ``},
		{"oversize body", "POST", modern("tools/list"), `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{` + httpMeta + `,"x":"` + strings.Repeat("a", 1<<20) + `"}}`, 413, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := http.NewRequest(tt.method, url, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tt.headers {
				if k == "Host" {
					r.Host = v
					continue
				}
				r.Header.Set(k, v)
			}
			res, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != tt.status || !bytes.Contains(body, []byte(tt.want)) {
				t.Errorf("%s: %d %s, want %d with %s", tt.name, res.StatusCode, body, tt.status, tt.want)
			}
			if res.StatusCode == 405 && res.Header.Get("Allow") != "POST" {
				t.Errorf("405 without Allow: POST")
			}
			if res.Header.Get("Mcp-Session-Id") != "" {
				t.Errorf("a session id was minted")
			}
		})
	}
	t.Run("unknown path", func(t *testing.T) {
		res, err := http.Post(strings.TrimSuffix(url, "/local")+"/other", "application/json", strings.NewReader(list))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 404 {
			t.Errorf("unknown endpoint: %d, want 404", res.StatusCode)
		}
	})
	t.Run("progress streams", func(t *testing.T) {
		// A call with a progressToken is answered on an event stream:
		// progress, then the response.
		name := progressTool
		h := map[string]string{"Mcp-Method": "tools/call", "MCP-Protocol-Version": "2026-07-28", "Mcp-Name": name}
		call := `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"` + name + `","arguments":{},"_meta":{"progressToken":"p1","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		out := string(post(t, url, h, call))
		if strings.Count(out, `"method":"notifications/progress"`) != 3 || !strings.HasSuffix(strings.TrimSpace(out), `}}`) ||
			strings.Index(out, `"id":11`) < strings.LastIndex(out, `notifications/progress`) {
			t.Errorf("stream: %s", out)
		}
	})
}

func post(t *testing.T, url string, headers map[string]string, body string) []byte {
	t.Helper()
	r, _ := http.NewRequest("POST", url, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return out
}
