package main

// End-to-end tasks (docs/tasks.md): the real rukh binary serves testdata/tasks/
// pkg's site.build (a child that writes its pid to a marker file, then
// reports progress every tenth of a second) as a task: through the Tasks
// extension on the raw wire, and through the job family to a go-sdk client
// that knows nothing of tasks and waits at most one second per request.
// Every cancel path must leave the child gone.

import (
	"bufio"
	"bytes"
	"context"
	stdjson "encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var tasksMarker = fmt.Sprintf("rukh-tasks-fixture-marker-%d", os.Getpid())

const tasksNamespace = "tasks-test"

// newTasksHome installs the task fixture and publishes it on endpoints
// local (tasks with the job family, maxTasks 3), plain (tasks, no job
// family) and other (the same policy as local, another principal).
func newTasksHome(t *testing.T, bin string) string {
	t.Helper()
	dir := t.TempDir()
	pkg := copyTasksFixture(t, dir)
	home := filepath.Join(dir, "home")
	profile := filepath.Join(dir, "profile.json")
	ep := func(ns, tasks string) string {
		return fmt.Sprintf(`{"namespace":%q,"toolNames":"stable","publish":{"packages":["site.fixture"]},"tasks":%s}`, ns, tasks)
	}
	p := `{"endpoints":{"local":` + ep(tasksNamespace, `{"commands":["site.build"],"maxTasks":3,"ttlMs":60000,"jobTools":true}`) +
		`,"plain":` + ep("tasks-plain", `{"commands":["site.build"],"ttlMs":1000}`) +
		`,"other":` + ep("tasks-other", `{"commands":["site.build"],"jobTools":true}`) +
		`,"web":{"namespace":"tasks-web","transports":["http"],"httpAuth":"none","publish":{"packages":["site.fixture"]},"toolNames":"stable","tasks":{"commands":["site.build"]}}}}`
	if err := os.WriteFile(profile, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRukh(t, bin, home, "install", "--allow-unsigned", pkg)
	mustRukh(t, bin, home, "activate", "site.fixture")
	mustRukh(t, bin, home, "policy", "set", profile)
	mustRukh(t, bin, home, "publish")
	return home
}

// copyTasksFixture copies the task fixture package into dir/pkg, with this
// test process's marker, and returns its path.
func copyTasksFixture(t *testing.T, dir string) string {
	return copyFixture(t, "testdata/tasks/pkg", dir, "rukh-tasks-fixture-marker", tasksMarker)
}

// taskWire is a raw stdio session with serve-mcp --endpoint E.
type taskWire struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan []byte
	stderr *lockedBuffer
	n      int
}

func startTaskWire(t *testing.T, bin, home, endpoint string) *taskWire {
	t.Helper()
	cmd := exec.Command(bin, "serve-mcp", "--endpoint", endpoint)
	cmd.Env = rukhEnv(home)
	cmd.Dir = filepath.Dir(home)
	w := &taskWire{t: t, cmd: cmd, lines: make(chan []byte, 64), stderr: &lockedBuffer{}}
	cmd.Stderr = w.stderr
	var err error
	if w.in, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				w.lines <- line
			}
			if err != nil {
				close(w.lines)
				return
			}
		}
	}()
	t.Cleanup(func() {
		w.in.Close()
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("serve-mcp --endpoint %s stderr:\n%s", endpoint, w.stderr.String())
		}
	})
	return w
}

const tasksCaps = `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`

