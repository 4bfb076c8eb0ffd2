//go:build linux

package main

// Confinement through the real binary: a confined template's calls reach
// only what the template grants (files, network, processes, memory, CPU),
// each refusal leaves the server serving and reaches the owner's
// diagnostics, and a template the host cannot enforce publishes nothing.
// The program is this test binary itself (rukh-fake-ext "confine"): a
// confined call has no PATH, so the package carries it as its own
// bin/rukh-fake-ext.

import (
	stdjson "encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/sys/unix"
)

// probe is what the "confine" fixture reports: whether its operation
// worked and what it saw.
type probe struct {
	OK    bool     `json:"ok"`
	Err   string   `json:"err,omitempty"`
	Errno string   `json:"errno,omitempty"` // the errno name, "EACCES"
	Text  string   `json:"text,omitempty"`  // what was read; the scratch dir
	Count int      `json:"count,omitempty"` // children that ran; MiB allocated
	Pids  []int    `json:"pids,omitempty"`  // /proc's numeric entries
	Self  int      `json:"self,omitempty"`  // the program's own pid
	Env   []string `json:"env,omitempty"`   // the environment's keys
}

// confineSleeper is the argument of the fork bomb's children.
const confineSleeper = "confine-sleeper"

// forkBombCap bounds the fork bomb where nothing else does.
const forkBombCap = 48

// fakeConfine does what its input's op says with its arg and reports what
// happened; a refused operation is command_failed, with the error on
// stderr as a program would write it.
func fakeConfine(input jsontext.Value, report func(outcome, text, reason string)) int {
	var in struct{ Op, Arg string }
	stdjson.Unmarshal(input, &in)
	var p probe
	var err error
	switch in.Op {
	case "ok":
	case "connect":
		var c net.Conn
		if c, err = net.DialTimeout("tcp", in.Arg, 3*time.Second); err == nil {
			c.Close()
		}
	case "read":
		var b []byte
		b, err = os.ReadFile(in.Arg)
		p.Text = string(b)
	case "write":
		err = os.WriteFile(in.Arg, []byte("written by the confined call"), 0o644)
	case "scratch":
		p.Text = os.Getenv("RUKH_SCRATCH")
		f := filepath.Join(p.Text, "probe")
		if err = os.WriteFile(f, []byte("scratch"), 0o644); err == nil {
			var b []byte
			if b, err = os.ReadFile(f); err == nil && string(b) != "scratch" {
				err = fmt.Errorf("read back %q", b)
			}
		}
	case "procs":
		p.Self = os.Getpid()
		var ents []os.DirEntry
		ents, err = os.ReadDir("/proc")
		for _, e := range ents {
			if pid, aerr := strconv.Atoi(e.Name()); aerr == nil {
				p.Pids = append(p.Pids, pid)
			}
		}
	case "forkbomb":
		p.Count, err = forkBomb()
	case "memhog": // touch Arg MiB, a chunk at a time, and keep it
		mib, _ := strconv.Atoi(in.Arg)
		var keep [][]byte
		for p.Count < mib {
			b := make([]byte, 8<<20)
			for i := range len(b) / 4096 {
				b[i*4096] = 1
			}
			keep = append(keep, b)
			p.Count += 8
		}
		_ = keep
	case "cpuhog": // spin for Arg seconds of wall time
		secs, _ := strconv.Atoi(in.Arg)
		for end := time.Now().Add(time.Duration(secs) * time.Second); time.Now().Before(end); {
		}
	case "fds": // what is open beyond the channel, but the runtime's own
		var open []string
		for fd := 4; fd < 1<<16; fd++ {
			var st unix.Stat_t
			if unix.Fstat(fd, &st) != nil {
				continue
			}
			to, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
			if to == "anon_inode:[eventpoll]" || to == "anon_inode:[eventfd]" || strings.HasPrefix(to, "/sys/fs/cgroup/") {
				continue
			}
			open = append(open, fmt.Sprintf("%d %s", fd, to))
		}
		p.Text = strings.Join(open, ", ")
	case "env":
		for _, kv := range os.Environ() {
			k, _, _ := strings.Cut(kv, "=")
			p.Env = append(p.Env, k)
		}
	default:
		err = fmt.Errorf("unknown op %q", in.Op)
	}
	p.OK = err == nil
	if err != nil {
		p.Err = err.Error()
		var errno syscall.Errno
		if errors.As(err, &errno) {
			p.Errno = unix.ErrnoName(errno)
		}
		fmt.Fprintf(os.Stderr, "rukh-fake-ext: %s %s: %v\n", in.Op, in.Arg, err)
	}
	b, _ := stdjson.Marshal(p)
	if err != nil {
		report("command_failed", string(b), err.Error())
		return 1
	}
	report("succeeded", string(b), "")
	return 0
}

