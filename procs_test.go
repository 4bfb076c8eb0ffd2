//go:build linux

package main

// Process hygiene through the real binary: for every way an invocation stops
// and every shape of child process, nothing the extension started is left
// running. Each process of the fake extension ("procs" behaviours below)
// writes "PID STARTTIME ROLE" into the case's directory; after the stop the
// test checks each of those processes by pid (the start time guards against
// pid reuse; a zombie counts as gone), never by name.

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/gowebpki/jcs"
	"golang.org/x/sys/unix"
)

// procShapes are the child shapes and how many processes each starts.
var procShapes = []struct {
	name  string
	procs int
}{
	{"simple", 1},   // the leader alone
	{"group", 3},    // two grandchildren in the leader's process group
	{"setsid", 2},   // a grandchild in a session of its own
	{"double", 3},   // double fork: a child starts a grandchild that leaves the session and clears its environment, then exits
	{"stubborn", 3}, // leader and two grandchildren ignore SIGTERM
}

// escapeShape starts all three kinds that outlive a killed rukh: a
// grandchild in the leader's group, a setsid daemon and a double-forked
// daemon (whose middle exits); TestKilledRukhIsSwept runs it.
const escapeShape = "escape"

func procCount(shape string) int {
	if shape == escapeShape {
		return 5
	}
	for _, s := range procShapes {
		if s.name == shape {
			return s.procs
		}
	}
	return 0
}

// fakeProcs is the leader of a "procs" command: it starts its shape, waits
// until every process wrote its marker, then exits, fails or hangs as the
// input's mode says. "fds" and "tty" report what the program can see.
func fakeProcs(args []string, input jsontext.Value, report func(outcome, text string)) int {
	var in struct{ Dir, Mode string }
	stdjson.Unmarshal(input, &in)
	shape := args[0]
	switch shape {
	case "fds": // where every open descriptor points
		ents, _ := os.ReadDir("/proc/self/fd")
		var links []string
		for _, e := range ents {
			l, _ := os.Readlink("/proc/self/fd/" + e.Name())
			links = append(links, e.Name()+"="+l)
		}
		report("succeeded", strings.Join(links, " "))
		return 0
	case "tty": // whether the program can reach a controlling terminal
		devtty := "ok"
		if f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0); err != nil {
			devtty = err.Error()
		} else {
			f.Close()
		}
		b, _ := os.ReadFile("/proc/self/stat") // its own, in any PID namespace
		st := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		// A session of its own: it leads it, or its init (PID namespace)
		// does; another session's id is 0 inside a PID namespace.
		sid, _ := unix.Getsid(0)
		session := "inherited"
		if sid == os.Getpid() || sid == os.Getppid() {
			session = "own"
		}
		line := fmt.Sprintf("devtty=%s tty_nr=%s session=%s", devtty, st[4], session)
		if strings.HasPrefix(in.Dir, "/dev/pts/") { // the terminal, by name
			line += " tiocsti=" + tiocsti(in.Dir)
		}
		report("succeeded", line)
		return 0
	}
	markSelf(in.Dir, "leader")
	switch shape {
	case "group":
		startFake(nil, nil, "procs-child", in.Dir)
		startFake(nil, nil, "procs-child", in.Dir)
	case "setsid":
		startFake(&syscall.SysProcAttr{Setsid: true}, nil, "procs-child", in.Dir)
	case "double":
		startFake(nil, nil, "procs-middle", in.Dir)
	case escapeShape:
		startFake(nil, nil, "procs-child", in.Dir)
		startFake(&syscall.SysProcAttr{Setsid: true}, nil, "procs-child", in.Dir)
		startFake(nil, nil, "procs-middle", in.Dir)
	case "stubborn":
		signal.Ignore(syscall.SIGTERM)
		startFake(nil, nil, "procs-child", in.Dir, "stubborn")
		startFake(nil, nil, "procs-child", in.Dir, "stubborn")
	}
	for deadline := time.Now().Add(time.Minute); len(readMarkers(in.Dir)) < procCount(shape); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			return 9
		}
	}
	switch in.Mode {
	case "exit":
		report("succeeded", "started")
		return 0
	case "fail":
		report("command_failed", "")
		return 1
	}
	time.Sleep(time.Hour) // hang: ignores cancel; SIGTERM ends it unless stubborn
	return 0
}