// request sends method with params (a JSON object body without braces)
// and the modern _meta with caps, and returns the response's result or
// error.
func (w *taskWire) request(method, params, caps string) (result, rpcErr map[string]stdjson.RawMessage) {
	w.t.Helper()
	w.n++
	id := strconv.Itoa(w.n)
	if params != "" {
		params += ","
	}
	line := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{` + params +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}}}`
	if _, err := io.WriteString(w.in, line+"\n"); err != nil {
		w.t.Fatal(err)
	}
	for {
		select {
		case raw, ok := <-w.lines:
			if !ok {
				w.t.Fatalf("serve-mcp closed stdout; stderr:\n%s", w.stderr.String())
			}
			var m map[string]stdjson.RawMessage
			if err := stdjson.Unmarshal(raw, &m); err != nil {
				w.t.Fatalf("not JSON: %q", raw)
			}
			if string(m["id"]) != id {
				continue // a notification
			}
			var r, e map[string]stdjson.RawMessage
			if m["result"] != nil {
				stdjson.Unmarshal(m["result"], &r)
			}
			if m["error"] != nil {
				stdjson.Unmarshal(m["error"], &e)
			}
			return r, e
		case <-time.After(time.Minute):
			w.t.Fatalf("no answer to %s", line)
		}
	}
}

func str(m map[string]stdjson.RawMessage, key string) string {
	var s string
	stdjson.Unmarshal(m[key], &s)
	return s
}

// startBuild calls site.build as a task and returns its id and the pid of
// its child (from the marker file).
func (w *taskWire) startBuild(tenths int, marker string) string {
	w.t.Helper()
	r, e := w.request("tools/call", fmt.Sprintf(`"name":"site_build","arguments":{"tenths":%d,"marker":%q}`, tenths, marker), tasksCaps)
	if e != nil || str(r, "resultType") != "task" || str(r, "status") != "working" || !strings.HasPrefix(str(r, "taskId"), "t-") {
		w.t.Fatalf("tools/call as a task: result %v error %v", r, e)
	}
	return str(r, "taskId")
}

// childPid waits for the marker file the child writes.
func childPid(t *testing.T, marker string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(marker); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("marker %q", b)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatal("the child never wrote its marker")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitGone waits until pid no longer exists and no process carries the
// fixture's marker.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("child %d still runs", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitProcs(t, tasksMarker, 0)
}

func (w *taskWire) getTask(id string) (map[string]stdjson.RawMessage, map[string]stdjson.RawMessage) {
	return w.request("tasks/get", fmt.Sprintf(`"taskId":%q`, id), tasksCaps)
}

func (w *taskWire) waitStatus(id, status string) map[string]stdjson.RawMessage {
	w.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		r, e := w.getTask(id)
		if e != nil {
			w.t.Fatalf("tasks/get %s: %v", id, e)
		}
		if str(r, "status") == status {
			return r
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("task %s is %s, want %s", id, str(r, "status"), status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestTasksExtension(t *testing.T) {
	bin := buildRukh(t)
	home := newTasksHome(t, bin)
	dir := t.TempDir()
	w := startTaskWire(t, bin, home, "local")

	r, _ := w.request("server/discover", "", `{}`)
	if !strings.Contains(string(r["capabilities"]), `"extensions":{"io.modelcontextprotocol/tasks":{}}`) {
		t.Errorf("discover capabilities %s", r["capabilities"])
	}
	// The job family is listed, named by the endpoint's mode (stable).
	r, _ = w.request("tools/list", "", `{}`)
	for _, name := range []string{"site_build", "site_quick", "rukh_task-status", "rukh_task-result", "rukh_task-cancel"} {
		if !strings.Contains(string(r["tools"]), `"name":"`+name+`"`) {
			t.Errorf("tools/list lacks %s: %s", name, r["tools"])
		}
	}

	t.Run("completes, with status messages, result fetched later", func(t *testing.T) {
		id := w.startBuild(10, filepath.Join(dir, "done.pid"))
		r := w.waitStatus(id, "working")
		for deadline := time.Now().Add(5 * time.Second); !strings.HasPrefix(str(r, "statusMessage"), "built "); r, _ = w.getTask(id) {
			if time.Now().After(deadline) {
				t.Fatalf("no statusMessage from the child's progress: %v", r)
			}
			time.Sleep(50 * time.Millisecond)
		}
		r = w.waitStatus(id, "completed")
		var res struct {
			StructuredContent map[string]any `json:"structuredContent"`
			IsError           bool           `json:"isError"`
		}
		if err := stdjson.Unmarshal(r["result"], &res); err != nil || res.IsError || res.StructuredContent["outcome"] != "succeeded" ||
			fmt.Sprint(res.StructuredContent["commandResult"]) != "map[kind:text text:built 10]" {
			t.Fatalf("completed task result %s (%v)", r["result"], err)
		}
		if str(r, "resultType") != "complete" || string(r["pollIntervalMs"]) == "" {
			t.Errorf("GetTaskResult members: %v", r)
		}
		// ttlMs counts from createdAt, as the extension says: the task is
		// kept its ttl (60 s) after it ended.
		created, err1 := time.Parse(time.RFC3339Nano, str(r, "createdAt"))
		ended, err2 := time.Parse(time.RFC3339Nano, str(r, "lastUpdatedAt"))
		if want := ended.Sub(created).Milliseconds() + 60_000; err1 != nil || err2 != nil || string(r["ttlMs"]) != strconv.FormatInt(want, 10) {
			t.Errorf("ttlMs %s, want %d: ttl after the end (%v %v)", r["ttlMs"], want, err1, err2)
		}
	})

	t.Run("tasks/cancel stops the child", func(t *testing.T) {
		marker := filepath.Join(dir, "cancel.pid")
		id := w.startBuild(600, marker)
		pid := childPid(t, marker)
		r, e := w.request("tasks/cancel", fmt.Sprintf(`"taskId":%q`, id), tasksCaps)
		if e != nil || str(r, "resultType") != "complete" {
			t.Fatalf("tasks/cancel: %v %v", r, e)
		}
		waitGone(t, pid)
		w.waitStatus(id, "cancelled")
		// Idempotent on a final task.
		if _, e := w.request("tasks/cancel", fmt.Sprintf(`"taskId":%q`, id), tasksCaps); e != nil {
			t.Errorf("a second tasks/cancel: %v", e)
		}
	})

	t.Run("rukh tasks cancel reaches the serving process", func(t *testing.T) {
		marker := filepath.Join(dir, "owner.pid")
		id := w.startBuild(600, marker)
		pid := childPid(t, marker)
		if out := mustRukh(t, bin, home, "tasks", "--endpoint", "local"); !strings.Contains(out, id) || !strings.Contains(out, "working") {
			t.Errorf("rukh tasks:\n%s", out)
		}
		began := time.Now()
		if out := mustRukh(t, bin, home, "tasks", "cancel", id); !strings.Contains(out, "cancelled task "+id) {
			t.Errorf("rukh tasks cancel: %s", out)
		}
		waitGone(t, pid)
		t.Logf("cancel to child gone: %v", time.Since(began))
		w.waitStatus(id, "cancelled")
	})

	t.Run("errors", func(t *testing.T) {
		if _, e := w.getTask("t-00000000000000000000000000000000"); e == nil || string(e["code"]) != "-32602" {
			t.Errorf("unknown task: %v", e)
		}
		_, e := w.request("tasks/get", `"taskId":"t-00000000000000000000000000000000"`, `{}`)
		if e == nil || string(e["code"]) != "-32021" || !strings.Contains(string(e["data"]), `"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`) {
			t.Errorf("tasks/get without the capability: %v", e)
		}
		// A call that may not become a task runs directly.
		r, _ := w.request("tools/call", `"name":"site_quick","arguments":{}`, tasksCaps)
		if str(r, "resultType") != "complete" || !strings.Contains(string(r["structuredContent"]), `"outcome":"succeeded"`) {
			t.Errorf("a direct call: %v", r)
		}
	})

	t.Run("maxTasks overflow is rejected at once", func(t *testing.T) {
		// Three kept tasks already (completed, cancelled, cancelled).
		began := time.Now()
		r, e := w.request("tools/call", `"name":"site_build","arguments":{"tenths":1}`, tasksCaps)
		if e != nil || str(r, "resultType") != "complete" || !strings.Contains(string(r["structuredContent"]), `"outcome":"rejected"`) ||
			!strings.Contains(string(r["structuredContent"]), "maxTasks") {
			t.Fatalf("over maxTasks: %v %v", r, e)
		}
		if d := time.Since(began); d > 20*time.Second {
			t.Errorf("the refusal took %v", d)
		}
	})

	t.Run("another endpoint cannot see or cancel the task", func(t *testing.T) {
		ts, err := listTasks(t, bin, home, "local")
		if err != nil || len(ts) == 0 {
			t.Fatalf("tasks %v %v", ts, err)
		}
		o := startTaskWire(t, bin, home, "other")
		for _, m := range []string{"tasks/get", "tasks/cancel"} {
			if _, e := o.request(m, fmt.Sprintf(`"taskId":%q`, ts[0].ID), tasksCaps); e == nil || string(e["code"]) != "-32602" {
				t.Errorf("%s of a foreign task: %v", m, e)
			}
		}
		r, _ := o.request("tools/call", fmt.Sprintf(`"name":"rukh_task-status","arguments":{"taskId":%q}`, ts[0].ID), `{}`)
		if !strings.Contains(string(r["isError"]), "true") || !strings.Contains(string(r["content"]), "no task") {
			t.Errorf("job status of a foreign task: %v", r)
		}
	})
}

type listedTask struct {
	ID     string `json:"id"`
	State  string `json:"state"`
	Reason string `json:"reason"`
}

func listTasks(t *testing.T, bin, home, endpoint string) ([]listedTask, error) {
	t.Helper()
	var out struct {
		Tasks []listedTask `json:"tasks"`
	}
	err := stdjson.Unmarshal([]byte(mustRukh(t, bin, home, "tasks", "--endpoint", endpoint, "--json")), &out)
	return out.Tasks, err
}

// A client without the extension never gets a task; on an endpoint without
// the job family it gets a direct call; a task that runs longer than its
// ttl keeps its result, and is purged ttl after it ended.
func TestTasksPlainEndpointAndExpiry(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits for a task's ttl to expire")
	}
	bin := buildRukh(t)
	home := newTasksHome(t, bin)
	w := startTaskWire(t, bin, home, "plain")
	r, _ := w.request("tools/call", `"name":"site_build","arguments":{"tenths":1}`, `{}`)
	if str(r, "resultType") != "complete" || !strings.Contains(string(r["structuredContent"]), `"built 1"`) {
		t.Fatalf("a call without the capability: %v", r)
	}
	r, _ = w.request("tools/list", "", `{}`)
	if strings.Contains(string(r["tools"]), "rukh_task-") {
		t.Errorf("the job family is listed without jobTools: %s", r["tools"])
	}
	id := w.startBuild(20, "") // two seconds; ttlMs 1000
	if r := w.waitStatus(id, "completed"); !strings.Contains(string(r["result"]), "built 20") {
		t.Fatalf("a task that ran past its ttl lost its result: %v", r)
	}
	time.Sleep(1100 * time.Millisecond)
	if _, e := w.getTask(id); e == nil || string(e["code"]) != "-32602" {
		t.Errorf("an expired task: %v", e)
	}
	if ts, _ := listTasks(t, bin, home, "plain"); len(ts) != 0 {
		t.Errorf("expired tasks still listed: %v", ts)
	}
}

// SIGTERM records every running task cancelled and stops its child; after a
// SIGKILL the next rukh that lists tasks records them cancelled.
func TestTasksServerEnd(t *testing.T) {
	bin := buildRukh(t)
	home := newTasksHome(t, bin)
	dir := t.TempDir()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			w := startTaskWire(t, bin, home, "other")
			// Another server of the endpoint, up before the end: it reads
			// the tasks as 'rukh tasks' does.
			w2 := startTaskWire(t, bin, home, "other")
			w2.request("tools/list", "", `{}`)
			var ids []string
			var pids []int
			for i := range 2 {
				marker := filepath.Join(dir, fmt.Sprintf("%d-%d.pid", sig, i))
				ids = append(ids, w.startBuild(600, marker))
				pids = append(pids, childPid(t, marker))
			}
			if err := w.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			w.cmd.Wait()
			for _, pid := range pids {
				waitGone(t, pid)
			}
			for _, id := range ids[:1] {
				if r, e := w2.getTask(id); e != nil || str(r, "status") != "cancelled" {
					t.Errorf("after %v tasks/get on another server: %s %s", sig, r, e)
				}
			}
			for _, id := range ids[1:] {
				r, e := w2.request("tools/call", fmt.Sprintf(`"name":"rukh_task-status","arguments":{"taskId":%q}`, id), `{}`)
				if e != nil || !strings.Contains(string(r["structuredContent"]), `"status":"cancelled"`) {
					t.Errorf("after %v task_status on another server: %s %s", sig, r, e)
				}
			}
			ts, err := listTasks(t, bin, home, "other")
			if err != nil {
				t.Fatal(err)
			}
			states := map[string]listedTask{}
			for _, tk := range ts {
				states[tk.ID] = tk
			}
			for _, id := range ids {
				if states[id].State != "cancelled" {
					t.Errorf("after %v task %s is %+v", sig, id, states[id])
				}
			}
		})
	}
}