// forkBomb starts children that sleep until a start fails, or until
// forkBombCap ran, and returns how many ran. A child runs once it wrote a
// byte on its pipe: one whose runtime could not start its threads never
// does.
func forkBomb() (int, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	ran := 0
	for ran < forkBombCap {
		r, w, err := os.Pipe()
		if err != nil {
			return ran, nil
		}
		// Every stream given: exec's /dev/null for a missing one is a
		// path the template need not grant.
		cmd := &exec.Cmd{Path: exe, Args: []string{"rukh-fake-ext", confineSleeper}, Stdin: r, Stdout: w, Stderr: os.Stderr}
		err = cmd.Start()
		w.Close()
		if err != nil {
			r.Close()
			return ran, nil
		}
		r.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, _ := r.Read(make([]byte, 1))
		r.Close()
		if n != 1 {
			return ran, nil
		}
		ran++
	}
	return ran, nil
}

// fakeConfineChild runs the fork bomb's children: say it runs, then sleep
// until the invocation ends.
func fakeConfineChild(args []string) (int, bool) {
	if len(args) != 1 || args[0] != confineSleeper {
		return 0, false
	}
	os.Stdout.Write([]byte{1})
	time.Sleep(time.Hour)
	return 0, true
}

// confineHome is a home whose package confine.fake is published on three
// endpoints: local (namespace procs, template locked: confined, over stdio
// and HTTP), open (unconfined) and bomb (locked with a processes limit).
type confineHome struct {
	bin, home       string
	readDir, readme string // granted for reading
	writeDir        string // granted for writing
	outside, secret string // granted nothing
}

const (
	confineMemoryMiB = 256
	confineProcesses = 16
)

func newConfineHome(t *testing.T, bin string) *confineHome {
	t.Helper()
	dir := t.TempDir()
	h := &confineHome{bin: bin, home: filepath.Join(dir, "home"),
		readDir: filepath.Join(dir, "ro"), writeDir: filepath.Join(dir, "rw"), outside: filepath.Join(dir, "outside")}
	h.readme, h.secret = filepath.Join(h.readDir, "readme"), filepath.Join(h.outside, "secret")
	for _, d := range []string{h.readDir, h.writeDir, h.outside} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.WriteFile(h.readme, []byte("granted to read"), 0o644))
	must(t, os.WriteFile(h.secret, []byte("granted nothing"), 0o644))

	pkg := filepath.Join(dir, "pkg")
	must(t, os.MkdirAll(filepath.Join(pkg, "bin"), 0o755))
	manifest := `{"apiVersion":"rukh.extension/2","name":"confine.fake","version":"1.0.0","publisher":"confine",
	 "description":"Confinement fixture","commands":[{"id":"confine.probe","path":["confine","probe"],"summary":"Try one thing",
	 "params":[{"id":"op","type":"string","flag":"op","required":true},{"id":"arg","type":"string","flag":"arg","default":""}],
	 "execute":{"program":"bin/rukh-fake-ext","args":["confine"],"result":{"kind":"text"}},
	 "machine":{"eligible":true,"interaction":"none","requiredFeatures":[{"id":"command-result","version":1}]}}]}`
	must(t, os.WriteFile(filepath.Join(pkg, "rukh-extension.json"), []byte(manifest), 0o644))
	exe, err := os.Executable()
	must(t, err)
	b, err := os.ReadFile(exe)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(pkg, "bin", "rukh-fake-ext"), b, 0o755))

	// The loader's directories, as an owner would grant a dynamically
	// linked program; /proc, so the listing shows what the call's own
	// /proc holds rather than a refusal.
	read, _ := stdjson.Marshal([]string{"release", "/lib", "/lib64", "/usr", "/proc", h.readDir})
	write, _ := stdjson.Marshal([]string{"scratch", h.writeDir})
	locked := fmt.Sprintf(`"network":"none","read":%s,"write":%s,"memoryMiB":%d,"cpuSeconds":1`, read, write, confineMemoryMiB)
	profile := filepath.Join(dir, "profile.json")
	must(t, os.WriteFile(profile, []byte(`{"endpoints":{
	  "local":{"namespace":"procs","template":"locked","transports":["stdio","http"],"publish":{"packages":["confine.fake"]}},
	  "open":{"namespace":"open","template":"open","publish":{"packages":["confine.fake"]}},
	  "bomb":{"namespace":"bomb","template":"bomb","publish":{"packages":["confine.fake"]}}},
	 "templates":{"open":{"timeoutMs":60000},
	  "locked":{"timeoutMs":60000,"confine":{`+locked+`}},
	  "bomb":{"timeoutMs":60000,"confine":{`+locked+`,"processes":`+strconv.Itoa(confineProcesses)+`}}}}`), 0o644))
	mustRukh(t, bin, h.home, "install", "--allow-unsigned", pkg)
	mustRukh(t, bin, h.home, "activate", "confine.fake")
	mustRukh(t, bin, h.home, "policy", "set", profile)
	mustRukh(t, bin, h.home, "publish")
	return h
}

