//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// session is one running `rukh serve-mcp`, spoken to one request at a time.
type session struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte
	stderr *lockedBuffer
	nextID int
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// start spawns serve-mcp; it does not wait for anything.
func (h *home) start() (*session, error) { return h.startEnv() }

// startEnv is start with extra environment entries.
func (h *home) startEnv(extra ...string) (*session, error) {
	cmd := exec.Command(h.c.rukh, "serve-mcp")
	cmd.Env = append(h.env(), extra...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s := &session{cmd: cmd, stdin: stdin, lines: make(chan []byte, 1), stderr: &lockedBuffer{}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		r := bufio.NewReaderSize(stdout, 4<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				s.lines <- line
			}
			if err != nil {
				close(s.lines)
				return
			}
		}
	}()
	return s, nil
}

// roundTrip writes one request line and returns the next response line and
// the time from just before the write to just after the line arrived.
func (s *session) roundTrip(line []byte) ([]byte, time.Duration, error) {
	t := time.Now()
	if _, err := s.stdin.Write(line); err != nil {
		return nil, 0, fmt.Errorf("write: %v (stderr: %s)", err, s.stderr.String())
	}
	select {
	case resp, ok := <-s.lines:
		d := time.Since(t)
		if !ok {
			return nil, 0, fmt.Errorf("serve-mcp closed its stdout (stderr: %s)", s.stderr.String())
		}
		return resp, d, nil
	case <-time.After(30 * time.Second):
		// A hung server says where it hangs: SIGQUIT makes the Go runtime
		// print every goroutine's stack on its stderr.
		s.cmd.Process.Signal(syscall.SIGQUIT)
		time.Sleep(time.Second)
		return nil, 0, fmt.Errorf("no response in 30 s to %.200s (stderr: %s)", line, s.stderr.String())
	}
}

func (s *session) request(method, params string) []byte {
	s.nextID++
	if params != "" {
		params = "," + params
	}
	return []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(s.nextID) + `,"method":"` + method + `","params":{` + modernMeta + params + "}}\n")
}

func (s *session) discover() []byte { return s.request("server/discover", "") }

func (s *session) list(cursor string) []byte {
	if cursor == "" {
		return s.request("tools/list", "")
	}
	c, _ := json.Marshal(cursor)
	return s.request("tools/list", `"cursor":`+string(c))
}

func (s *session) call(name, args string) []byte {
	n, _ := json.Marshal(name)
	return s.request("tools/call", `"name":`+string(n)+`,"arguments":`+args)
}

// response is the part of a JSON-RPC response the bench checks.
type response struct {
	Result struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		NextCursor        string `json:"nextCursor"`
		IsError           bool   `json:"isError"`
		StructuredContent struct {
			Outcome string `json:"outcome"`
			Reason  string `json:"reason"`
		} `json:"structuredContent"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func decode(line []byte) (*response, error) {
	var r response
	if err := json.Unmarshal(line, &r); err != nil {
		return nil, fmt.Errorf("response %.200q: %v", line, err)
	}
	if r.Error != nil {
		return nil, fmt.Errorf("JSON-RPC error %d: %s", r.Error.Code, r.Error.Message)
	}
	return &r, nil
}

// checkCall fails unless a tools/call response is a succeeded result.
func checkCall(line []byte) error {
	r, err := decode(line)
	if err != nil {
		return err
	}
	if r.Result.IsError || r.Result.StructuredContent.Outcome != "succeeded" {
		return fmt.Errorf("call did not succeed: %.300s", line)
	}
	return nil
}

// toolNamed pages through tools/list for the first tool whose name starts
// with prefix.
func (s *session) toolNamed(prefix string) (string, error) {
	cursor := ""
	for {
		line, _, err := s.roundTrip(s.list(cursor))
		if err != nil {
			return "", err
		}
		r, err := decode(line)
		if err != nil {
			return "", err
		}
		for _, t := range r.Result.Tools {
			if strings.HasPrefix(t.Name, prefix) {
				return t.Name, nil
			}
		}
		if r.Result.NextCursor == "" {
			return "", fmt.Errorf("no tool named %s*", prefix)
		}
		cursor = r.Result.NextCursor
	}
}

// close ends the session (EOF on stdin) and waits for the process.
func (s *session) close() error {
	s.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-done
		return fmt.Errorf("serve-mcp did not exit 10 s after EOF")
	}
}

// procStatus reads kB fields (VmHWM, VmRSS) from /proc/PID/status.
func procStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}
