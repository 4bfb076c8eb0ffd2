// Command tasks5m measures the bar of docs/tasks.md once, against the real
// binary: a 5-minute command (testdata/tasks/pkg site.build with
// tenths=3000) completes as a task on stdio (serve-mcp) and on HTTP
// (serve-http) at the same time while every request of the client gives up
// after 10 s, and its checked result is fetched afterwards (on stdio by a
// new serve-mcp process); before that, every cancel path (tasks/cancel on
// both transports, the job family, `rukh tasks cancel`, SIGTERM and
// SIGKILL of the server) stops a 5-minute build with no process left.
// It takes about six minutes and is not part of scripts/test.sh.
//
//	go run ./bench/tasks5m [-rukh BIN] [-tenths 3000] [-timeout 10s]
//
// Run it from the repository root. It exits 1 at the first failure.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

var (
	rukhBin  = flag.String("rukh", "", "the rukh binary (default: build one)")
	tenths   = flag.Int("tenths", 3000, "the long build's length in tenths of a second")
	timeout  = flag.Duration("timeout", 10*time.Second, "the client's per-request timeout")
	keepHome = flag.Bool("keep", false, "keep the temporary home")
)

const (
	extCaps = `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	noCaps  = `{}`
)

// marker is in the command line of every process of the fixture's
// children, so a scan for it finds orphans.
var marker = fmt.Sprintf("rukh-tasks5m-marker-%d", os.Getpid())

var tmp string

func main() {
	flag.Parse()
	var err error
	if tmp, err = os.MkdirTemp("", "rukh-tasks5m-"); err != nil {
		fail("%v", err)
	}
	if !*keepHome {
		defer os.RemoveAll(tmp)
	}
	bin := *rukhBin
	if bin == "" {
		bin = filepath.Join(tmp, "rukh")
		build := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			fail("go build: %v\n%s", err, out)
		}
	}
	home := setup(bin)
	fmt.Printf("rukh tasks bar: site.build tenths=%d, per-request timeout %v, home %s\n", *tenths, *timeout, home)

	web := startHTTP(bin, home)
	defer web.stop()
	fmt.Println("cancel paths (each a build of the same length, cancelled once its child runs):")
	cancelPaths(bin, home, web)
	fmt.Println("long tasks, stdio and HTTP at the same time:")
	var wg sync.WaitGroup
	lines := make([]string, 2)
	wg.Add(2)
	go func() { defer wg.Done(); lines[0] = longOverStdio(bin, home) }()
	go func() { defer wg.Done(); lines[1] = longOverHTTP(web) }()
	wg.Wait()
	for _, l := range lines {
		fmt.Println("  " + l)
	}
	noOrphans("at the end")
	fmt.Println("orphans: none (no process carries the fixture's marker)")
}

// servers are the serving processes started, stopped (with their tasks)
// on a failure.
var servers struct {
	sync.Mutex
	cmds []*exec.Cmd
}

func started(cmd *exec.Cmd) {
	servers.Lock()
	servers.cmds = append(servers.cmds, cmd)
	servers.Unlock()
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "tasks5m: "+format+"\n", args...)
	servers.Lock()
	for _, c := range servers.cmds {
		if c.ProcessState == nil {
			c.Process.Signal(syscall.SIGTERM)
		}
	}
	servers.Unlock()
	time.Sleep(time.Second)
	os.Exit(1)
}

// setup installs the task fixture and publishes it on endpoint "stdio"
// (serve-mcp, with the job family) and "web" (serve-http, no auth).
func setup(bin string) string {
	pkg := filepath.Join(tmp, "pkg")
	if err := os.CopyFS(pkg, os.DirFS("testdata/tasks/pkg")); err != nil {
		fail("copy the fixture (run from the repository root): %v", err)
	}
	must(os.Chmod(filepath.Join(pkg, "bin", "ext"), 0o755))
	manifest := filepath.Join(pkg, "rukh-extension.json")
	m, err := os.ReadFile(manifest)
	must(err)
	must(os.WriteFile(manifest, bytes.ReplaceAll(m, []byte(`"rukh-tasks-fixture-marker"`), []byte(strconv.Quote(marker))), 0o644))
	home := filepath.Join(tmp, "home")
	limits := `"maxTasks":16,"ttlMs":3600000,"timeoutMs":900000`
	profile := `{"endpoints":{` +
		`"stdio":{"namespace":"bar-stdio","toolNames":"stable","publish":{"packages":["site.fixture"]},"tasks":{"commands":["site.build"],` + limits + `,"jobTools":true}},` +
		`"web":{"namespace":"bar-web","transports":["http"],"httpAuth":"none","toolNames":"stable","publish":{"packages":["site.fixture"]},"tasks":{"commands":["site.build"],` + limits + `}}}}`
	must(os.WriteFile(filepath.Join(tmp, "profile.json"), []byte(profile), 0o644))
	for _, args := range [][]string{{"install", "--allow-unsigned", pkg}, {"activate", "site.fixture"}, {"policy", "set", filepath.Join(tmp, "profile.json")}, {"publish"}} {
		rukh(bin, home, args...)
	}
	return home
}

func must(err error) {
	if err != nil {
		fail("%v", err)
	}
}

func env(home string) []string {
	return append(os.Environ(), "RUKH_HOME="+home, "LANG=C.UTF-8")
}

func rukh(bin, home string, args ...string) []byte {
	cmd := exec.Command(bin, args...)
	cmd.Env = env(home)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		fail("rukh %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
	}
	return out
}

// ---- stdio ----

type stdio struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	mu     sync.Mutex
	wait   map[string]chan map[string]json.RawMessage
	n      int
	closed chan struct{}
	stderr bytes.Buffer
}

func startStdio(bin, home string) *stdio {
	s := &stdio{wait: map[string]chan map[string]json.RawMessage{}, closed: make(chan struct{})}
	s.cmd = exec.Command(bin, "serve-mcp", "--endpoint", "stdio")
	s.cmd.Env = env(home)
	s.cmd.Stderr = &s.stderr
	var err error
	s.in, err = s.cmd.StdinPipe()
	must(err)
	out, err := s.cmd.StdoutPipe()
	must(err)
	must(s.cmd.Start())
	started(s.cmd)
	go func() {
		defer close(s.closed)
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				var m map[string]json.RawMessage
				if json.Unmarshal(line, &m) == nil && m["id"] != nil {
					s.mu.Lock()
					ch := s.wait[string(m["id"])]
					delete(s.wait, string(m["id"]))
					s.mu.Unlock()
					if ch != nil {
						ch <- m
					}
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return s
}

// request sends one modern request and waits at most the per-request
// timeout for its answer; it returns the answer's result or error, and how
// long it took.
func (s *stdio) request(method, params, caps string) (result, rpcErr map[string]json.RawMessage, took time.Duration) {
	s.mu.Lock()
	s.n++
	id := strconv.Itoa(s.n)
	ch := make(chan map[string]json.RawMessage, 1)
	s.wait[id] = ch
	s.mu.Unlock()
	if params != "" {
		params += ","
	}
	line := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{` + params +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}}}` + "\n"
	began := time.Now()
	if _, err := io.WriteString(s.in, line); err != nil {
		fail("stdio: %v; stderr:\n%s", err, s.stderr.String())
	}
	select {
	case m := <-ch:
		took = time.Since(began)
		json.Unmarshal(m["result"], &result)
		json.Unmarshal(m["error"], &rpcErr)
		return result, rpcErr, took
	case <-time.After(*timeout):
		fail("stdio: no answer to %s within the client's timeout of %v", method, *timeout)
	case <-s.closed:
		fail("stdio: serve-mcp closed stdout; stderr:\n%s", s.stderr.String())
	}
	panic("unreachable")
}

// end closes stdin, as a client that leaves does, and waits for the exit.
func (s *stdio) end() {
	s.in.Close()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		fail("serve-mcp did not end after its input did")
	}
}

// ---- HTTP ----

type web struct {
	url  string
	cmd  *exec.Cmd
	http *http.Client
}

var listeningRE = regexp.MustCompile(`listening on (http://\S+)`)

func startHTTP(bin, home string) *web {
	cmd := exec.Command(bin, "serve-http", "--listen", "127.0.0.1:0", "--rate", "0")
	cmd.Env = env(home)
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	must(cmd.Start())
	started(cmd)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
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
		return &web{url: base + "/mcp/v1/bar-web/web", cmd: cmd, http: &http.Client{Timeout: *timeout}}
	case <-time.After(20 * time.Second):
		fail("serve-http did not start")
	}
	return nil
}

