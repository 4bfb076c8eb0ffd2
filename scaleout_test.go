//go:build etcd

package main

// Scale-out: three serve-http replicas on one etcd store, each with its own
// home (its own package copies), the way three machines run them.

import (
	"bufio"
	stdjson "encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// scaleVersions is how many releases of the fixture are installed: the
// publisher keeps switching between them.
const scaleVersions = 6

const scaleProfile = `{"endpoints":{"remote":{"namespace":"scale","transports":["http"],"toolNames":"stable","template":"wide",
 "publish":{"packages":["scale.fake"]},"security":{"default":"standard","commands":{"scale.strict":"strict"}}}},
 "templates":{"wide":{"maxConcurrent":64,"maxHeld":128}}}`

// writeScalePackage writes release 1.0.v of the fixture: two commands that
// answer with the version they belong to.
func writeScalePackage(t *testing.T, dir string, v int) string {
	t.Helper()
	pkg := filepath.Join(dir, fmt.Sprintf("pkg-%d", v))
	if err := os.MkdirAll(filepath.Join(pkg, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := func(id, word string) string {
		return fmt.Sprintf(`{"id":%q,"path":["scale",%q],"summary":"Say which release runs","params":[],
 "execute":{"program":"bin/ext","args":[%q],"result":{"kind":"text"}},
 "machine":{"eligible":true,"interaction":"none","requiredFeatures":[{"id":"command-result","version":1}]}}`, id, word, word)
	}
	manifest := fmt.Sprintf(`{"apiVersion":"rukh.extension/2","name":"scale.fake","version":"1.0.%d","publisher":"scale",
 "description":"Scale-out fixture","commands":[%s,%s]}`, v, cmd("scale.ver", "ver"), cmd("scale.strict", "strict"))
	script := fmt.Sprintf(`#!/bin/sh
IFS= read -r line <&3 || exit 2
id=$(printf '%%s\n' "$line" | sed -n 's/^.*"invocationId":"\([^"]*\)".*$/\1/p')
mkdir -p calls && : >"calls/$id.$1"
printf '{"type":"report","invocationId":"%%s","outcome":"succeeded","commandResult":{"kind":"text","text":"release 1.0.%d"}}\n' "$id" >&3
`, v)
	if err := os.WriteFile(filepath.Join(pkg, "rukh-extension.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "bin", "ext"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return pkg
}

type scaleCluster struct {
	t        *testing.T
	bin      string
	dir      string
	storeURL string
	etcd     *etcdProc
	etcdDir  string
	replicas []string // base URLs
}

func (c *scaleCluster) env(home string) []string {
	return append(rukhEnv(home), "RUKH_STORE="+c.storeURL)
}

// rukh runs a verb as the owner on machine "owner".
func (c *scaleCluster) rukh(args ...string) (string, error) {
	cmd := exec.Command(c.bin, args...)
	cmd.Env = c.env(filepath.Join(c.dir, "owner"))
	cmd.Dir = c.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("rukh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

func (c *scaleCluster) mustRukh(args ...string) string {
	c.t.Helper()
	out, err := c.rukh(args...)
	if err != nil {
		c.t.Fatal(err)
	}
	return out
}

// startReplica runs serve-http as machine name: its own home, the shared store.
func (c *scaleCluster) startReplica(name string) (base string, cmd *exec.Cmd, stderr *lockedBuffer) {
	c.t.Helper()
	home := filepath.Join(c.dir, name)
	work := filepath.Join(c.dir, name+"-work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		c.t.Fatal(err)
	}
	cmd = exec.Command(c.bin, "serve-http", "--listen", "127.0.0.1:0", "--rate", "0")
	cmd.Env = c.env(home)
	cmd.Dir = work
	stderr = &lockedBuffer{}
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
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
	c.t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			c.t.Errorf("replica %s did not stop on SIGINT\n%s", name, stderr.String())
		}
		pw.Close()
		if c.t.Failed() {
			c.t.Logf("replica %s stderr:\n%s", name, stderr.String())
		}
	})
	select {
	case base = <-found:
		return base, cmd, stderr
	case <-time.After(15 * time.Second):
		c.t.Fatalf("replica %s did not start:\n%s", name, stderr.String())
	}
	return "", nil, nil
}

func newScaleCluster(t *testing.T, replicas int) *scaleCluster {
	t.Helper()
	c := &scaleCluster{t: t, bin: buildRukhTags(t, "etcd"), dir: t.TempDir()}
	c.etcdDir = filepath.Join(c.dir, "etcd")
	srv, err := startEtcd(c.etcdDir, "")
	if err != nil {
		t.Fatal(err)
	}
	c.etcd = srv
	t.Cleanup(func() {
		if c.etcd != nil {
			c.etcd.Stop()
		}
	})
	c.storeURL = "etcd://" + srv.Addr + "/scale"
	profile := filepath.Join(c.dir, "profile.json")
	if err := os.WriteFile(profile, []byte(scaleProfile), 0o644); err != nil {
		t.Fatal(err)
	}
	for v := range scaleVersions {
		c.mustRukh("install", "--allow-unsigned", writeScalePackage(t, c.dir, v))
	}
	c.mustRukh("policy", "set", profile)
	for v := range scaleVersions {
		c.mustRukh("activate", fmt.Sprintf("scale.fake@1.0.%d", v))
		c.mustRukh("publish")
	}
	for i := range replicas {
		base, _, _ := c.startReplica(fmt.Sprintf("replica-%d", i))
		c.replicas = append(c.replicas, base+"/mcp/v1/scale/remote")
	}
	return c
}

// mint returns a fresh token from an agent verb (--json).
func (c *scaleCluster) mint(args ...string) string {
	c.t.Helper()
	var rep struct {
		Token string `json:"token"`
	}
	out := c.mustRukh(append(args, "--json")...)
	if err := stdjson.Unmarshal([]byte(out), &rep); err != nil || rep.Token == "" {
		c.t.Fatalf("no token in %q", out)
	}
	return rep.Token
}

var releaseRE = regexp.MustCompile(`release 1\.0\.(\d+)`)

// call posts one modern-era tools/call and returns the status and the
// release that answered (-1: none).
func scaleCall(client *http.Client, url, token, tool string, id int) (int, int, string, error) {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, id, tool)
	r, _ := http.NewRequest("POST", url, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Method", "tools/call")
	r.Header.Set("Mcp-Name", tool)
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Authorization", "Bearer "+token)
	res, err := client.Do(r)
	if err != nil {
		return 0, -1, "", err
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	m := releaseRE.FindSubmatch(out)
	if m == nil {
		return res.StatusCode, -1, string(out), nil
	}
	v := 0
	fmt.Sscan(string(m[1]), &v)
	return res.StatusCode, v, string(out), nil
}

func TestScaleOutReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and three replicas")
	}
	c := newScaleCluster(t, 3)
	c.mint("agent", "add", "bot", "--endpoint", "remote")
	token := c.mint("agent", "token", "bot", "--ttl", "1h")

	// The publisher switches the active release over and over. published
	// counts publishes done, started those begun; version[k] is what
	// publish k activated (the six setup publishes first).
	var mu sync.Mutex
	version := []int{}
	for v := range scaleVersions {
		version = append(version, v)
	}
	var started, published atomic.Int64
	started.Store(int64(len(version)))
	published.Store(int64(len(version)))
	stop := make(chan struct{})
	pubDone := make(chan error, 1)
	go func() {
		for k := 0; ; k++ {
			select {
			case <-stop:
				pubDone <- nil
				return
			default:
			}
			v := (k * 5) % scaleVersions // a different release each time
			mu.Lock()
			version = append(version, v)
			mu.Unlock()
			started.Add(1)
			// rollback to the setup revision of release v: one process, one publish
			if _, err := c.rukh("rollback", fmt.Sprintf("r%d", v+1)); err != nil {
				pubDone <- err
				return
			}
			published.Add(1)
		}
	}()

	const clients, perClient = 16, 320
	var calls, misrouted, failed atomic.Int64
	var firstBad sync.Once
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Timeout: 30 * time.Second}
			for j := range perClient {
				url := c.replicas[(i+j)%len(c.replicas)]
				before := published.Load() // every publish up to before-1 was done
				status, v, body, err := scaleCall(client, url, token, "scale_ver", j+1)
				after := started.Load() // no publish from after on had begun
				calls.Add(1)
				if err != nil || status != 200 || v < 0 {
					failed.Add(1)
					firstBad.Do(func() { t.Errorf("call failed: status %d, err %v, body %s", status, err, body) })
					continue
				}
				mu.Lock()
				ok := false
				for k := before - 1; k < after && k < int64(len(version)); k++ {
					if version[k] == v {
						ok = true
					}
				}
				window := fmt.Sprint(version[before-1 : min(after, int64(len(version)))])
				mu.Unlock()
				if !ok {
					misrouted.Add(1)
					firstBad.Do(func() {
						t.Errorf("a call ran release 1.0.%d; active while it was in flight: %s", v, window)
					})
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	if err := <-pubDone; err != nil {
		t.Fatal(err)
	}
	n := published.Load() - scaleVersions
	t.Logf("%d calls across %d replicas, %d publishes meanwhile: %d misrouted, %d failed",
		calls.Load(), len(c.replicas), n, misrouted.Load(), failed.Load())
	if calls.Load() < 5000 || misrouted.Load() != 0 || failed.Load() != 0 {
		t.Errorf("%d calls, %d misrouted, %d failed: want ≥ 5000, 0, 0", calls.Load(), misrouted.Load(), failed.Load())
	}
	if n < 10 {
		t.Errorf("only %d publishes happened during the calls", n)
	}

	// A one-time token, raced on every replica: exactly one call runs.
	once := c.mint("agent", "token", "bot", "--once")
	const racers = 48
	statuses := make(chan int, racers)
	start := make(chan struct{})
	var rw sync.WaitGroup
	for i := range racers {
		rw.Add(1)
		go func() {
			defer rw.Done()
			<-start
			st, v, _, err := scaleCall(http.DefaultClient, c.replicas[i%len(c.replicas)], once, "scale_strict", i+1)
			if err != nil || (st == 200 && v < 0) {
				st = -1 // an error, or a refusal that is not a 401
			}
			statuses <- st
		}()
	}
	close(start)
	rw.Wait()
	close(statuses)
	count := map[int]int{}
	for st := range statuses {
		count[st]++
	}
	if count[200] != 1 || count[401] != racers-1 {
		t.Errorf("one-time token on %d replicas: statuses %v, want one 200 and %d 401", len(c.replicas), count, racers-1)
	}
	ran := 0
	for i := range c.replicas {
		m, _ := filepath.Glob(filepath.Join(c.dir, fmt.Sprintf("replica-%d-work", i), "calls", "*.strict"))
		ran += len(m)
	}
	if ran != 1 {
		t.Errorf("the one-time token ran %d calls across the replicas, want 1", ran)
	}
}