// The job family, driven by a go-sdk client that knows nothing of tasks
// and waits at most a second per request, while the task takes three.
func TestTasksJobFamilyShortClientTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits for tasks that outlast the client's timeout")
	}
	bin := buildRukh(t)
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			home := newTasksHome(t, bin)
			c := newGoSDKClient(t, bin, home, version).(*goSDKClient)
			defer c.close()
			call := func(name string, args any) *mcp.CallToolResult {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				raw, _ := stdjson.Marshal(args)
				res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: stdjson.RawMessage(raw)})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				return res
			}
			structured := func(res *mcp.CallToolResult) map[string]any {
				m, _ := toPlain(res.StructuredContent)
				mm, _ := m.(map[string]any)
				return mm
			}
			began := time.Now()
			started := structured(call("site_build", map[string]any{"tenths": 30}))
			id, _ := started["taskId"].(string)
			if started["outcome"] != "started" || !strings.HasPrefix(id, "t-") {
				t.Fatalf("the background tool answered %v", started)
			}
			for {
				st := structured(call("rukh_task-status", map[string]any{"taskId": id}))
				if st["status"] == "completed" {
					break
				}
				if st["status"] != "working" || time.Since(began) > 15*time.Second {
					t.Fatalf("status %v", st)
				}
				time.Sleep(200 * time.Millisecond)
			}
			if d := time.Since(began); d < 3*time.Second {
				t.Errorf("the task took %v, under its three seconds", d)
			}
			res := call("rukh_task-result", map[string]any{"taskId": id})
			if env := structured(res); res.IsError || env["outcome"] != "succeeded" || fmt.Sprint(env["commandResult"]) != "map[kind:text text:built 30]" {
				t.Fatalf("result %v", env)
			}

			// Cancel through the job family stops the child.
			marker := filepath.Join(t.TempDir(), "job.pid")
			id, _ = structured(call("site_build", map[string]any{"tenths": 600, "marker": marker}))["taskId"].(string)
			pid := childPid(t, marker)
			if res := call("rukh_task-result", map[string]any{"taskId": id}); !res.IsError {
				t.Errorf("result of a working task is not an error")
			}
			if st := structured(call("rukh_task-cancel", map[string]any{"taskId": id})); st["status"] != "cancelled" {
				t.Errorf("cancel answered %v", st)
			}
			waitGone(t, pid)
		})
	}
}

