//go:build linux

package main

// After SIGKILL of rukh itself nothing of it runs to clean up. Where the
// host has PID namespaces the kernel kills what an invocation started
// when its init dies with rukh; elsewhere the next rukh process on the
// home kills what the killed one recorded.

import (
	stdjson "encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// recorded: every pid is named in a record of the home's processes.
func recorded(home string, pids []int) bool {
	files, _ := filepath.Glob(filepath.Join(home, "processes", "*"))
	var fields []string
	for _, f := range files {
		b, _ := os.ReadFile(f)
		fields = append(fields, strings.Fields(string(b))...)
	}
	for _, pid := range pids {
		if !slices.Contains(fields, strconv.Itoa(pid)) {
			return false
		}
	}
	return true
}

// TestKilledRukhIsSwept: SIGKILL of serve-mcp, of serve-http and of a CLI
// run, during a call whose extension forked a grandchild, a setsid daemon
// and a double-forked daemon. In PID namespaces none of them is alive 2 s
// after the kill. Without (RUKH_WITHOUT=namespaces, the path of hosts
// that have none) the killed rukh cannot kill them: they run right after
// the kill, and the next rukh start on the home (rukh status) kills them.
func TestKilledRukhIsSwept(t *testing.T) {
	bin := buildRukh(t)
	home := newProcsHome(t, bin, procsNoDeadline)
	for _, contain := range []string{"namespaces", "sweep"} {
		for _, via := range []string{"mcp", "http", "cli"} {
			t.Run(contain+"/"+via, func(t *testing.T) { killRukhDuringCall(t, bin, home, via, contain == "namespaces") })
		}
	}
}

func killRukhDuringCall(t *testing.T, bin, home, via string, namespaces bool) {
	if !namespaces {
		t.Setenv("RUKH_WITHOUT", "namespaces")
	}
	dir := t.TempDir()
	defer func() {
		for _, m := range readMarkers(dir) { // never leak into other tests
			m.kill()
		}
	}()
	stderr, err := os.Create(filepath.Join(dir, ".stderr"))
	must(t, err)
	defer stderr.Close()
	logs := func() string { b, _ := os.ReadFile(stderr.Name()); return string(b) }
	var rukh *exec.Cmd
	if via == "mcp" {
		s, err := startProcsServer(bin, home, nil, stderr, nil)
		must(t, err)
		rukh = s.cmd
		must(t, s.call("c1", "procs."+escapeShape, map[string]string{"dir": dir, "mode": "hang"}))
	} else if via == "http" {
		var base string
		rukh, base = startSweepHTTP(t, bin, home, stderr)
		token := agentToken(t, bin, home, "sweeper-"+strconv.FormatBool(namespaces))
		reply := make(chan string, 1)
		go func() {
			reply <- httpToolCall(base+"/mcp/v1/"+procsNamespace+"/local", token, "procs."+escapeShape, map[string]string{"dir": dir, "mode": "hang"})
		}()
		logs = func() string {
			b, _ := os.ReadFile(stderr.Name())
			select {
			case r := <-reply:
				return string(b) + "reply: " + r
			default:
				return string(b)
			}
		}
	} else {
		rukh = exec.Command(bin, "procs", escapeShape, "--dir", dir, "--mode", "hang")
		rukh.Env, rukh.Dir = rukhEnv(home), dir
		rukh.Stdout, rukh.Stderr = stderr, stderr
		must(t, rukh.Start())
	}
	defer rukh.Process.Kill()
	want := procCount(escapeShape)
	if !waitFor(procsStartWait, func() bool { return len(readMarkers(dir)) == want }) {
		t.Fatalf("only %d of %d processes started\n%s", len(readMarkers(dir)), want, logs())
	}
	var daemons []int
	for _, m := range readMarkers(dir) {
		if m.role == "child" {
			daemons = append(daemons, m.pid)
		}
	}
	self, _ := os.Readlink("/proc/self/ns/pid")
	for _, m := range readMarkers(dir) {
		if (m.ns != self) != namespaces {
			t.Fatalf("%s %d ran in PID namespace %s (the test's is %s), with namespaces %v", m.role, m.pid, m.ns, self, namespaces)
		}
	}
	if namespaces {
		rukh.Process.Signal(syscall.SIGKILL)
		if _, err := waitExit(rukh, procsStopWait); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		if alive := survivors(readMarkers(dir), ""); len(alive) > 0 {
			t.Fatalf("alive 2 s after the kill: %v\n%s", alive, logs())
		}
		return
	}
	// Recording is sampled: give it time, but let a rukh that never
	// records fail below, on what is left running.
	if !waitFor(procsStartWait, func() bool { return recorded(home, daemons) }) {
		t.Logf("%v not recorded in %s/processes", daemons, home)
	}
	rukh.Process.Signal(syscall.SIGKILL)
	if _, err := waitExit(rukh, procsStopWait); err != nil {
		t.Fatal(err)
	}
	if !waitFor(procsGoneWait, func() bool { return len(survivors(readMarkers(dir), "leader")) == 0 }) {
		t.Fatalf("the leader outlived rukh: %v", survivors(readMarkers(dir), "leader"))
	}
	// The gap the sweep closes: at least the setsid and the
	// double-forked daemon outlive the killed rukh.
	if alive := survivors(readMarkers(dir), "child"); len(alive) < 2 {
		t.Fatalf("only %v ran right after the kill; the test no longer shows what the sweep is for", alive)
	}
	out, errOut, code := runRukh(t, bin, home, "status")
	if code != 0 {
		t.Fatalf("rukh status: exit %d\n%s%s", code, out, errOut)
	}
	if strings.Contains(errOut, "warning") {
		t.Errorf("rukh status warned: %s", errOut)
	}
	if !waitFor(procsGoneWait, func() bool { return len(survivors(readMarkers(dir), "")) == 0 }) {
		t.Fatalf("still running after the next rukh start: %v\n%s", survivors(readMarkers(dir), ""), logs())
	}
	if files, _ := filepath.Glob(filepath.Join(home, "processes", "*")); len(files) != 0 {
		t.Errorf("records left after the sweep: %v", files)
	}
}

// startSweepHTTP starts serve-http on the home with its stderr in a file,
// as the extension's daemons may hold a pipe open past rukh's end, and
// returns it with its base URL once it listens.
func startSweepHTTP(t *testing.T, bin, home string, stderr *os.File) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, "serve-http", "--listen", "127.0.0.1:0", "--rate", "0")
	cmd.Env, cmd.Dir = rukhEnv(home), filepath.Dir(home)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	must(t, cmd.Start())
	var base string
	if !waitFor(time.Minute, func() bool {
		b, _ := os.ReadFile(stderr.Name())
		if m := listeningRE.FindStringSubmatch(string(b)); m != nil {
			base = m[1]
		}
		return base != ""
	}) {
		cmd.Process.Kill()
		b, _ := os.ReadFile(stderr.Name())
		t.Fatalf("serve-http did not start:\n%s", b)
	}
	return cmd, base
}

// agentToken adds an agent of the procs endpoint and returns its key.
func agentToken(t *testing.T, bin, home, name string) string {
	t.Helper()
	var rep struct{ Token string }
	out := mustRukh(t, bin, home, "agent", "add", name, "--endpoint", "local", "--json")
	if err := stdjson.Unmarshal([]byte(out), &rep); err != nil || !strings.HasPrefix(rep.Token, "rukh_") {
		t.Fatalf("rukh agent add: no token in %q (%v)", out, err)
	}
	return rep.Token
}

// httpToolCall calls command over HTTP and returns the reply once the
// server answers or goes away.
func httpToolCall(url, token, command string, args map[string]string) string {
	a, _ := stdjson.Marshal(args)
	tool := procsTool(command)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s,%s}}`, tool, a, modernMeta)
	r, _ := http.NewRequest("POST", url, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Method", "tools/call")
	r.Header.Set("Mcp-Name", tool)
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		return err.Error()
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.Status + " " + string(out)
}
