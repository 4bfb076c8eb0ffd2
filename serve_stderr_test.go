package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
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
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatal("serve-mcp did not exit after end of input")
	}
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() {
		t.Fatalf("serve-mcp was killed by %v", ws.Signal())
	}
	waitProcs(t, hangMarker, 0)
}