// confineServer is one serve-mcp of an endpoint of a confineHome.
type confineServer struct {
	*procsServer
	ns   string
	next int
}

func (h *confineHome) serve(t *testing.T, endpoint, ns string) *confineServer {
	t.Helper()
	return h.serveInheriting(t, endpoint, ns, nil)
}

// serveInheriting is serve, the server inheriting inherited from
// descriptor 3 on, without close-on-exec.
func (h *confineHome) serveInheriting(t *testing.T, endpoint, ns string, inherited []*os.File) *confineServer {
	t.Helper()
	stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	must(t, err)
	t.Cleanup(func() { stderr.Close() })
	cmd := exec.Command(h.bin, "serve-mcp", "--endpoint", endpoint)
	cmd.Env, cmd.Dir, cmd.Stderr = rukhEnv(h.home), filepath.Dir(h.home), stderr
	cmd.ExtraFiles = inherited
	s, err := startMCP(cmd)
	must(t, err)
	t.Cleanup(func() { s.in.Close(); waitExit(s.cmd, procsStopWait) })
	return &confineServer{procsServer: s, ns: ns}
}

// callAnswer is a tools/call's structured content, with the fixture's
// probe when the command reported one.
type callAnswer struct {
	InvocationID string `json:"invocationId"`
	Outcome      string `json:"outcome"`
	Reason       string `json:"reason"`
	Result       struct {
		Text string `json:"text"`
	} `json:"commandResult"`
	probe probe
}

func (a callAnswer) String() string {
	return fmt.Sprintf("%s (%s) %s", a.Outcome, a.Reason, a.Result.Text)
}

func parseAnswer(t *testing.T, body string) callAnswer {
	t.Helper()
	var msg struct {
		Result struct {
			StructuredContent callAnswer `json:"structuredContent"`
		} `json:"result"`
	}
	if err := stdjson.Unmarshal([]byte(body), &msg); err != nil {
		t.Fatalf("not a tools/call answer: %v\n%s", err, body)
	}
	a := msg.Result.StructuredContent
	if a.Outcome == "" {
		t.Fatalf("no outcome in %s", body)
	}
	if a.Result.Text != "" {
		if err := stdjson.Unmarshal([]byte(a.Result.Text), &a.probe); err != nil {
			t.Fatalf("the fixture's result is not a probe: %v\n%s", err, a.Result.Text)
		}
	}
	return a
}

