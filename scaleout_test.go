//go:build etcd

package main

// Scale-out: three serve-http replicas on one etcd store, each with its own
// home (its own package copies), the way three machines run them.

import (
	"context"
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

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// scaleVersions is how many releases of the fixture are installed: the
// publisher keeps switching between them.
const scaleVersions = 6

const scaleProfile = `{"endpoints":{"remote":{"namespace":"scale","transports":["http"],"toolNames":"stable","template":"wide",
 "publish":{"packages":["scale.fake"]},"security":{"default":"standard","commands":{"scale.strict":"strict"}}},
 "web":{"namespace":"scale-web","transports":["http"],"toolNames":"stable","publish":{"packages":["site.fixture"]},
  "tasks":{"commands":["site.build"]}}},
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
	// One process a call, the shell alone: thousands of calls run.
	script := fmt.Sprintf(`#!/bin/sh
IFS= read -r line <&3 || exit 2
id=${line#*'"invocationId":"'}
id=${id%%%%'"'*}
[ -d calls ] || mkdir -p calls
: >"calls/$id.$1"
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
	replicas []string // the remote endpoint's URL on each replica
	bases    []string // each replica's base URL
	procs    []*exec.Cmd
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
	work := filepath.Join(c.dir, name+"-work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		c.t.Fatal(err)
	}
	return startServeHTTP(c.t, c.bin, c.env(filepath.Join(c.dir, name)), work, "--rate", "0")
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
	c.mustRukh("install", "--allow-unsigned", copyTasksFixture(t, c.dir))
	c.mustRukh("activate", "site.fixture")
	c.mustRukh("policy", "set", profile)
	for v := range scaleVersions {
		c.mustRukh("activate", fmt.Sprintf("scale.fake@1.0.%d", v))
		c.mustRukh("publish")
	}
	for i := range replicas {
		base, proc, _ := c.startReplica(fmt.Sprintf("replica-%d", i))
		c.replicas = append(c.replicas, base+"/mcp/v1/scale/remote")
		c.bases = append(c.bases, base)
		c.procs = append(c.procs, proc)
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

// agentToken adds agent name on endpoint and returns a token of it.
func (c *scaleCluster) agentToken(name, endpoint string) string {
	c.t.Helper()
	c.mint("agent", "add", name, "--endpoint", endpoint)
	return c.mint("agent", "token", name, "--ttl", "1h")
}

var releaseRE = regexp.MustCompile(`release 1\.0\.(\d+)`)

// scalePost posts one modern-era request (params: the members before
// _meta; caps: the client capabilities) and returns the status and body; a
// body cut short is an error.
func scalePost(client *http.Client, url, token, method, name, params, caps string) (int, string, error) {
	if params != "" {
		params += ","
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{%s"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":%s}}}`,
		method, params, caps)
	r, _ := http.NewRequest("POST", url, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Method", method)
	if name != "" {
		r.Header.Set("Mcp-Name", name)
	}
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Authorization", "Bearer "+token)
	res, err := client.Do(r)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	return res.StatusCode, string(out), err
}

// scaleCall calls tool and returns the status and the release that
// answered (-1: none).
func scaleCall(client *http.Client, url, token, tool string) (int, int, string, error) {
	status, out, err := scalePost(client, url, token, "tools/call", tool, fmt.Sprintf(`"name":%q,"arguments":{}`, tool), "{}")
	m := releaseRE.FindStringSubmatch(out)
	if err != nil || m == nil {
		return status, -1, out, err
	}
	v := 0
	fmt.Sscan(m[1], &v)
	return status, v, out, nil
}

func TestScaleOutReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and three replicas")
	}
	c := newScaleCluster(t, 3)
	token := c.agentToken("bot", "remote")

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

	// The clients call until both bounds are met: a busy host makes the
	// test slower, not weaker, and a quiet one does not call more than it
	// needs.
	const clients, minCalls, minPublishes, maxCalls = 16, 2000, 10, 20000
	enough := func(calls int64) bool {
		return calls >= maxCalls || calls >= minCalls && published.Load()-scaleVersions >= minPublishes
	}
	var calls, misrouted, failed atomic.Int64
	var firstBad sync.Once
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Timeout: 30 * time.Second}
			for j := 0; !enough(calls.Load()); j++ {
				url := c.replicas[(i+j)%len(c.replicas)]
				before := published.Load() // every publish up to before-1 was done
				status, v, body, err := scaleCall(client, url, token, "scale_ver")
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
	if calls.Load() < minCalls || misrouted.Load() != 0 || failed.Load() != 0 {
		t.Errorf("%d calls, %d misrouted, %d failed: want ≥ %d, 0, 0", calls.Load(), misrouted.Load(), failed.Load(), minCalls)
	}
	if n < minPublishes {
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
			st, v, _, err := scaleCall(http.DefaultClient, c.replicas[i%len(c.replicas)], once, "scale_strict")
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

var rpcClient = &http.Client{Timeout: 30 * time.Second}

// rpc posts a request as a client with the Tasks extension.
func rpc(url, token, method, name, params string) (int, string, error) {
	return scalePost(rpcClient, url, token, method, name, params, tasksCaps)
}

// startBuildTask calls site_build (a minute long) as a task at url and
// returns the task's id; its child writes its pid to marker.
func startBuildTask(t *testing.T, url, token, marker string) string {
	t.Helper()
	st, out, err := rpc(url, token, "tools/call", "site_build", fmt.Sprintf(`"name":"site_build","arguments":{"tenths":600,"marker":%q}`, marker))
	var created struct {
		Result struct{ TaskID, ResultType string } `json:"result"`
	}
	if err != nil || st != 200 || stdjson.Unmarshal([]byte(out), &created) != nil || created.Result.ResultType != "task" {
		t.Fatalf("tools/call on %s: %d %v %s", url, st, err, out)
	}
	return created.Result.TaskID
}

// A task started through one replica is read and cancelled through
// another: its child, run by the first, stops.
func TestScaleOutTaskAcrossReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and two replicas")
	}
	c := newScaleCluster(t, 2)
	token := c.agentToken("builder", "web")
	web := func(i int) string { return c.bases[i] + "/mcp/v1/scale-web/web" }
	marker := filepath.Join(c.dir, "build.pid")

	id := startBuildTask(t, web(0), token, marker)
	pid := childPid(t, marker)

	st, out, _ := rpc(web(1), token, "tasks/get", id, fmt.Sprintf(`"taskId":%q`, id))
	if st != 200 || !strings.Contains(out, `"status":"working"`) {
		t.Fatalf("tasks/get on replica 1: %d %s", st, out)
	}
	// Another agent sees nothing of it, on any replica.
	other := c.agentToken("other", "web")
	if _, out, _ := rpc(web(1), other, "tasks/get", id, fmt.Sprintf(`"taskId":%q`, id)); !strings.Contains(out, `"code":-32602`) {
		t.Errorf("another agent's tasks/get: %d %s", st, out)
	}
	st, out, _ = rpc(web(1), token, "tasks/cancel", id, fmt.Sprintf(`"taskId":%q`, id))
	if st != 200 || strings.Contains(out, `"error"`) {
		t.Fatalf("tasks/cancel on replica 1: %d %s", st, out)
	}
	waitGone(t, pid)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, out, _ = rpc(web(0), token, "tasks/get", id, fmt.Sprintf(`"taskId":%q`, id))
		if strings.Contains(out, `"status":"cancelled"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task is not cancelled: %s", out)
		}
	}
}

