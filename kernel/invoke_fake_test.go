package kernel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// fakeArg marks a re-exec of the test binary as a fake extension: argv is
// [binary, fakeArg, behaviour] (execute.args), since the Runner passes no
// other environment.
const fakeArg = "rukh-fake-ext"

type fakeChan struct {
	f   *os.File
	r   *bufio.Reader
	raw string
	msg struct {
		InvocationID string         `json:"invocationId"`
		Command      string         `json:"command"`
		Input        map[string]any `json:"input"`
		Explicit     []string       `json:"explicit"`
		Interactive  bool           `json:"interactive"`
		DeadlineMs   int64          `json:"deadlineMs"`
	}
}

func openFakeChan() *fakeChan {
	if os.Getenv("RUKH_CHANNEL_FD") != "3" || os.Getenv("RUKH_PROTOCOL") != "rukh.invoke/1" {
		fmt.Fprintln(os.Stderr, "fake: not started by the runner")
		os.Exit(9)
	}
	c := &fakeChan{f: os.NewFile(3, "channel")}
	c.r = bufio.NewReader(c.f)
	line, err := c.r.ReadString('\n')
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake: read invoke:", err)
		os.Exit(9)
	}
	c.raw = strings.TrimSuffix(line, "\n")
	if err := json.Unmarshal([]byte(line), &c.msg); err != nil {
		fmt.Fprintln(os.Stderr, "fake: decode invoke:", err)
		os.Exit(9)
	}
	return c
}

func (c *fakeChan) sendRaw(s string) { c.f.WriteString(s + "\n") }

func (c *fakeChan) send(v any) {
	b, _ := json.Marshal(v)
	c.sendRaw(string(b))
}

func (c *fakeChan) report(outcome string, result any) {
	m := map[string]any{"type": "report", "invocationId": c.msg.InvocationID, "outcome": outcome}
	if result != nil {
		m["commandResult"] = result
	}
	c.send(m)
}

func text(s string) any { return map[string]any{"kind": "text", "text": s} }
func data(v any) any    { return map[string]any{"kind": "structured", "data": v} }

