package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rogpeppe/go-internal/testscript"
)

// cmdMCPSession drives `rukh serve-mcp [ARGS...]` with the lines of FILE,
// one at a time: after a request (a line with "id" and "method") it waits
// for the answer with that id before sending the next line, so a transcript
// can call tools (serve-mcp stops unanswered calls at end of input). Then it
// closes stdin and waits for the server to exit with status N (default 0).
// The server's stdout and stderr become the script's. Lines starting with
// '#' are directives:
//
//	#send LINE      send LINE without waiting for its answer
//	#rukh ARGS...   run rukh ARGS (e.g. a publish) with the script's
//	                environment while the server runs; it must succeed
//	#waitfile NAME  wait up to 10 s for NAME (a child's readiness marker)
//	#signal SIG     send SIG (TERM, INT or HUP) to the server with stdin
//	                still open, then read its output to the end; it must be
//	                the last line
//
//	mcpsession [-exit=N] FILE [ARGS...]
func cmdMCPSession(ts *testscript.TestScript, neg bool, args []string) {
	wantExit := 0
	if len(args) > 0 {
		if n, ok := strings.CutPrefix(args[0], "-exit="); ok {
			var err error
			wantExit, err = strconv.Atoi(n)
			ts.Check(err)
			args = args[1:]
		}
	}
	if neg || len(args) < 1 {
		ts.Fatalf("usage: mcpsession [-exit=N] FILE [ARGS...]")
	}
	rukh, err := scriptRukh(ts)
	ts.Check(err)
	cmd := exec.Command(rukh, append([]string{"serve-mcp"}, args[1:]...)...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = scriptEnv(ts)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	ts.Check(err)
	out, err := cmd.StdoutPipe()
	ts.Check(err)
	ts.Check(cmd.Start())
	defer cmd.Process.Kill()

	lines := make(chan []byte)
	go func() {
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				lines <- line
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	stdout := ts.Stdout()
	signalled := false
	for _, line := range strings.Split(ts.ReadFile(args[0]), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if signalled {
			ts.Fatalf("mcpsession: #signal must be the last line")
		}
		directive, rest, _ := strings.Cut(line, " ")
		switch directive {
		case "#send":
			_, err := io.WriteString(in, rest+"\n")
			ts.Check(err)
			continue
		case "#rukh":
			c := exec.Command(rukh, strings.Fields(rest)...)
			c.Dir, c.Env = cmd.Dir, cmd.Env
			if b, err := c.CombinedOutput(); err != nil {
				ts.Fatalf("rukh %s: %v\n%s", rest, err, b)
			}
			continue
		case "#waitfile":
			cmdWaitFile(ts, false, []string{rest})
			continue
		case "#signal":
			sig := map[string]os.Signal{"TERM": syscall.SIGTERM, "INT": syscall.SIGINT, "HUP": syscall.SIGHUP}[rest]
			if sig == nil {
				ts.Fatalf("mcpsession: unknown signal %q", rest)
			}
			ts.Check(cmd.Process.Signal(sig))
			signalled = true
			continue
		}
		if strings.HasPrefix(line, "#") {
			ts.Fatalf("mcpsession: unknown directive %q", line)
		}
		_, err := io.WriteString(in, line+"\n")
		ts.Check(err)
		id := requestID(line)
		if id == "" {
			continue
		}
		timeout := time.After(time.Minute)
	wait:
		for {
			select {
			case got, ok := <-lines:
				if !ok {
					ts.Fatalf("serve-mcp closed stdout before answering %s\nstderr: %s", id, stderr.String())
				}
				stdout.Write(got)
				if responseID(got) == id {
					break wait
				}
			case <-timeout:
				ts.Fatalf("no answer to request %s within 20s", id)
			}
		}
	}
	if !signalled {
		in.Close()
	}
	for got := range lines {
		stdout.Write(got)
	}
	err = cmd.Wait()
	in.Close()
	ts.Stderr().Write([]byte(stderr.String()))
	got := 0
	if ee, ok := err.(*exec.ExitError); ok {
		got = ee.ExitCode()
	} else if err != nil {
		ts.Fatalf("serve-mcp: %v", err)
	}
	if got != wantExit {
		ts.Fatalf("serve-mcp exited %d, want %d\nstderr: %s", got, wantExit, stderr.String())
	}
}

// scriptRukh is the rukh on the script's PATH.
func scriptRukh(ts *testscript.TestScript) (string, error) {
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		if p := filepath.Join(dir, "rukh"); fileExists(p) {
			return p, nil
		}
	}
	return "", errors.New("rukh not on the script's PATH")
}

func scriptEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "RUKH_HOME", "RUKH_STORE", "LANG", "TMPDIR"} {
		env = append(env, k+"="+ts.Getenv(k))
	}
	return env
}

// requestID is the raw id of a request line, "" for anything else.
func requestID(line string) string {
	var m map[string]jsontext.Value
	if json.Unmarshal([]byte(line), &m) != nil || m["method"] == nil || m["id"] == nil {
		return ""
	}
	return string(m["id"])
}

func responseID(line []byte) string {
	var m map[string]jsontext.Value
	if json.Unmarshal(bytes.TrimSpace(line), &m) != nil || m["method"] != nil {
		return ""
	}
	return string(m["id"])
}

// cmdJSONRPCLines checks that every line of the script's stdout is exactly
// one strict JSON object (valid UTF-8, no duplicate names) with
// "jsonrpc":"2.0" and either a method or exactly one of result and error;
// with -count=N there must be N lines.
//
//	jsonrpclines [-count=N]
func cmdJSONRPCLines(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) > 1 {
		ts.Fatalf("usage: jsonrpclines [-count=N]")
	}
	want := -1
	if len(args) == 1 {
		n, ok := strings.CutPrefix(args[0], "-count=")
		if !ok {
			ts.Fatalf("usage: jsonrpclines [-count=N]")
		}
		var err error
		want, err = strconv.Atoi(n)
		ts.Check(err)
	}
	text := ts.ReadFile("stdout")
	if text != "" && !strings.HasSuffix(text, "\n") {
		ts.Fatalf("stdout does not end with a newline")
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if text == "" {
		lines = nil
	}
	for i, line := range lines {
		if err := checkJSONRPCLine([]byte(line)); err != nil {
			ts.Fatalf("stdout line %d: %v: %.200q", i+1, err, line)
		}
	}
	if want >= 0 && len(lines) != want {
		ts.Fatalf("stdout has %d lines, want %d", len(lines), want)
	}
}

// checkJSONRPCLine parses strictly: one value, valid UTF-8, no duplicate
// member names.
func checkJSONRPCLine(line []byte) error {
	var m map[string]jsontext.Value
	if err := json.Unmarshal(line, &m); err != nil {
		return err
	}
	if string(m["jsonrpc"]) != `"2.0"` {
		return fmt.Errorf(`"jsonrpc" is %s`, m["jsonrpc"])
	}
	_, hasResult := m["result"]
	_, hasError := m["error"]
	if m["method"] == nil && hasResult == hasError {
		return errors.New("a response needs exactly one of result and error")
	}
	return nil
}