// do calls confine.probe with op and arg and returns the answer.
func (s *confineServer) do(t *testing.T, op, arg string) callAnswer {
	t.Helper()
	s.next++
	id := "c" + strconv.Itoa(s.next)
	must(t, s.callName(id, compactTool(s.ns, "confine.probe"), map[string]string{"op": op, "arg": arg}))
	line, err := s.answer(id, time.Minute)
	must(t, err)
	return parseAnswer(t, line)
}

// stillServes: a normal call on the same session succeeds.
func (s *confineServer) stillServes(t *testing.T) {
	t.Helper()
	if a := s.do(t, "ok", ""); a.Outcome != "succeeded" {
		t.Fatalf("after that, a normal call: %v", a)
	}
}

// diagnostics is the owner's record of an invocation, as rukh
// diagnostics --json shows it.
func (h *confineHome) diagnostics(t *testing.T, id string) (rec struct{ Outcome, Reason, Stderr string }) {
	t.Helper()
	// A server saves a call's diagnostics just after it answered: on a busy
	// host they may land a moment after the answer did.
	var out, errOut string
	code := -1
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if out, errOut, code = runRukh(t, h.bin, h.home, "diagnostics", id, "--json"); code == 0 || time.Now().After(deadline) {
			break
		}
	}
	if code != 0 {
		t.Fatalf("rukh diagnostics %s --json: exit %d\n%s%s", id, code, out, errOut)
	}
	must(t, stdjson.Unmarshal([]byte(out), &rec))
	return rec
}

// refused: the call failed as a refusal of the confinement does, and the
// owner's diagnostics say so.
func (h *confineHome) refused(t *testing.T, a callAnswer, outcome string) {
	t.Helper()
	if a.Outcome != outcome {
		t.Errorf("outcome %v, want %s", a, outcome)
	}
	rec := h.diagnostics(t, a.InvocationID)
	if !strings.Contains(rec.Stderr, `rukh: this call ran confined by template "`) {
		t.Errorf("the diagnostics of %s do not say the call ran confined:\n%s", a.InvocationID, rec.Stderr)
	}
}