// runFake is one fake extension behaviour; its return value is the exit
// status.
func runFake(behaviour string) int {
	switch behaviour {
	case "sleep": // a grandchild: holds the inherited stdout until killed
		time.Sleep(time.Minute)
		return 0
	case "escapee": // a grandchild that left the session; with "double", its parent exited
		if len(os.Args) > 3 && os.Args[3] == "double" {
			exe, _ := os.Executable()
			g := exec.Command(exe, fakeArg, "escapee")
			g.Env = []string{} // no RUKH_INVOCATION_ID to find it by
			g.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if len(os.Args) > 4 && os.Args[4] == "held" {
				g.Stdout = os.Stdout // what a path without a subreaper finds it by
			}
			if g.Start() != nil {
				return 9
			}
			fmt.Println(g.Process.Pid)
			return 0
		}
		time.Sleep(time.Minute)
		return 0
	case "passthrough":
		fmt.Printf("args=%s\n", strings.Join(os.Args[3:], ","))
		return 7
	case "passthrough-hang":
		fmt.Println("ready")
		time.Sleep(time.Minute)
		return 0
	}
	c := openFakeChan()
	switch behaviour {
	case "text":
		c.report("succeeded", text(fmt.Sprintf("hello %v", c.msg.Input["title"])))
	case "structured":
		c.report("succeeded", data(map[string]any{"id": 42, "title": c.msg.Input["title"]}))
	case "echo-invoke":
		c.report("succeeded", text(c.raw))
	case "env":
		var keys []string
		for _, kv := range os.Environ() {
			k, _, _ := strings.Cut(kv, "=")
			keys = append(keys, k)
		}
		sort.Strings(keys)
		wd, _ := os.Getwd()
		pgid, err := syscall.Getpgid(0)
		b, _ := json.Marshal(map[string]any{
			"env": keys, "args": os.Args, "cwd": wd,
			"ownGroup":  err == nil && pgid == os.Getpid(),
			"initGroup": err == nil && pgid == 1 && os.Getppid() == 1,
			"id":        os.Getenv("RUKH_INVOCATION_ID"),
		})
		c.report("succeeded", text(string(b)))
	case "invoke-size":
		title, _ := c.msg.Input["title"].(string)
		c.report("succeeded", text(fmt.Sprintf("%d %d", len(c.raw), strings.Count(title, "x"))))
	case "confined-probe": // what a confined program can reach, as text
		var keys []string
		for _, kv := range os.Environ() {
			k, _, _ := strings.Cut(kv, "=")
			keys = append(keys, k)
		}
		sort.Strings(keys)
		wd, _ := os.Getwd()
		var fds []int // open beyond stdio and the channel
		for fd := 4; fd < 256; fd++ {
			if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil {
				fds = append(fds, fd)
			}
		}
		var ifaces []string
		if is, err := net.Interfaces(); err == nil {
			for _, i := range is {
				ifaces = append(ifaces, i.Name)
			}
		}
		_, readErr := os.ReadFile("/etc/hostname")
		writeErr := os.WriteFile(filepath.Join(filepath.Dir(os.Args[0]), "rukh-probe-x"), nil, 0o600) // the release: read only
		scratchErr := os.WriteFile(filepath.Join(os.Getenv("RUKH_SCRATCH"), "x"), nil, 0o600)
		errs := func(err error) string {
			if err == nil {
				return "ok"
			}
			return "refused"
		}
		var uname unix.Utsname
		unix.Uname(&uname)
		b, _ := json.Marshal(map[string]any{
			"env": keys, "args": os.Args, "cwd": wd, "fds": fds, "ifaces": ifaces,
			"pid": os.Getpid(), "ppid": os.Getppid(),
			"readEtc": errs(readErr), "writeOutside": errs(writeErr), "writeScratch": errs(scratchErr),
			"stdin": fmt.Sprint(io.ReadAll(os.Stdin)),
		})
		c.report("succeeded", text(string(b)))
	case "stdin":
		b, err := io.ReadAll(os.Stdin)
		if err != nil {
			c.report("command_failed", nil)
			return 1
		}
		c.report("succeeded", text(string(b)))
	case "fail":
		c.send(map[string]any{"type": "report", "invocationId": c.msg.InvocationID, "outcome": "command_failed", "reason": "no such note"})
		return 1
	case "fail-result-exit0", "fail-result":
		c.send(map[string]any{"type": "report", "invocationId": c.msg.InvocationID, "outcome": "command_failed", "reason": "partly done", "commandResult": text("3 of 5")})
		if behaviour == "fail-result" {
			return 1
		}
		return 0
	case "fail-bad-result":
		c.send(map[string]any{"type": "report", "invocationId": c.msg.InvocationID, "outcome": "command_failed", "commandResult": map[string]any{"kind": "text"}})
		return 1
	case "succeed-exit1":
		c.report("succeeded", text("done"))
		return 1
	case "crash":
		fmt.Fprintln(os.Stderr, "fatal: something broke")
		return 2
	case "panic":
		panic("boom")
	case "signal":
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Second)
	case "foreign-id":
		c.send(map[string]any{"type": "report", "invocationId": "inv_someoneelse", "outcome": "succeeded", "commandResult": text("x")})
	case "bad-outcome":
		c.report("cancelled", nil)
	case "bad-schema":
		c.report("succeeded", data(map[string]any{"id": "forty-two"}))
	case "wrong-kind":
		c.report("succeeded", text("not structured"))
	case "text-extra-member":
		c.report("succeeded", map[string]any{"kind": "text", "text": "x", "html": "<b>x</b>"})
	case "big-result":
		c.report("succeeded", text(strings.Repeat("a", 200<<10)))
	case "deep":
		var v any = 1
		for range 20 {
			v = []any{v}
		}
		c.report("succeeded", data(map[string]any{"id": 1, "nest": v}))
	case "many-members":
		arr := make([]int, 3000)
		c.report("succeeded", data(map[string]any{"id": 1, "list": arr}))
	case "no-result":
		c.report("succeeded", nil)
	case "invalid-json":
		c.sendRaw(`{"type":"report",`)
	case "duplicate-key":
		c.sendRaw(`{"type":"progress","message":"a","message":"b"}`)
	case "unknown-type":
		c.send(map[string]any{"type": "hello"})
	case "second-report":
		c.report("succeeded", text("one"))
		c.report("succeeded", text("two"))
	case "progress":
		for i := 1; i <= 3; i++ {
			c.send(map[string]any{"type": "progress", "message": fmt.Sprintf("step %d", i), "progress": i, "total": 3})
		}
		c.report("succeeded", text("done"))
	case "hang": // ignores the cancel message, dies on SIGTERM
		time.Sleep(time.Minute)
	case "progress-hang": // one progress message, then as hang
		c.send(map[string]any{"type": "progress", "message": "waiting"})
		time.Sleep(time.Minute)
	case "cancel-aware":
		line, _ := c.r.ReadString('\n')
		c.send(map[string]any{"type": "report", "invocationId": c.msg.InvocationID, "outcome": "command_failed", "reason": "got " + strings.TrimSpace(line)})
		return 1
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		time.Sleep(time.Minute)
	case "leave-group": // ignores SIGTERM, joins its init's process group, hangs
		signal.Ignore(syscall.SIGTERM)
		if err := syscall.Setpgid(0, 1); err != nil {
			fmt.Fprintln(os.Stderr, "fake: setpgid:", err)
			return 9
		}
		time.Sleep(time.Minute)
	case "grandchildren":
		exe, _ := os.Executable()
		for range 2 {
			g := exec.Command(exe, fakeArg, "sleep")
			g.Stdout = os.Stdout // holds the stdout pipe open
			g.Stderr = os.Stderr
			if err := g.Start(); err != nil {
				return 9
			}
		}
		c.report("succeeded", text(fmt.Sprint(os.Getpid())))
	case "escape": // reports "PID_NAMESPACE SETSID_PID DOUBLE_FORKED_PID", leaves both running
		exe, _ := os.Executable()
		a := exec.Command(exe, fakeArg, "escapee")
		a.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if a.Start() != nil {
			return 9
		}
		pid, err := exec.Command(exe, fakeArg, "escapee", "double").Output()
		if err != nil {
			return 9
		}
		ns, _ := os.Readlink("/proc/self/ns/pid")
		c.report("succeeded", text(fmt.Sprintf("%s %d %s", ns, a.Process.Pid, strings.TrimSpace(string(pid)))))
	case "escape-hang": // leaves a setsid and a double-forked escapee, then hangs
		exe, _ := os.Executable()
		a := exec.Command(exe, fakeArg, "escapee")
		a.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		middle := exec.Command(exe, fakeArg, "escapee", "double", "held")
		middle.Stdout = os.Stdout
		if a.Start() != nil || middle.Run() != nil {
			return 9
		}
		time.Sleep(time.Minute)
	case "session": // whether the program leads its own session, and its tty_nr
		sid, _ := unix.Getsid(0)
		st, _ := os.ReadFile("/proc/self/stat")
		f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:]))
		c.report("succeeded", text(fmt.Sprintf("leader=%v init=%v tty_nr=%s", sid == os.Getpid(), sid == 1 && os.Getppid() == 1, f[4])))
	case "record-stop": // logs to the file named by input title what reaches it, never exits
		log, err := os.Create(fmt.Sprint(c.msg.Input["title"]))
		if err != nil {
			return 9
		}
		note := func(what string) { fmt.Fprintf(log, "%s %d\n", what, time.Now().UnixMicro()) }
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGTERM)
		go func() {
			for range sigs {
				note("term")
			}
		}()
		if line, _ := c.r.ReadString('\n'); strings.Contains(line, `"type":"cancel"`) {
			note("cancel")
		}
		time.Sleep(time.Minute)
	case "close-early":
		c.f.Close()
	case "flood-output":
		chunk := []byte(strings.Repeat("o", 64<<10))
		for range 128 { // 8 MiB to each stream
			os.Stdout.Write(chunk)
			os.Stderr.Write(chunk)
		}
		c.report("succeeded", text("flooded"))
	case "flood-channel":
		chunk := strings.Repeat("x", 64<<10)
		for range 160 { // 10 MiB, no newline
			if _, err := c.f.WriteString(chunk); err != nil {
				return 3
			}
		}
	default:
		fmt.Fprintln(os.Stderr, "fake: unknown behaviour", behaviour)
		return 9
	}
	return 0
}
