package main

import (
	"bufio"
	stdjson "encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A client that closes serve-mcp's stderr must not kill the server with
// SIGPIPE while calls run: at end of input it still stops every child and
// exits on its own.
func TestServeSurvivesClosedStderr(t *testing.T) {
	bin := buildRukh(t)
	home := newInteropHome(t, bin, "testdata/interop/pkg", "interop.fake")
	hang := toolByID(t, expectedTools(t, bin, home), "interop.hang")

	cmd := exec.Command(bin, "serve-mcp")
	cmd.Env = rukhEnv(home)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = errW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	errW.Close()
	errR.Close() // nobody will ever read the server's stderr
	go bufio.NewReader(stdout).WriteTo(new(strings.Builder))

	fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":{},%s}}`+"\n", hang, modernMeta)
	waitProcs(t, hangMarker, 1)
	stdin.Close() // end of input: stop the call, say so on stderr, exit

	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatal("serve-mcp did not exit after end of input")
	}
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() {
		t.Fatalf("serve-mcp was killed by %v", ws.Signal())
	}
	waitProcs(t, hangMarker, 0)
}

// A client that waits for each answer before its next call never has two
// in flight, so even maxHeld 1 must never reject it: the slot is free
// before the client can read the response.
func TestSequentialCallsFitMaxHeldOne(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: hundreds of calls one after another")
	}
	bin := buildRukh(t)
	home := newInteropHome(t, bin, "testdata/interop/pkg", "interop.fake")
	profile := filepath.Join(t.TempDir(), "profile.json")
	p := fmt.Sprintf(`{"endpoints":{"local":{"namespace":%q,"template":"one","publish":{"packages":["interop.fake"]}}},
	 "templates":{"one":{"maxConcurrent":1,"maxHeld":1}}}`, interopNamespace)
	if err := os.WriteFile(profile, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRukh(t, bin, home, "policy", "set", profile)
	mustRukh(t, bin, home, "publish")
	var listed struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := stdjson.Unmarshal([]byte(mustRukh(t, bin, home, "tools", "--json")), &listed); err != nil {
		t.Fatal(err)
	}
	var greet string
	for _, tool := range listed.Tools {
		if strings.HasPrefix(tool.Name, "interop_greet__") {
			greet = tool.Name
		}
	}

	cmd := exec.Command(bin, "serve-mcp")
	cmd.Env = rukhEnv(home)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	r := bufio.NewReader(stdout)
	for i := 0; i < 200; i++ {
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{},%s}}`+"\n", i, greet, modernMeta)
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(line, `"outcome":"succeeded"`) {
			t.Fatalf("call %d of a strictly sequential client: %s", i, line)
		}
	}
}