// Over HTTP the Mcp-Name header of tasks/get and tasks/cancel carries the
// task id, and must match it.
func TestTasksHTTP(t *testing.T) {
	bin := buildRukh(t)
	home := newTasksHome(t, bin)
	url, _ := startHTTP(t, bin, home)
	url = strings.TrimSuffix(url, interopNamespace+"/local") + "tasks-web/web"
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + tasksCaps + `}`
	hdr := func(method, name string) map[string]string {
		return map[string]string{"Mcp-Method": method, "MCP-Protocol-Version": "2026-07-28", "Mcp-Name": name}
	}
	var created struct {
		Result struct {
			TaskID     string `json:"taskId"`
			ResultType string `json:"resultType"`
		} `json:"result"`
	}
	out := post(t, url, hdr("tools/call", "site_build"), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"site_build","arguments":{"tenths":3},`+meta+`}}`)
	if err := stdjson.Unmarshal(out, &created); err != nil || created.Result.ResultType != "task" {
		t.Fatalf("tools/call over HTTP: %s", out)
	}
	id := created.Result.TaskID
	if out := post(t, url, hdr("tasks/get", "t-other"), `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"`+id+`",`+meta+`}}`); !strings.Contains(string(out), "Header mismatch") {
		t.Errorf("a mismatched Mcp-Name: %s", out)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		out := post(t, url, hdr("tasks/get", id), `{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"`+id+`",`+meta+`}}`)
		if strings.Contains(string(out), `"status":"completed"`) {
			if !strings.Contains(string(out), `built 3`) {
				t.Errorf("completed without the result: %s", out)
			}
			break
		}
		if !strings.Contains(string(out), `"status":"working"`) || time.Now().After(deadline) {
			t.Fatalf("tasks/get over HTTP: %s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
