//go:build unix

package mcpstdio

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestIsolateStdout re-runs the test binary as a child that isolates its
// stdout, then prints, writes os.Stdout and panics: only the protocol
// writes may reach the real stdout.
func TestIsolateStdout(t *testing.T) {
	if os.Getenv("MCPSTDIO_ISOLATE_CHILD") == "1" {
		proto, err := IsolateStdout()
		if err != nil {
			fmt.Fprintln(os.Stderr, "isolate:", err)
			os.Exit(3)
		}
		fmt.Println("stray print")
		os.Stdout.WriteString("stray write\n")
		proto.WriteString(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n")
		// A child process inheriting fd 1 must not get the protocol stream.
		c := exec.Command("sh", "-c", "echo from-child")
		c.Stdout = os.Stdout
		c.Run()
		panic("a panic trace")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestIsolateStdout$")
	cmd.Env = append(os.Environ(), "MCPSTDIO_ISOLATE_CHILD=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// A pipe left open after the child ends fails the test, not the run.
	cmd.WaitDelay = time.Minute
	_ = cmd.Run() // the child panics on purpose
	if got := stdout.String(); got != `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n" {
		t.Errorf("stdout = %q", got)
	}
	for _, want := range []string{"stray print", "stray write", "from-child", "a panic trace"} {
		if !bytes.Contains(stderr.Bytes(), []byte(want)) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}
