package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rogpeppe/go-internal/testscript"
)

// cmdMCPSession drives `rukh serve-mcp [ARGS...]` with the lines of FILE,
// one at a time: after a request (a line with "id" and "method") it waits
// for the answer with that id before sending the next line, so a transcript
// can call tools (serve-mcp stops unanswered calls at end of input). Then it
// closes stdin and waits for the server to exit 0. The server's stdout and
// stderr become the script's.
//
//	mcpsession FILE [ARGS...]
func cmdMCPSession(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: mcpsession FILE [ARGS...]")
	}
	cmd := exec.Command("rukh", append([]string{"serve-mcp"}, args[1:]...)...)
	cmd.Dir = ts.MkAbs(".")
	for _, k := range []string{"PATH", "HOME", "RUKH_HOME", "LANG", "TMPDIR"} {
		cmd.Env = append(cmd.Env, k+"="+ts.Getenv(k))
	}
	cmd.Path, cmd.Err = "", errors.New("rukh not on the script's PATH")
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		if p := filepath.Join(dir, "rukh"); fileExists(p) {
			cmd.Path, cmd.Err = p, nil
			break
		}
	}
	var stderr bytes.Buffer
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
	for _, line := range strings.Split(ts.ReadFile(args[0]), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		_, err := io.WriteString(in, line+"\n")
		ts.Check(err)
		id := requestID(line)
		if id == "" {
			continue
		}
		timeout := time.After(20 * time.Second)
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
	in.Close()
	for got := range lines {
		stdout.Write(got)
	}
	err = cmd.Wait()
	ts.Stderr().Write(stderr.Bytes())
	if err != nil {
		ts.Fatalf("serve-mcp: %v", err)
	}
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