func TestConfine(t *testing.T) {
	if !confinable() {
		t.Skip("this host cannot enforce confined templates (rukh doctor says why)")
	}
	bin := buildRukh(t)
	h := newConfineHome(t, bin)
	locked, open := h.serve(t, "local", procsNamespace), h.serve(t, "open", "open")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	addr := ln.Addr().String()
	// A connection the kernel completed may reach Accept a moment after
	// the call that made it ended: wait for it, on a busy host too.
	acceptedAtLeast := func(n int32) bool {
		for deadline := time.Now().Add(10 * time.Second); accepted.Load() < n && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		return accepted.Load() >= n
	}

	t.Run("connect", func(t *testing.T) {
		if a := open.do(t, "connect", addr); a.Outcome != "succeeded" || !acceptedAtLeast(1) || accepted.Load() != 1 {
			t.Fatalf("unconfined: %v, %d accepted; the listener does not work", a, accepted.Load())
		}
		a := locked.do(t, "connect", addr)
		h.refused(t, a, "command_failed")
		if a.probe.OK || accepted.Load() != 1 {
			t.Errorf("confined by network none, the call connected to %s: %v", addr, a)
		}
		locked.stillServes(t)
	})

	t.Run("connect-http", func(t *testing.T) {
		stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
		must(t, err)
		defer stderr.Close()
		srv, base := startSweepHTTP(t, bin, h.home, stderr)
		defer func() { srv.Process.Signal(syscall.SIGTERM); waitExit(srv, procsStopWait) }()
		token := agentToken(t, bin, h.home, "confine-agent")
		url := base + "/mcp/v1/" + procsNamespace + "/local"
		call := func(op, arg string) callAnswer {
			reply := httpToolCall(url, token, "confine.probe", map[string]string{"op": op, "arg": arg})
			status, body, _ := strings.Cut(reply, " OK ")
			if status != "200" {
				t.Fatalf("HTTP tools/call: %s", reply)
			}
			return parseAnswer(t, body)
		}
		before := accepted.Load()
		a := call("connect", addr)
		h.refused(t, a, "command_failed")
		if a.probe.OK || accepted.Load() != before {
			t.Errorf("confined by network none, the call over HTTP connected to %s: %v", addr, a)
		}
		if a := call("ok", ""); a.Outcome != "succeeded" {
			t.Fatalf("after that, a normal call over HTTP: %v", a)
		}
	})

	t.Run("files", func(t *testing.T) {
		granted := filepath.Join(h.writeDir, "new")
		for _, c := range []struct {
			op, arg string
			ok      bool
		}{
			{"read", h.readme, true},
			{"read", h.secret, false},
			{"write", granted, true},
			{"write", filepath.Join(h.outside, "new"), false},
			{"write", filepath.Join(h.readDir, "new"), false}, // read only
		} {
			a := locked.do(t, c.op, c.arg)
			switch {
			case c.ok && (a.Outcome != "succeeded" || !a.probe.OK):
				t.Errorf("%s %s, granted: %v", c.op, c.arg, a)
			case !c.ok:
				h.refused(t, a, "command_failed")
				if a.probe.Errno != "EACCES" {
					t.Errorf("%s %s, not granted: %v, want EACCES", c.op, c.arg, a)
				}
			}
			locked.stillServes(t)
		}
		if a := locked.do(t, "read", h.readme); a.probe.Text != "granted to read" {
			t.Errorf("read %s: %q", h.readme, a.probe.Text)
		}
		if b, err := os.ReadFile(granted); err != nil || string(b) != "written by the confined call" {
			t.Errorf("the granted write left %q (%v)", b, err)
		}
		for _, p := range []string{filepath.Join(h.outside, "new"), filepath.Join(h.readDir, "new")} {
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused write left %s (%v)", p, err)
			}
		}
		// the same reads and writes, unconfined, all work: what refused
		// them is the template
		if a := open.do(t, "read", h.secret); !a.probe.OK {
			t.Errorf("unconfined read %s: %v", h.secret, a)
		}
	})

	t.Run("scratch", func(t *testing.T) {
		a := locked.do(t, "scratch", "")
		if a.Outcome != "succeeded" || !a.probe.OK || !filepath.IsAbs(a.probe.Text) {
			t.Fatalf("scratch: %v", a)
		}
		if _, err := os.Stat(a.probe.Text); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the scratch dir %s outlived its call (%v)", a.probe.Text, err)
		}
	})

	t.Run("proc", func(t *testing.T) {
		a := locked.do(t, "procs", "")
		if !a.probe.OK {
			t.Fatalf("confined /proc: %v", a)
		}
		// the call's own init (1) and the program, nothing else
		if !slices.Contains(a.probe.Pids, a.probe.Self) || len(a.probe.Pids) > 2 || slices.ContainsFunc(a.probe.Pids, func(p int) bool { return p != 1 && p != a.probe.Self }) {
			t.Errorf("confined, /proc shows %v (the program is %d)", a.probe.Pids, a.probe.Self)
		}
		u := open.do(t, "procs", "")
		if !slices.Contains(u.probe.Pids, os.Getpid()) {
			t.Errorf("unconfined, /proc shows %v, without the test's own process %d: the listing proves nothing", u.probe.Pids, os.Getpid())
		}
	})

	t.Run("fds", func(t *testing.T) {
		// What rukh inherited without close-on-exec (from a shell, a
		// supervisor) never reaches a confined program, nor does any
		// descriptor of its init's (the ruleset's, had the init left it
		// open).
		leak, err := os.Open(h.readme)
		must(t, err)
		defer leak.Close()
		s := h.serveInheriting(t, "local", procsNamespace, []*os.File{leak, leak, leak, leak, leak, leak, leak, leak})
		a := s.do(t, "fds", "")
		if a.Outcome != "succeeded" || a.probe.Text != "" {
			t.Errorf("a confined program has descriptors beyond the channel: %v", a)
		}
	})

	t.Run("env", func(t *testing.T) {
		a := locked.do(t, "env", "")
		slices.Sort(a.probe.Env)
		want := []string{"RUKH_CHANNEL_FD", "RUKH_INVOCATION_ID", "RUKH_PROTOCOL", "RUKH_SCRATCH", "TMPDIR"}
		if !slices.Equal(a.probe.Env, want) {
			t.Errorf("confined environment %v, want %v", a.probe.Env, want)
		}
		if u := open.do(t, "env", ""); !slices.Contains(u.probe.Env, "PATH") {
			t.Errorf("unconfined environment %v has no PATH: the listing proves nothing", u.probe.Env)
		}
	})

	t.Run("memory", func(t *testing.T) {
		hog := strconv.Itoa(2 * confineMemoryMiB)
		if a := open.do(t, "memhog", hog); a.Outcome != "succeeded" {
			t.Fatalf("unconfined, the memory hog of %s MiB: %v", hog, a)
		}
		a := locked.do(t, "memhog", hog)
		h.refused(t, a, "execution_failed")
		// Go maps its heap in large arenas, so the limit stops it short
		// of the peak the init names memoryMiB by; its runtime says why.
		if strings.Contains(a.Reason, "limit") && !strings.Contains(a.Reason, "memoryMiB") {
			t.Errorf("the memory hog was stopped by another limit: %v", a)
		}
		if rec := h.diagnostics(t, a.InvocationID); !strings.Contains(a.Reason, "memoryMiB") && !strings.Contains(rec.Stderr, "out of memory") {
			t.Errorf("the memory hog failed, but not for want of memory: %v\n%s", a, rec.Stderr)
		}
		locked.stillServes(t)
	})

	t.Run("cpu", func(t *testing.T) {
		a := locked.do(t, "cpuhog", "30")
		h.refused(t, a, "execution_failed")
		if !strings.Contains(a.Reason, "cpuSeconds") {
			t.Errorf("the CPU hog's reason does not name cpuSeconds: %v", a)
		}
		locked.stillServes(t)
	})

	t.Run("forkbomb", func(t *testing.T) {
		if a := open.do(t, "forkbomb", ""); a.probe.Count != forkBombCap {
			t.Fatalf("unconfined, the fork bomb ran %d of %d: %v", a.probe.Count, forkBombCap, a)
		}
		bomb := h.serve(t, "bomb", "bomb")
		a := bomb.do(t, "forkbomb", "")
		// The bomb stops when a start fails; or its own runtime, refused a
		// thread, crashes, and the limit is named.
		if a.Outcome == "execution_failed" && strings.Contains(a.Reason, fmt.Sprintf("the processes limit (%d)", confineProcesses)) {
			bomb.stillServes(t)
			return
		}
		if a.Outcome != "succeeded" {
			t.Fatalf("fork bomb under processes %d: %v", confineProcesses, a)
		}
		// the program and its children, at once
		if n := a.probe.Count + 1; n > confineProcesses || a.probe.Count == 0 {
			t.Errorf("fork bomb under processes %d ran %d processes at once", confineProcesses, n)
		}
		bomb.stillServes(t)
	})
}

// TestConfineUnavailableTemplate: on a host without Landlock (the seam)
// a confined template's commands are not published, and a server of its
// endpoint lists no tool for them.
func TestConfineUnavailableTemplate(t *testing.T) {
	bin := buildRukh(t)
	h := newConfineHome(t, bin)
	t.Setenv("RUKH_WITHOUT", "landlock")
	out := mustRukh(t, bin, h.home, "publish", "--force")
	if !strings.Contains(out, "template locked is unavailable on this host") {
		t.Errorf("publish without Landlock does not say why locked publishes nothing:\n%s", out)
	}
	t.Setenv("RUKH_WITHOUT", "")
	list := func(endpoint string) string {
		s := h.serve(t, endpoint, endpoint)
		_, err := fmt.Fprintf(s.in, `{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{%s}}`+"\n", modernMeta)
		must(t, err)
		line, err := s.answer("l", time.Minute)
		must(t, err)
		return line
	}
	if l := list("local"); strings.Contains(l, "confine_probe") {
		t.Errorf("the endpoint of an unavailable template lists its command: %s", l)
	}
	if l := list("open"); !strings.Contains(l, "confine_probe") {
		t.Errorf("the unconfined endpoint lists no confine.probe: the listing proves nothing: %s", l)
	}
}