func (w *web) stop() {
	w.cmd.Process.Signal(syscall.SIGTERM)
	w.cmd.Wait()
}

var httpIDs struct {
	sync.Mutex
	n int
}

// request POSTs one modern request with the headers the transport
// requires (Mcp-Name: the tool, or the task id of tasks/*).
func (w *web) request(method, name, params string) (result, rpcErr map[string]json.RawMessage, took time.Duration) {
	httpIDs.Lock()
	httpIDs.n++
	id := httpIDs.n
	httpIDs.Unlock()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":%s}}}`, id, method, params, extCaps)
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	r, _ := http.NewRequestWithContext(ctx, "POST", w.url, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", method)
	r.Header.Set("Mcp-Name", name)
	began := time.Now()
	res, err := w.http.Do(r)
	if err != nil {
		fail("http %s: %v (the client's timeout is %v)", method, err, *timeout)
	}
	out, err := io.ReadAll(res.Body)
	res.Body.Close()
	took = time.Since(began)
	if err != nil {
		fail("http %s: %v", method, err)
	}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		for _, l := range strings.Split(string(out), "\n") {
			if d, ok := strings.CutPrefix(l, "data: "); ok && strings.Contains(d, `"id":`+strconv.Itoa(id)) {
				out = []byte(d)
			}
		}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(out, &m); err != nil {
		fail("http %s: HTTP %d, not JSON: %s", method, res.StatusCode, out)
	}
	json.Unmarshal(m["result"], &result)
	json.Unmarshal(m["error"], &rpcErr)
	return result, rpcErr, took
}

// ---- checks ----

func str(m map[string]json.RawMessage, key string) string {
	var s string
	json.Unmarshal(m[key], &s)
	return s
}

func buildArgs(pidFile string) string {
	return fmt.Sprintf(`"name":"site_build","arguments":{"tenths":%d,"marker":%q}`, *tenths, pidFile)
}

func created(where string, r, e map[string]json.RawMessage) string {
	id := str(r, "taskId")
	if e != nil || str(r, "resultType") != "task" || str(r, "status") != "working" || !strings.HasPrefix(id, "t-") {
		fail("%s: tools/call did not create a task: result %v, error %v", where, r, e)
	}
	return id
}

// childPid waits for the pid file the build writes first thing.
func childPid(file string) int {
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(file); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			must(err)
			return pid
		}
		if time.Now().After(deadline) {
			fail("the build never wrote %s", file)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// gone waits until pid has exited and no process carries the marker; it
// returns the time since the cancel.
func gone(what string, pid int, cancelled time.Time) time.Duration {
	began := time.Now()
	for syscall.Kill(pid, 0) == nil {
		if time.Since(began) > 10*time.Second {
			fail("%s: the child %d still runs", what, pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	noOrphans(what)
	return time.Since(cancelled)
}

func noOrphans(what string) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, _ := exec.Command("pgrep", "-f", marker).Output()
		if len(bytes.TrimSpace(out)) == 0 {
			return
		}
		if time.Now().After(deadline) {
			fail("%s: orphans still run: %s", what, bytes.Fields(out))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ownerState is the task's state in the store, as `rukh tasks show` says.
func ownerState(bin, home, id string) string {
	var t struct {
		State string `json:"state"`
	}
	must(json.Unmarshal(rukh(bin, home, "tasks", "show", "--json", id), &t))
	return t.State
}

func waitOwnerState(bin, home, id, want string) {
	deadline := time.Now().Add(10 * time.Second)
	for ownerState(bin, home, id) != want {
		if time.Now().After(deadline) {
			fail("task %s is %s, want %s", id, ownerState(bin, home, id), want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func cancelPaths(bin, home string, w *web) {
	pidFile := func(name string) string { return filepath.Join(tmp, name+".pid") }
	report := func(path string, took time.Duration) {
		fmt.Printf("  %-37s child and its processes gone %5.2f s after it; task cancelled\n", path+":", took.Seconds())
	}

	s := startStdio(bin, home)
	r, e, _ := s.request("tools/call", buildArgs(pidFile("ext")), extCaps)
	id := created("stdio", r, e)
	pid := childPid(pidFile("ext"))
	t0 := time.Now()
	if _, e, _ := s.request("tasks/cancel", fmt.Sprintf(`"taskId":%q`, id), extCaps); e != nil {
		fail("tasks/cancel: %v", e)
	}
	took := gone("stdio tasks/cancel", pid, t0)
	waitOwnerState(bin, home, id, "cancelled")
	report("stdio tasks/cancel", took)

	// The job family: a client without the extension.
	r, e, _ = s.request("tools/call", buildArgs(pidFile("job")), noCaps)
	var env struct {
		Outcome string `json:"outcome"`
		TaskID  string `json:"taskId"`
	}
	json.Unmarshal(r["structuredContent"], &env)
	if e != nil || env.Outcome != "started" {
		fail("job family: the call answered %v %v", r, e)
	}
	pid = childPid(pidFile("job"))
	t0 = time.Now()
	r, e, _ = s.request("tools/call", fmt.Sprintf(`"name":"rukh_task-cancel","arguments":{"taskId":%q}`, env.TaskID), noCaps)
	var st struct {
		Status string `json:"status"`
	}
	json.Unmarshal(r["structuredContent"], &st)
	if e != nil || st.Status != "cancelled" {
		fail("job family cancel answered %v %v", r, e)
	}
	report("stdio job family (rukh_task-cancel)", gone("job family cancel", pid, t0))

	r, e, _ = w.request("tools/call", "site_build", buildArgs(pidFile("http")))
	id = created("http", r, e)
	pid = childPid(pidFile("http"))
	t0 = time.Now()
	if _, e, _ := w.request("tasks/cancel", id, fmt.Sprintf(`"taskId":%q`, id)); e != nil {
		fail("http tasks/cancel: %v", e)
	}
	took = gone("http tasks/cancel", pid, t0)
	waitOwnerState(bin, home, id, "cancelled")
	report("http tasks/cancel", took)

	r, e, _ = w.request("tools/call", "site_build", buildArgs(pidFile("owner")))
	id = created("http", r, e)
	pid = childPid(pidFile("owner"))
	t0 = time.Now()
	rukh(bin, home, "tasks", "cancel", id)
	took = gone("rukh tasks cancel", pid, t0)
	waitOwnerState(bin, home, id, "cancelled")
	report("rukh tasks cancel (an HTTP task)", took)

	// The serving process ends: SIGTERM records its tasks cancelled.
	r, e, _ = s.request("tools/call", buildArgs(pidFile("term")), extCaps)
	id = created("stdio", r, e)
	pid = childPid(pidFile("term"))
	t0 = time.Now()
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.cmd.Wait()
	took = gone("SIGTERM", pid, t0)
	if st := ownerState(bin, home, id); st != "cancelled" {
		fail("after SIGTERM the task is %s", st)
	}
	report("SIGTERM to serve-mcp", took)

	// SIGKILL: the child goes with its channel; the next start records
	// the task cancelled.
	s = startStdio(bin, home)
	r, e, _ = s.request("tools/call", buildArgs(pidFile("kill")), extCaps)
	id = created("stdio", r, e)
	pid = childPid(pidFile("kill"))
	t0 = time.Now()
	s.cmd.Process.Kill()
	s.cmd.Wait()
	took = gone("SIGKILL", pid, t0)
	s = startStdio(bin, home)
	r, e, _ = s.request("tasks/get", fmt.Sprintf(`"taskId":%q`, id), extCaps)
	if e != nil || str(r, "status") != "cancelled" {
		fail("after SIGKILL and a new start, tasks/get answered %v %v", r, e)
	}
	s.end()
	report("SIGKILL to serve-mcp (next start)", took)
}

// poll asks for the task every pollIntervalMs until it is final, and
// returns the final task, the number of polls and the slowest answer.
func poll(where string, get func() (map[string]json.RawMessage, map[string]json.RawMessage, time.Duration)) (final map[string]json.RawMessage, polls int, slowest time.Duration) {
	for {
		r, e, took := get()
		polls++
		slowest = max(slowest, took)
		if e != nil {
			fail("%s: tasks/get: %v", where, e)
		}
		switch str(r, "status") {
		case "working":
		case "completed":
			return r, polls, slowest
		default:
			fail("%s: the task ended %s: %v", where, str(r, "status"), r)
		}
		interval := 1000
		json.Unmarshal(r["pollIntervalMs"], &interval)
		time.Sleep(time.Duration(interval) * time.Millisecond)
	}
}

// checked returns why the task's result is not the build's (empty: it is).
func checked(task map[string]json.RawMessage) string {
	var res struct {
		IsError           bool `json:"isError"`
		StructuredContent struct {
			Outcome       string `json:"outcome"`
			CommandResult struct {
				Kind string `json:"kind"`
				Text string `json:"text"`
			} `json:"commandResult"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(task["result"], &res); err != nil {
		return "no result: " + err.Error()
	}
	want := fmt.Sprintf("built %d", *tenths)
	if res.IsError || res.StructuredContent.Outcome != "succeeded" || res.StructuredContent.CommandResult.Text != want {
		return fmt.Sprintf("result %s, want outcome succeeded and text %q", task["result"], want)
	}
	return ""
}

func longOverStdio(bin, home string) string {
	s := startStdio(bin, home)
	began := time.Now()
	r, e, took := s.request("tools/call", buildArgs(filepath.Join(tmp, "long-stdio.pid")), extCaps)
	id := created("stdio", r, e)
	pid := childPid(filepath.Join(tmp, "long-stdio.pid"))
	final, polls, slowest := poll("stdio", func() (map[string]json.RawMessage, map[string]json.RawMessage, time.Duration) {
		return s.request("tasks/get", fmt.Sprintf(`"taskId":%q`, id), extCaps)
	})
	elapsed := time.Since(began)
	if why := checked(final); why != "" {
		fail("stdio: %s", why)
	}
	// The result is durable: the client leaves, a new serve-mcp answers.
	s.end()
	if syscall.Kill(pid, 0) == nil {
		fail("stdio: the child %d still runs after its task completed", pid)
	}
	s = startStdio(bin, home)
	again, e, _ := s.request("tasks/get", fmt.Sprintf(`"taskId":%q`, id), extCaps)
	s.end()
	if e != nil || str(again, "status") != "completed" || checked(again) != "" {
		fail("stdio: a new serve-mcp answered %v %v", again, e)
	}
	return fmt.Sprintf("stdio (serve-mcp): task created in %v; %d tasks/get, slowest %v; completed after %v; result checked (succeeded, \"built %d\"), and again from a new serve-mcp process",
		took.Round(time.Millisecond), polls, slowest.Round(time.Millisecond), elapsed.Round(100*time.Millisecond), *tenths)
}

func longOverHTTP(w *web) string {
	began := time.Now()
	r, e, took := w.request("tools/call", "site_build", buildArgs(filepath.Join(tmp, "long-http.pid")))
	id := created("http", r, e)
	pid := childPid(filepath.Join(tmp, "long-http.pid"))
	get := func() (map[string]json.RawMessage, map[string]json.RawMessage, time.Duration) {
		return w.request("tasks/get", id, fmt.Sprintf(`"taskId":%q`, id))
	}
	final, polls, slowest := poll("http", get)
	elapsed := time.Since(began)
	if why := checked(final); why != "" {
		fail("http: %s", why)
	}
	if syscall.Kill(pid, 0) == nil {
		fail("http: the child %d still runs after its task completed", pid)
	}
	time.Sleep(2 * time.Second)
	again, e, _ := get()
	if e != nil || str(again, "status") != "completed" || checked(again) != "" {
		fail("http: fetched again, tasks/get answered %v %v", again, e)
	}
	return fmt.Sprintf("http (serve-http):  task created in %v; %d tasks/get, slowest %v; completed after %v; result checked (succeeded, \"built %d\"), and again 2 s later",
		took.Round(time.Millisecond), polls, slowest.Round(time.Millisecond), elapsed.Round(100*time.Millisecond), *tenths)
}