// tiocsti opens the terminal tty by its name and pushes a byte into its
// input, as a program would type into the owner's shell; it says "ok" or
// why not. CAP_SYS_ADMIN, which allows it on any terminal, is dropped
// first (the tests may run as root).
func tiocsti(tty string) string {
	runtime.LockOSThread() // capabilities are per thread
	defer runtime.UnlockOSThread()
	h := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var c [2]unix.CapUserData
	if err := unix.Capget(&h, &c[0]); err != nil {
		return "capget: " + err.Error()
	}
	c[unix.CAP_SYS_ADMIN/32].Effective &^= 1 << (unix.CAP_SYS_ADMIN % 32)
	if err := unix.Capset(&h, &c[0]); err != nil {
		return "capset: " + err.Error()
	}
	fd, err := unix.Open(tty, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "open: " + err.Error()
	}
	defer unix.Close(fd)
	b := byte('\n')
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TIOCSTI, uintptr(unsafe.Pointer(&b))); e != 0 {
		return e.Error()
	}
	return "ok"
}

// fakeProcsChild runs the grandchildren of fakeProcs, which have no channel.
func fakeProcsChild(args []string) (int, bool) {
	if len(args) < 2 {
		return 0, false
	}
	switch args[0] {
	case "procs-child": // DIR [stubborn]: holds stdout and stderr until killed
		if len(args) > 2 && args[2] == "stubborn" {
			signal.Ignore(syscall.SIGTERM)
		}
		markSelf(args[1], "child")
		time.Sleep(time.Hour)
		return 0, true
	case "procs-middle": // DIR: start an escaping grandchild, then exit
		markSelf(args[1], "middle")
		startFake(&syscall.SysProcAttr{Setsid: true}, []string{}, "procs-child", args[1])
		return 0, true
	}
	return 0, false
}

// startFake starts this binary as rukh-fake-ext with args, sharing stdout
// and stderr (so a stream stays open while it lives).
func startFake(attr *syscall.SysProcAttr, env []string, args ...string) {
	exe, err := os.Executable()
	if err != nil {
		os.Exit(9)
	}
	cmd := &exec.Cmd{Path: exe, Args: append([]string{"rukh-fake-ext"}, args...), Env: env,
		Stdout: os.Stdout, Stderr: os.Stderr, SysProcAttr: attr}
	if env == nil {
		cmd.Env = os.Environ()
	}
	if err := cmd.Start(); err != nil {
		os.Exit(9)
	}
}

// statFields are the fields of /proc/PID/stat after the command name: [0]
// is the state, [1] the parent, [4] tty_nr, [19] the start time.
func statFields(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

// markSelf writes the process's pid, start time, role and PID namespace:
// a pid is its namespace's, and the test finds its pid on the host by the
// other three (hostPID).
func markSelf(dir, role string) {
	pid := os.Getpid()
	b, _ := os.ReadFile("/proc/self/stat")
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	ns, _ := os.Readlink("/proc/self/ns/pid")
	tmp := filepath.Join(dir, ".tmp-"+strconv.Itoa(pid))
	os.WriteFile(tmp, fmt.Appendf(nil, "%d %s %s %s", pid, f[19], role, ns), 0o644)
	os.Rename(tmp, filepath.Join(dir, strconv.Itoa(pid)))
}

type procMarker struct {
	pid             int
	start, role, ns string
}

func readMarkers(dir string) []procMarker {
	ents, _ := os.ReadDir(dir)
	var ms []procMarker
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		f := strings.Fields(string(b))
		if err != nil || len(f) != 4 {
			continue
		}
		pid, _ := strconv.Atoi(f[0])
		ms = append(ms, procMarker{pid, f[1], f[2], f[3]})
	}
	return ms
}

// hostPID is the marked process's pid on the host: its own where it ran
// in the test's PID namespace, else the pid of the process of its
// namespace with its start time and namespace pid; 0 when there is none.
func (m procMarker) hostPID() int {
	if self, _ := os.Readlink("/proc/self/ns/pid"); m.ns == self {
		return m.pid
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ns, _ := os.Readlink("/proc/" + e.Name() + "/ns/pid"); ns != m.ns {
			continue
		}
		if f := statFields(pid); len(f) <= 19 || f[19] != m.start {
			continue
		}
		status, _ := os.ReadFile("/proc/" + e.Name() + "/status")
		for _, line := range strings.Split(string(status), "\n") {
			if ids, ok := strings.CutPrefix(line, "NSpid:"); ok {
				if f := strings.Fields(ids); len(f) > 0 && f[len(f)-1] == strconv.Itoa(m.pid) {
					return pid
				}
			}
		}
	}
	return 0
}

