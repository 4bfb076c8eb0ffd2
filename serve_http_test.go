package main

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	stdjson "encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeHTTPOptions: the listener rules (plain HTTP only on loopback
// unless --insecure-http, where httpAuth none is not honoured; TLS with a
// certificate), the per-agent rate limit (429 with Retry-After) and the
// health endpoints, through the real binary.
func TestServeHTTPOptions(t *testing.T) {
	bin := buildRukh(t)
	home := newHTTPHome(t, bin, "testdata/interop/pkg", "interop.fake")
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + httpMeta + `}}`
	modern := map[string]string{"Mcp-Method": "tools/list", "MCP-Protocol-Version": "2026-07-28"}
	path := "/mcp/v1/" + interopNamespace + "/local"

	t.Run("plain HTTP off loopback is refused", func(t *testing.T) {
		_, errOut, code := runRukh(t, bin, home, "serve-http", "--listen", "0.0.0.0:0")
		if code != 1 || !strings.Contains(errOut, "refusing plain HTTP on the non-loopback address") || !strings.Contains(errOut, "rukh: hint: give --tls-cert and --tls-key") {
			t.Errorf("exit %d: %s", code, errOut)
		}
	})

	// A taken address is the owner's to fix (another --listen), not a
	// store to wait for: exit 1, never the "retry" code 4.
	t.Run("address in use", func(t *testing.T) {
		taken, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer taken.Close()
		addr := taken.Addr().String()
		for _, args := range [][]string{{"--listen", addr}, {"--listen", "127.0.0.1:0", "--metrics-listen", addr}} {
			_, errOut, code := runRukh(t, bin, home, append([]string{"serve-http"}, args...)...)
			if code != 1 || !strings.Contains(errOut, "rukh: error: cannot listen on "+addr+": the address is already in use\n") ||
				!strings.Contains(errOut, "rukh: hint: another process listens there: choose another address with --") {
				t.Errorf("%v: exit %d: %s", args, code, errOut)
			}
		}
		_, errOut, code := runRukh(t, bin, home, "serve-http", "--listen", "127.0.0.1")
		if code != 2 || !strings.Contains(errOut, "rukh: error: cannot listen on 127.0.0.1: ") {
			t.Errorf("an address without a port: exit %d: %s", code, errOut)
		}
	})

	t.Run("plain HTTP off loopback with --insecure-http", func(t *testing.T) {
		base, stderr := startHTTPServer(t, bin, home, "--listen", "0.0.0.0:0", "--insecure-http")
		_, port, err := net.SplitHostPort(strings.TrimPrefix(base, "http://"))
		if err != nil || strings.Contains(base, "127.0.0.1") {
			t.Fatalf("listening on %s:\n%s", base, stderr.String())
		}
		// It serves, but "httpAuth": "none" is not honoured off loopback.
		if body := post(t, "http://127.0.0.1:"+port+path, modern, list); !strings.HasPrefix(string(body), "unauthorized: send Authorization: Bearer") {
			t.Errorf("anonymous tools/list off loopback: %s", body)
		}
		if !strings.Contains(stderr.String(), `endpoint "local" has httpAuth none, which is honoured only on a loopback listener`) {
			t.Errorf("no warning about httpAuth none:\n%s", stderr.String())
		}
	})

	t.Run("rate limit", func(t *testing.T) {
		base, _ := startHTTPServer(t, bin, home, "--rate", "1", "--burst", "2")
		var statuses []int
		var retry string
		for range 4 {
			r, _ := http.NewRequest("POST", base+path, strings.NewReader(list))
			r.Header.Set("Content-Type", "application/json")
			for k, v := range modern {
				r.Header.Set(k, v)
			}
			res, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			statuses = append(statuses, res.StatusCode)
			if res.StatusCode == http.StatusTooManyRequests {
				retry = res.Header.Get("Retry-After")
			}
		}
		if statuses[0] != 200 || statuses[1] != 200 || statuses[3] != 429 || retry != "1" {
			t.Errorf("statuses %v, Retry-After %q; want the burst of 2 served, then 429 with Retry-After 1", statuses, retry)
		}
		for _, p := range []string{"/healthz", "/readyz"} {
			res, err := http.Get(base + p)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != 200 {
				t.Errorf("%s: %d", p, res.StatusCode)
			}
		}
	})

	t.Run("allow-host and allow-origin", func(t *testing.T) {
		plainBase, _ := startHTTPServer(t, bin, home)
		base, _ := startHTTPServer(t, bin, home, "--allow-host", "rukh.example.com", "--allow-origin", "https://app.example.com")
		do := func(base, host, origin string) (int, string) {
			r, _ := http.NewRequest("POST", base+path, strings.NewReader(list))
			r.Header.Set("Content-Type", "application/json")
			for k, v := range modern {
				r.Header.Set(k, v)
			}
			if host != "" {
				r.Host = host
			}
			if origin != "" {
				r.Header.Set("Origin", origin)
			}
			res, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			return res.StatusCode, string(b)
		}
		for _, tt := range []struct {
			name, base, host, origin string
			status                   int
			want                     string
		}{
			{"allowed Host", base, "rukh.example.com", "", 200, `"tools":[`},
			{"allowed Host with a port", base, "rukh.example.com:8443", "", 200, `"tools":[`},
			{"the same Host without --allow-host", plainBase, "rukh.example.com", "", 403, `Host "rukh.example.com" is not served here (serve-http --allow-host)`},
			{"another Host", base, "other.example.com", "", 403, `(serve-http --allow-host)`},
			{"allowed Origin", base, "", "https://app.example.com", 200, `"tools":[`},
			{"the same Origin without --allow-origin", plainBase, "", "https://app.example.com", 403, `Origin "https://app.example.com" is not allowed (serve-http --allow-origin)`},
			{"another Origin", base, "", "https://evil.example.com", 403, `(serve-http --allow-origin)`},
			{"an allowed Origin's other scheme", base, "", "http://app.example.com", 403, `--allow-origin`},
			{"the request's own Origin", base, "rukh.example.com", "https://rukh.example.com", 200, `"tools":[`},
		} {
			if status, body := do(tt.base, tt.host, tt.origin); status != tt.status || !strings.Contains(body, tt.want) {
				t.Errorf("%s: %d %s, want %d with %s", tt.name, status, body, tt.status, tt.want)
			}
		}
	})

	t.Run("TLS", func(t *testing.T) {
		cert, key, pool := selfSigned(t)
		_, errOut, code := runRukh(t, bin, home, "serve-http", "--listen", "127.0.0.1:0", "--tls-cert", cert)
		if code != 2 || !strings.Contains(errOut, "--tls-cert and --tls-key go together") {
			t.Errorf("a certificate without its key: exit %d: %s", code, errOut)
		}
		base, stderr := startHTTPServer(t, bin, home, "--tls-cert", cert, "--tls-key", key)
		if !strings.HasPrefix(base, "https://") {
			t.Fatalf("no https listener in:\n%s", stderr.String())
		}
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
		r, _ := http.NewRequest("POST", base+path, strings.NewReader(list))
		r.Header.Set("Content-Type", "application/json")
		for k, v := range modern {
			r.Header.Set(k, v)
		}
		res, err := c.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 || res.TLS == nil {
			t.Errorf("over TLS: %d", res.StatusCode)
		}
		// Plain HTTP to the TLS port gets no MCP answer.
		plain := "http://" + strings.TrimPrefix(base, "https://") + path
		if res, err := http.Post(plain, "application/json", strings.NewReader(list)); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				t.Error("plain HTTP was served on the TLS listener")
			}
		}
	})
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their paths and a pool that trusts the certificate.
func selfSigned(t *testing.T) (cert, key string, pool *x509.CertPool) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "rukh test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(c)
	return cert, key, pool
}