// etcd stopped and restarted under load: no call gets a wrong answer,
// what fails says the store is unavailable, and the replicas recover.
func TestScaleOutEtcdRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and two replicas")
	}
	c := newScaleCluster(t, 2)
	token := c.agentToken("bot", "remote")
	active := scaleVersions - 1 // the last setup publish

	var ok, unavailable, wrong atomic.Int64
	var lastOK atomic.Int64 // unix nanos of the newest success
	var firstWrong sync.Once
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Timeout: 30 * time.Second}
			for j := 0; ; j++ {
				select {
				case <-stop:
					return
				default:
				}
				status, v, body, err := scaleCall(client, c.replicas[(i+j)%len(c.replicas)], token, "scale_ver")
				switch {
				case err == nil && status == 200 && v == active:
					ok.Add(1)
					lastOK.Store(time.Now().UnixNano())
				case err == nil && (status == 503 || strings.Contains(body, "unavailable")):
					unavailable.Add(1)
					time.Sleep(20 * time.Millisecond)
				default:
					wrong.Add(1)
					firstWrong.Do(func() {
						t.Errorf("a wrong answer while etcd restarted: status %d, release %d, err %v, body %s", status, v, err, body)
					})
				}
			}
		}()
	}
	// A call admitted before etcd goes away finishes on what it resolved.
	builder := c.agentToken("builder", "web")
	marker := filepath.Join(c.dir, "inflight.pid")
	inflight := make(chan string, 1)
	go func() {
		_, out, err := scalePost(rpcClient, c.bases[0]+"/mcp/v1/scale-web/web", builder, "tools/call", "site_build",
			fmt.Sprintf(`"name":"site_build","arguments":{"tenths":30,"marker":%q}`, marker), "{}")
		if err != nil {
			out = err.Error()
		}
		inflight <- out
	}()
	childPid(t, marker)
	time.Sleep(time.Second)
	c.etcd.Stop()
	time.Sleep(2 * time.Second)
	restarted := time.Now()
	srv, err := startEtcd(c.etcdDir, c.etcd.Addr)
	if err != nil {
		close(stop)
		wg.Wait()
		t.Fatal(err)
	}
	c.etcd = srv
	recovered := false
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if lastOK.Load() > restarted.UnixNano() {
			recovered = true
			t.Logf("first success %v after etcd was back", time.Duration(lastOK.Load()-restarted.UnixNano()))
			break
		}
	}
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	if out := <-inflight; !strings.Contains(out, "built 30") {
		t.Errorf("the call in flight while etcd was down: %s", out)
	}
	t.Logf("%d ok, %d refused as unavailable, %d wrong", ok.Load(), unavailable.Load(), wrong.Load())
	if !recovered {
		t.Errorf("no call succeeded within 15 s of etcd's restart")
	}
	if unavailable.Load() == 0 {
		t.Errorf("no call noticed that etcd was down")
	}
	if wrong.Load() != 0 {
		t.Errorf("%d wrong answers", wrong.Load())
	}
}