// alive: the marked process still runs (not a zombie, same start time).
func (m procMarker) alive() bool {
	pid := m.hostPID()
	if pid == 0 {
		return false
	}
	f := statFields(pid)
	return len(f) > 19 && f[19] == m.start && f[0] != "Z" && f[0] != "X"
}

// kill kills the marked process if it still runs.
func (m procMarker) kill() {
	if pid := m.hostPID(); pid > 0 && m.alive() {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

func survivors(ms []procMarker, role string) []string {
	var s []string
	for _, m := range ms {
		if (role == "" || m.role == role) && m.alive() {
			s = append(s, fmt.Sprintf("%s %d", m.role, m.pid))
		}
	}
	return s
}

// waitFor polls cond until it holds or d passed.
func waitFor(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

const procsNamespace = "procs"

// Invocation deadlines of the procs fixture: the deadline cases' is short,
// yet long enough for a busy host to start every process before it (a
// case starts its processes through a startGate); the others' is never
// reached, as what ends those invocations is the test.
const (
	procsDeadlineMs = 10_000
	procsNoDeadline = 600_000
)

// newProcsHome installs and publishes the procs fixture with the deadline
// timeoutMs.
func newProcsHome(t *testing.T, bin string, timeoutMs int) string {
	t.Helper()
	dir := t.TempDir()
	var cmds []string
	for _, shape := range []string{"simple", "group", "setsid", "double", "stubborn", "fds", "tty", escapeShape} {
		cmds = append(cmds, fmt.Sprintf(`{"id":"procs.%[1]s","path":["procs","%[1]s"],"summary":"Child shape %[1]s",
		 "params":[{"id":"dir","type":"string","flag":"dir","required":true},{"id":"mode","type":"string","flag":"mode","enum":["exit","fail","hang"],"default":"exit"}],
		 "execute":{"program":"bin/ext","args":["procs","%[1]s"],"result":{"kind":"text"}},
		 "machine":{"eligible":true,"interaction":"none","requiredFeatures":[{"id":"command-result","version":1}]}}`, shape))
	}
	manifest := `{"apiVersion":"rukh.extension/2","name":"procs.fake","version":"1.0.0","publisher":"procs",
	 "description":"Process hygiene fixture","commands":[` + strings.Join(cmds, ",") + `]}`
	pkg := filepath.Join(dir, "pkg")
	must(t, os.MkdirAll(filepath.Join(pkg, "bin"), 0o755))
	must(t, os.WriteFile(filepath.Join(pkg, "rukh-extension.json"), []byte(manifest), 0o644))
	// exec: the leader is the Go fake itself
	must(t, os.WriteFile(filepath.Join(pkg, "bin", "ext"), []byte("#!/bin/sh\nexec rukh-fake-ext \"$@\"\n"), 0o755))
	profile := filepath.Join(dir, "profile.json")
	must(t, os.WriteFile(profile, []byte(`{"endpoints":{"local":{"namespace":"procs","template":"t","transports":["stdio","http"],"publish":{"packages":["procs.fake"]}}},
	 "templates":{"t":{"timeoutMs":`+strconv.Itoa(timeoutMs)+`}}}`), 0o644))
	home := filepath.Join(dir, "home")
	mustRukh(t, bin, home, "install", "--allow-unsigned", pkg)
	mustRukh(t, bin, home, "activate", "procs.fake")
	mustRukh(t, bin, home, "policy", "set", profile)
	mustRukh(t, bin, home, "publish")
	return home
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// procsTool is the compact MCP tool name of command id in revision r1
// (docs/design.md, Names and fingerprints): a slug of at most 16 characters
// and 24 hex digits.
func procsTool(id string) string { return compactTool(procsNamespace, id) }

// compactTool is the compact MCP tool name of command id in revision r1
// of the endpoint namespace ns.
func compactTool(ns, id string) string {
	raw, _ := stdjson.Marshal([]string{"rukh.mcp-tool/1", ns, "r1", id})
	canon, _ := jcs.Transform(raw)
	sum := sha256.Sum256(canon)
	slug := strings.ReplaceAll(id, ".", "_")
	if len(slug) > 16 {
		slug = slug[:16]
	}
	return slug + "__" + hex.EncodeToString(sum[:])[:24]
}

// procsServer is one serve-mcp process under test.
type procsServer struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
}

func startProcsServer(bin, home string, attr *syscall.SysProcAttr, stderr *os.File, extra []*os.File) (*procsServer, error) {
	cmd := exec.Command(bin, "serve-mcp")
	cmd.Env = rukhEnv(home)
	cmd.Dir = filepath.Dir(home)
	cmd.Stderr, cmd.SysProcAttr, cmd.ExtraFiles = stderr, attr, extra
	return startMCP(cmd)
}

// startMCP starts cmd, a serve-mcp, with its stdin and stdout as the
// session.
func startMCP(cmd *exec.Cmd) (*procsServer, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &procsServer{cmd: cmd, in: in, lines: make(chan string, 16)}
	go func() {
		r := bufio.NewScanner(out)
		r.Buffer(nil, 1<<20)
		for r.Scan() {
			s.lines <- r.Text()
		}
		close(s.lines)
	}()
	return s, nil
}

func (s *procsServer) call(id, tool string, args map[string]string) error {
	return s.callName(id, procsTool(tool), args)
}

// callName calls the tool of that exact name.
func (s *procsServer) callName(id, name string, args map[string]string) error {
	a, _ := stdjson.Marshal(args)
	_, err := fmt.Fprintf(s.in, `{"jsonrpc":"2.0","id":%q,"method":"tools/call","params":{"name":%q,"arguments":%s,%s}}`+"\n", id, name, a, modernMeta)
	return err
}

// answer waits for the response to request id.
func (s *procsServer) answer(id string, d time.Duration) (string, error) {
	timeout := time.After(d)
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				return "", errors.New("serve-mcp closed stdout")
			}
			if strings.Contains(line, `"id":"`+id+`"`) {
				return line, nil
			}
		case <-timeout:
			return "", fmt.Errorf("no answer to %s within %v", id, d)
		}
	}
}