// TestServeHTTPDrain: SIGTERM drains: the call in flight finishes and is
// answered while new requests get 503, then serve-http exits 0.
func TestServeHTTPDrain(t *testing.T) {
	bin := buildRukh(t)
	home := newHTTPHome(t, bin, "testdata/drain/pkg", "drain.fake")
	cmd := exec.Command(bin, "serve-http", "--listen", "127.0.0.1:0")
	cmd.Env = rukhEnv(home)
	cmd.Dir = filepath.Dir(home)
	stderr := &lockedBuffer{}
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); pw.Close() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		if t.Failed() {
			t.Logf("serve-http stderr:\n%s", stderr.String())
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			stderr.Write(append(sc.Bytes(), '\n'))
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	var url string
	select {
	case base := <-found:
		url = base + "/mcp/v1/" + interopNamespace + "/local"
	case <-time.After(time.Minute):
		t.Fatal("serve-http did not start")
	}
	var listed struct {
		Result struct {
			Tools []struct{ Name string } `json:"tools"`
		} `json:"result"`
	}
	body := post(t, url, map[string]string{"Mcp-Method": "tools/list", "MCP-Protocol-Version": "2026-07-28"},
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+httpMeta+`}}`)
	if err := stdjson.Unmarshal(body, &listed); err != nil || len(listed.Result.Tools) != 1 {
		t.Fatalf("tools/list: %s", body)
	}
	tool := listed.Result.Tools[0].Name
	answered := make(chan []byte, 1)
	go func() {
		answered <- post(t, url, map[string]string{"Mcp-Method": "tools/call", "MCP-Protocol-Version": "2026-07-28", "Mcp-Name": tool},
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+tool+`","arguments":{},`+httpMeta+`}}`)
	}()
	// The call is running once its child said so; it answers when let.
	work := filepath.Dir(home)
	for deadline := time.Now().Add(time.Minute); !fileExists(filepath.Join(work, "call-started")); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the call's child did not start")
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// While the call finishes, the listener stays open and refuses new
	// work with 503 (a fresh connection: nothing reused from before).
	for deadline := time.Now().Add(time.Minute); !strings.Contains(stderr.String(), "stopping:"); {
		if time.Now().After(deadline) {
			t.Fatal("serve-http did not log the drain")
		}
		time.Sleep(5 * time.Millisecond)
	}
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	r, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{`+httpMeta+`}}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Mcp-Method", "tools/list")
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	res, err := fresh.Do(r)
	if err != nil {
		t.Fatalf("a request during the drain was not answered: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") != "1" || !strings.Contains(string(b), "the server is stopping") {
		t.Errorf("a request during the drain: %d (Retry-After %q) %s, want 503", res.StatusCode, res.Header.Get("Retry-After"), b)
	}
	res, err = fresh.Get(strings.TrimSuffix(url, "/mcp/v1/"+interopNamespace+"/local") + "/readyz")
	if err != nil {
		t.Fatalf("/readyz during the drain: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/readyz during the drain: %d, want 503", res.StatusCode)
	}
	if err := os.WriteFile(filepath.Join(work, "call-release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-answered:
		if !strings.Contains(string(b), `"outcome":"succeeded"`) || !strings.Contains(string(b), "slow done") {
			t.Errorf("the call in flight was not answered after SIGTERM: %s", b)
		}
	case <-time.After(time.Minute):
		t.Fatal("no answer to the call in flight")
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("serve-http exited with %v after draining", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("serve-http did not exit after draining")
	}
	if !strings.Contains(stderr.String(), "stopping: 1 call(s) in flight finish first") {
		t.Errorf("the drain was not logged:\n%s", stderr.String())
	}
}