// A replica killed mid-call: its client sees the stream close and the
// call's child dies with the replica; the other replica keeps serving, and
// the killed one's task is recorded cancelled once its lease ends.
func TestScaleOutReplicaKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and two replicas")
	}
	c := newScaleCluster(t, 2)
	token := c.agentToken("builder", "web")
	marker := filepath.Join(c.dir, "call.pid")
	done := make(chan error, 1)
	go func() {
		// no tasks capability: a plain call that runs a minute
		status, _, err := scalePost(http.DefaultClient, c.bases[0]+"/mcp/v1/scale-web/web", token, "tools/call", "site_build",
			fmt.Sprintf(`"name":"site_build","arguments":{"tenths":600,"marker":%q}`, marker), "{}")
		if err == nil {
			err = fmt.Errorf("the call answered %d", status)
		}
		done <- err
	}()
	pid := childPid(t, marker)
	// and a task of the same replica's
	web := func(i int) string { return c.bases[i] + "/mcp/v1/scale-web/web" }
	taskMarker := filepath.Join(c.dir, "task.pid")
	id := startBuildTask(t, web(0), token, taskMarker)
	taskPid := childPid(t, taskMarker)
	killed := time.Now()
	c.procs[0].Process.Kill()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "EOF") && !strings.Contains(err.Error(), "reset") && !strings.Contains(err.Error(), "answered") {
			t.Errorf("the client of the killed replica: %v", err)
		} else if strings.Contains(err.Error(), "answered") {
			t.Errorf("the call of a killed replica answered: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the client of the killed replica still waits")
	}
	waitGone(t, pid)
	waitGone(t, taskPid)
	bot := c.agentToken("bot", "remote")
	if st, v, body, err := scaleCall(http.DefaultClient, c.replicas[1], bot, "scale_ver"); err != nil || st != 200 || v != scaleVersions-1 {
		t.Errorf("the other replica after the kill: %d %d %v %s", st, v, err, body)
	}

	// The killed replica's lease ends (10 s); a tasks/get through the
	// other replica, with nobody cancelling or listing, then records its
	// task cancelled, saying why, instead of leaving it working forever.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		st, out, _ := rpc(web(1), token, "tasks/get", id, fmt.Sprintf(`"taskId":%q`, id))
		if st == 200 && strings.Contains(out, `"status":"cancelled"`) {
			break
		}
		if st != 200 || !strings.Contains(out, `"status":"working"`) || time.Now().After(deadline) {
			t.Fatalf("tasks/get on replica 1, %v after the kill: %d %s", time.Since(killed).Round(time.Second), st, out)
		}
	}
	if d := time.Since(killed); d > 25*time.Second {
		t.Errorf("the task was recorded cancelled %v after the kill; the lease is 10 s", d.Round(time.Second))
	}
	if out := c.mustRukh("tasks", "show", id, "--json"); !strings.Contains(out, "ended before it finished") {
		t.Errorf("rukh tasks show does not say why the task was cancelled: %s", out)
	}
}