// wait waits for the process to exit on its own.
func waitExit(cmd *exec.Cmd, d time.Duration) (syscall.WaitStatus, error) {
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
		return cmd.ProcessState.Sys().(syscall.WaitStatus), nil
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		return 0, fmt.Errorf("rukh did not exit within %v", d)
	}
}

// stopPath is one way an invocation ends.
type stopPath struct {
	name, mode string
	mcp        bool
	signal     syscall.Signal // sent to rukh once every process started
	cancel     bool           // MCP notifications/cancelled
	eof        bool           // MCP end of input
	exit       int            // the CLI's exit code; -1: killed
}

var stopPaths = []stopPath{
	{name: "cli-exit", mode: "exit", exit: 0},
	{name: "cli-fail", mode: "fail", exit: 1},
	{name: "cli-deadline", mode: "hang", exit: 130},
	{name: "cli-sigint", mode: "hang", signal: syscall.SIGINT, exit: 130},
	{name: "cli-sigterm", mode: "hang", signal: syscall.SIGTERM, exit: 130},
	{name: "cli-sighup", mode: "hang", signal: syscall.SIGHUP, exit: 130},
	{name: "cli-kill9", mode: "hang", signal: syscall.SIGKILL, exit: -1},
	{name: "mcp-exit", mode: "exit", mcp: true},
	{name: "mcp-fail", mode: "fail", mcp: true},
	{name: "mcp-deadline", mode: "hang", mcp: true},
	{name: "mcp-cancel", mode: "hang", mcp: true, cancel: true},
	{name: "mcp-eof", mode: "hang", mcp: true, eof: true},
	{name: "mcp-sigterm", mode: "hang", mcp: true, signal: syscall.SIGTERM},
	{name: "mcp-sighup", mode: "hang", mcp: true, signal: syscall.SIGHUP},
	{name: "mcp-kill9", mode: "hang", mcp: true, signal: syscall.SIGKILL, exit: -1},
}

// TestNoProcessOutlivesItsInvocation runs every stop path against every
// child shape. Cases start their processes a few at a time (a startGate)
// and then wait together, so a busy host delays them but cannot make the
// deadline cases' deadline come before their processes ran.
func TestNoProcessOutlivesItsInvocation(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 75 invocations, each stopped one way")
	}
	bin := buildRukh(t)
	home := newProcsHome(t, bin, procsNoDeadline)
	deadlineHome := newProcsHome(t, bin, procsDeadlineMs)
	gate := make(startGate, 2*runtime.GOMAXPROCS(0))
	type result struct {
		name string
		err  error
	}
	var results []*result
	var wg sync.WaitGroup
	for _, p := range stopPaths {
		for _, shape := range procShapes {
			r := &result{name: p.name + "/" + shape.name}
			results = append(results, r)
			dir := t.TempDir()
			h := home
			if p.deadline() {
				h = deadlineHome
			}
			wg.Go(func() {
				r.err = runStopCase(bin, h, dir, p, shape.name, gate)
				for _, m := range readMarkers(dir) { // never leak into other tests
					m.kill()
				}
			})
		}
	}
	wg.Wait()
	for _, r := range results {
		t.Run(r.name, func(t *testing.T) {
			if r.err != nil {
				t.Error(r.err)
			}
		})
	}
}

// startGate bounds how many cases start their processes at once: starting
// is what takes the CPU, the rest of a case mostly waits.
type startGate chan struct{}

// enter waits for a place; leave gives it back, once, however often called.
func (g startGate) enter() (leave func()) {
	g <- struct{}{}
	var once sync.Once
	return func() { once.Do(func() { <-g }) }
}

// deadline: the invocation ends by its deadline alone.
func (p stopPath) deadline() bool {
	return p.mode == "hang" && p.signal == 0 && !p.cancel && !p.eof
}

// Generous bounds for what a case waits for: a healthy run never comes
// near them, and a failure is a process that lives for an hour.
const (
	procsStartWait = time.Minute
	procsStopWait  = time.Minute
	procsGoneWait  = 30 * time.Second
)