// A publish killed at any point leaves the active revision as it was or
// moves it whole; the store stays consistent and the next publish works.
func TestScaleOutPublishKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd")
	}
	c := newScaleCluster(t, 0)
	home := filepath.Join(c.dir, "owner")
	// ver runs the command as a person does: the release it answers with
	// is the active revision's.
	ver := func() int {
		t.Helper()
		m := releaseRE.FindStringSubmatch(c.mustRukh("scale", "ver"))
		if m == nil {
			t.Fatal("scale ver printed no release")
		}
		v := 0
		fmt.Sscan(m[1], &v)
		return v
	}
	moved, kept := 0, 0
	for i := range 16 {
		was := ver()
		next := (was + 1) % scaleVersions
		c.mustRukh("activate", fmt.Sprintf("scale.fake@1.0.%d", next))
		cmd := exec.Command(c.bin, "publish")
		cmd.Env, cmd.Dir = c.env(home), c.dir
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(2+i*6) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		switch now := ver(); now {
		case was:
			kept++
		case next:
			moved++
		default:
			t.Fatalf("after a publish killed at %d ms the active release is 1.0.%d, neither 1.0.%d nor 1.0.%d", 2+i*6, now, was, next)
		}
		c.mustRukh("doctor") // exits 1 on a broken invariant
	}
	t.Logf("16 killed publishes: %d left the head, %d had moved it", kept, moved)
	if kept == 0 {
		t.Errorf("no publish was killed before it moved the head: the test proves nothing")
	}
	// a release other than the active one, whichever the kills left
	final := (ver() + 1) % scaleVersions
	c.mustRukh("activate", fmt.Sprintf("scale.fake@1.0.%d", final))
	if out := c.mustRukh("publish"); !strings.Contains(out, "published r") {
		t.Errorf("publish after the killed ones: %s", out)
	}
	c.mustRukh("revisions", "prune", "--keep", "1")
	c.mustRukh("doctor")
	if v := ver(); v != final {
		t.Errorf("after prune the command runs 1.0.%d, want 1.0.%d", v, final)
	}
}

// A publish on the owner's machine reaches a real client of every replica
// as tools/list_changed: each replica watches the store's head.
func TestScaleOutListChanged(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and two replicas")
	}
	c := newScaleCluster(t, 2)
	token := c.agentToken("bot", "remote")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var sessions []*mcp.ClientSession
	var changed []chan struct{}
	for i, url := range c.replicas {
		ch := make(chan struct{}, 8)
		cl := mcp.NewClient(&mcp.Implementation{Name: "rukh-scale", Version: "0.0.1"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { ch <- struct{}{} },
		})
		cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport{token}}},
			&mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
		if err != nil {
			t.Fatalf("connect to replica %d: %v", i, err)
		}
		defer cs.Close()
		if n := len(toolNames(t, ctx, cs)); n != 2 {
			t.Fatalf("replica %d lists %d tools, want 2", i, n)
		}
		sessions, changed = append(sessions, cs), append(changed, ch)
	}
	c.mustRukh("deactivate", "scale.fake")
	published := time.Now()
	c.mustRukh("publish")
	for i, ch := range changed {
		select {
		case <-ch:
			t.Logf("replica %d: list_changed %v after the publish began", i, time.Since(published).Round(time.Millisecond))
		case <-time.After(time.Minute):
			t.Fatalf("replica %d: no tools/list_changed within a minute of the publish", i)
		}
		if res, err := sessions[i].ListTools(ctx, nil); err != nil || len(res.Tools) != 0 {
			t.Errorf("replica %d after the package left: %v, %v; want no tools", i, res, err)
		}
	}
}