func runStopCase(bin, home, dir string, p stopPath, shape string, gate startGate) error {
	leave := gate.enter()
	defer leave()
	want := procCount(shape)
	started := func() bool { return len(readMarkers(dir)) == want }
	stderr, err := os.Create(filepath.Join(dir, ".stderr"))
	if err != nil {
		return err
	}
	defer stderr.Close()
	logs := func() string { b, _ := os.ReadFile(stderr.Name()); return string(b) }
	var ws syscall.WaitStatus
	if !p.mcp {
		cmd := exec.Command(bin, "procs", shape, "--dir", dir, "--mode", p.mode)
		cmd.Env = rukhEnv(home)
		cmd.Dir = dir
		// files, not pipes: a survivor holding a pipe would hang Wait
		cmd.Stdout, cmd.Stderr = stderr, stderr
		if err := cmd.Start(); err != nil {
			return err
		}
		if p.mode == "hang" {
			if !waitFor(procsStartWait, started) {
				cmd.Process.Kill()
				return fmt.Errorf("only %d of %d processes started\n%s", len(readMarkers(dir)), want, logs())
			}
			leave()
			if p.signal != 0 {
				cmd.Process.Signal(p.signal)
			}
		}
		if ws, err = waitExit(cmd, procsStopWait); err != nil {
			return err
		}
		if got := ws.ExitStatus(); p.exit >= 0 && got != p.exit || p.exit < 0 && !ws.Signaled() {
			return fmt.Errorf("rukh exit status %v, want %d\n%s", ws, p.exit, logs())
		}
	} else {
		s, err := startProcsServer(bin, home, nil, stderr, nil)
		if err != nil {
			return err
		}
		defer s.cmd.Process.Kill()
		if err := s.call("c1", "procs."+shape, map[string]string{"dir": dir, "mode": p.mode}); err != nil {
			return err
		}
		if p.deadline() {
			if !waitFor(procsStartWait, started) {
				return fmt.Errorf("only %d of %d processes started\n%s", len(readMarkers(dir)), want, logs())
			}
			leave()
		}
		if p.mode != "hang" || p.deadline() {
			// the answer comes after the invocation ended: nothing may be left
			// while the server keeps running
			if _, err := s.answer("c1", procsStopWait); err != nil {
				return fmt.Errorf("%v\n%s", err, logs())
			}
			if len(readMarkers(dir)) != want {
				return fmt.Errorf("only %d of %d processes started", len(readMarkers(dir)), want)
			}
			if alive := survivors(readMarkers(dir), ""); len(alive) > 0 {
				return fmt.Errorf("still running after the answer: %v", alive)
			}
		} else {
			if !waitFor(procsStartWait, started) {
				return fmt.Errorf("only %d of %d processes started\n%s", len(readMarkers(dir)), want, logs())
			}
			leave()
			switch {
			case p.cancel:
				fmt.Fprintln(s.in, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1","reason":"test"}}`)
				if !waitFor(procsStopWait, func() bool { return len(survivors(readMarkers(dir), "")) == 0 }) {
					return fmt.Errorf("still running after the cancel: %v", survivors(readMarkers(dir), ""))
				}
			case p.eof:
			default:
				s.cmd.Process.Signal(p.signal)
			}
		}
		s.in.Close()
		if ws, err = waitExit(s.cmd, procsStopWait); err != nil {
			return err
		}
		if p.exit >= 0 && ws.Signaled() {
			return fmt.Errorf("serve-mcp was killed by %v, want it to stop its calls and exit\n%s", ws.Signal(), logs())
		}
	}
	if len(readMarkers(dir)) != want {
		return fmt.Errorf("only %d of %d processes started", len(readMarkers(dir)), want)
	}
	role := ""
	if p.signal == syscall.SIGKILL {
		// Nothing of rukh runs after SIGKILL: only the leader's parent-death
		// signal remains (docs/extension-protocol.md, What is killed when).
		role = "leader"
	}
	// rukh reaps everything before it exits; the leader's parent-death
	// signal after kill -9 is asynchronous, and a killed process takes the
	// CPU to die.
	if !waitFor(procsGoneWait, func() bool { return len(survivors(readMarkers(dir), role)) == 0 }) {
		return fmt.Errorf("still running after rukh exited: %v", survivors(readMarkers(dir), role))
	}
	return nil
}

// TestConcurrentInvocationsKeepTheirProcesses: when one invocation ends,
// the cleanup of what it left never touches another running invocation's
// processes, even ones that left its group or session.
func TestConcurrentInvocationsKeepTheirProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits on a hanging invocation beside others")
	}
	bin := buildRukh(t)
	home := newProcsHome(t, bin, procsNoDeadline)
	hangDir, exitDir := t.TempDir(), t.TempDir()
	s, err := startProcsServer(bin, home, nil, nil, nil)
	must(t, err)
	defer s.cmd.Process.Kill()
	must(t, s.call("h", "procs.setsid", map[string]string{"dir": hangDir, "mode": "hang"}))
	if !waitFor(procsStartWait, func() bool { return len(readMarkers(hangDir)) == 2 }) {
		t.Fatal("the hanging call did not start")
	}
	for i, shape := range []string{"double", "group", "setsid"} {
		d := filepath.Join(exitDir, shape)
		must(t, os.Mkdir(d, 0o755))
		must(t, s.call(fmt.Sprint("e", i), "procs."+shape, map[string]string{"dir": d, "mode": "exit"}))
		if _, err := s.answer(fmt.Sprint("e", i), procsStopWait); err != nil {
			t.Fatal(err)
		}
		if alive := survivors(readMarkers(d), ""); len(alive) > 0 {
			t.Errorf("%s: still running after the answer: %v", shape, alive)
		}
	}
	if alive := survivors(readMarkers(hangDir), ""); len(alive) != 2 {
		t.Errorf("the running call's processes were killed: alive %v of 2", alive)
	}
	fmt.Fprintln(s.in, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"h","reason":"test"}}`)
	if !waitFor(procsStopWait, func() bool { return len(survivors(readMarkers(hangDir), "")) == 0 }) {
		t.Errorf("still running after the cancel: %v", survivors(readMarkers(hangDir), ""))
	}
	s.in.Close()
	waitExit(s.cmd, procsStopWait)
}

// TestInheritedFDsNeverReachPrograms: a descriptor rukh inherited without
// close-on-exec (exec 7<file; rukh …) is not open in the program, on the
// CLI or under MCP.
func TestInheritedFDsNeverReachPrograms(t *testing.T) {
	bin := buildRukh(t)
	home := newProcsHome(t, bin, procsNoDeadline)
	secret := filepath.Join(t.TempDir(), "inherited")
	must(t, os.WriteFile(secret, []byte("x"), 0o644))
	f, err := os.Open(secret)
	must(t, err)
	defer f.Close()
	extra := []*os.File{nil, nil, nil, nil, f} // fd 7 in rukh

	cmd := exec.Command(bin, "procs", "fds", "--dir", ".")
	cmd.Env, cmd.Dir, cmd.ExtraFiles = rukhEnv(home), t.TempDir(), extra
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("rukh procs fds: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "0=") || strings.Contains(string(out), secret) {
		t.Errorf("CLI program's descriptors: %s; want none pointing at %s", out, secret)
	}

	s, err := startProcsServer(bin, home, nil, nil, extra)
	must(t, err)
	defer s.cmd.Process.Kill()
	must(t, s.call("f", "procs.fds", map[string]string{"dir": "."}))
	line, err := s.answer("f", procsStopWait)
	must(t, err)
	if !strings.Contains(line, "0=") || strings.Contains(line, secret) {
		t.Errorf("MCP program's descriptors: %s; want none pointing at %s", line, secret)
	}
	s.in.Close()
	waitExit(s.cmd, procsStopWait)
}

// TestMCPProgramsHaveNoTerminal runs rukh with a pseudo-terminal as its
// controlling terminal: a CLI program still reaches it through /dev/tty
// and can type into it (TIOCSTI); an MCP program can do neither (it has no
// controlling terminal at all). serve-mcp leading the terminal's session
// keeps it, and gives each program a session of its own; serve-mcp as one
// process of that session drops it at start, and its programs stay in its
// session, as they do where it never had a terminal.
func TestMCPProgramsHaveNoTerminal(t *testing.T) {
	bin := buildRukh(t)
	home := newProcsHome(t, bin, procsNoDeadline)
	ptmx, pts := openPTY(t)
	go io.Copy(io.Discard, ptmx) // keep the terminal's buffer from filling
	// A new session whose controlling terminal is the pty (its stderr).
	onPTY := func() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 2} }
	args := map[string]string{"dir": pts.Name()}

	cmd := exec.Command(bin, "procs", "tty", "--dir", pts.Name())
	cmd.Env, cmd.Dir, cmd.SysProcAttr = rukhEnv(home), t.TempDir(), onPTY()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, pts
	if err := cmd.Run(); err != nil {
		t.Fatalf("rukh procs tty: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "devtty=ok") || strings.Contains(out.String(), "tty_nr=0 ") {
		t.Fatalf("CLI program does not reach the terminal (the test's pty setup is broken?): %s", out.String())
	}
	// Where the kernel refuses TIOCSTI to everyone, only /dev/tty is proof.
	typing := strings.Contains(out.String(), "tiocsti=ok")
	if !typing {
		t.Logf("TIOCSTI refused to the CLI program too (%s): not checked", strings.TrimSpace(out.String()))
	}

	for _, c := range []struct {
		name    string
		start   func() (*procsServer, error)
		session string
	}{
		{"serve-mcp leads the terminal's session", func() (*procsServer, error) {
			return startProcsServer(bin, home, onPTY(), pts, nil)
		}, "own"},
		{"serve-mcp in the terminal's session", func() (*procsServer, error) {
			// The shell leads the session and starts rukh as its child.
			sh := exec.Command("/bin/sh", "-c", `"$@"; exit $?`, "sh", bin, "serve-mcp")
			sh.Env, sh.Dir = rukhEnv(home), filepath.Dir(home)
			sh.Stderr, sh.SysProcAttr = pts, onPTY()
			return startMCP(sh)
		}, "inherited"},
		{"serve-mcp without a terminal", func() (*procsServer, error) {
			return startProcsServer(bin, home, nil, nil, nil)
		}, "inherited"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := c.start()
			must(t, err)
			defer s.cmd.Process.Kill()
			must(t, s.call("t", "procs.tty", args))
			line, err := s.answer("t", procsStopWait)
			must(t, err)
			if !strings.Contains(line, "devtty=open /dev/tty: no such device or address tty_nr=0 ") {
				t.Errorf("MCP program: %s; want /dev/tty unavailable and tty_nr 0", line)
			}
			if !strings.Contains(line, "session="+c.session) {
				t.Errorf("MCP program: %s; want session=%s", line, c.session)
			}
			if typing && strings.Contains(line, "tiocsti=ok") {
				t.Errorf("MCP program typed into the terminal: %s", line)
			}
			s.in.Close()
			waitExit(s.cmd, procsStopWait)
		})
	}
}

// openPTY opens a pseudo-terminal pair with nothing but the kernel's
// /dev/ptmx interface.
func openPTY(t *testing.T) (ptmx, pts *os.File) {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	must(t, err)
	ptmx = os.NewFile(uintptr(fd), "ptmx")
	t.Cleanup(func() { ptmx.Close() })
	must(t, unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	must(t, err)
	pts, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	must(t, err)
	t.Cleanup(func() { pts.Close() })
	return ptmx, pts
}
