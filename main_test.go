package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rogpeppe/go-internal/testscript"
	"github.com/rukh-dev/rukh/confine"
	"github.com/rukh-dev/rukh/examples/notes/notes"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
)

var update = flag.Bool("update", false, "rewrite testscript files with actual output where cmp fails")

func TestMain(m *testing.M) {
	testscript.Main(cleanAfter{m}, map[string]func(){
		"rukh":                  main,
		kernel.InitArgv0:        func() { os.Exit(confine.Main()) },
		kernel.InitConfineArgv0: func() { os.Exit(confine.Main()) },
		"rukh-fake-ext":         fakeExtension,
		"rukh-example-notes":    notes.Main,
	})
}

func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update,
		Condition: func(cond string) (bool, error) {
			if cond == "etcd" { // this binary has the etcd store (-tags etcd)
				return store.EtcdBuilt(), nil
			}
			if cond == "confinable" { // rukh on this host enforces confined templates
				return confinable(), nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(e *testscript.Env) error {
			e.Setenv("RUKH_HOME", e.WorkDir+"/home")
			e.Setenv("LANG", "C.UTF-8")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"chmodx":        cmdChmodX,
			"noorphans":     cmdNoOrphans,
			"mkhostile":     cmdMkHostile,
			"flipbyte":      cmdFlipByte,
			"copyhome":      cmdCopyHome,
			"exitcode":      cmdExitCode,
			"waitfile":      cmdWaitFile,
			"forgetprofile": cmdForgetProfile,
			"heldby":        cmdHeldBy,
			"etcd":          cmdEtcd,
			// main_mcp_test.go
			"mcpsession":   cmdMCPSession,
			"jsonrpclines": cmdJSONRPCLines,
		},
	})
}

// confinable asks rukh itself, as the scripts run it, whether this host
// enforces confined templates: what rukh can enforce depends on how its
// program starts, which this test process does not share.
var confinable = sync.OnceValue(func() bool {
	home, err := os.MkdirTemp("", "rukh-confinable-")
	if err != nil {
		return false
	}
	defer os.RemoveAll(home)
	cmd := exec.Command("rukh", "doctor", "--json")
	cmd.Env = append(os.Environ(), "RUKH_HOME="+home, "RUKH_WITHOUT=")
	out, _ := cmd.Output()
	var rep struct {
		Confinement struct {
			Available bool `json:"available"`
		} `json:"confinement"`
	}
	return json.Unmarshal(out, &rep) == nil && rep.Confinement.Available
})

// cleanAfter removes what the tests built for the whole process.
type cleanAfter struct{ m *testing.M }

func (c cleanAfter) Run() int {
	code := c.m.Run()
	if localEtcdBuild.dir != "" {
		os.RemoveAll(localEtcdBuild.dir)
	}
	if rukhBuilds.dir != "" {
		os.RemoveAll(rukhBuilds.dir)
	}
	return code
}

// etcd runs an etcd server (localetcd) for the script: "etcd
// start" sets $ETCD to its HOST:PORT; "etcd stop" stops it and "etcd
// start" again resumes it on the same address and data.
func cmdEtcd(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: etcd start|stop")
	}
	key := ts.Getenv("WORK")
	etcdsMu.Lock()
	defer etcdsMu.Unlock()
	switch args[0] {
	case "start":
		if etcds[key] != nil {
			ts.Fatalf("etcd is running")
		}
		srv, err := startEtcd(filepath.Join(key, ".etcd"), ts.Getenv("ETCD"))
		ts.Check(err)
		etcds[key] = srv
		ts.Setenv("ETCD", srv.Addr)
		ts.Defer(func() {
			etcdsMu.Lock()
			defer etcdsMu.Unlock()
			if s := etcds[key]; s != nil {
				s.Stop()
				delete(etcds, key)
			}
		})
	case "stop":
		if etcds[key] == nil {
			ts.Fatalf("etcd is not running")
		}
		etcds[key].Stop()
		delete(etcds, key)
	default:
		ts.Fatalf("usage: etcd start|stop")
	}
}

var (
	etcdsMu sync.Mutex
	etcds   = map[string]*etcdProc{} // by $WORK
)

// forgetprofile drops the draft profile, as in a home where no one ever ran
// 'rukh policy set': with it a script builds the state an earlier rukh left.
func cmdForgetProfile(ts *testscript.TestScript, neg bool, args []string) {
	st := store.New(ts.Getenv("RUKH_HOME"))
	ts.Check(st.UpdateDraft(func(d *store.Draft) error {
		d.Profile = nil
		return nil
	}))
}

// heldby checks that a running call holds KIND ID (store.HoldRelease or
// store.HoldRevision) and that the holder's command line contains WHO; with
// !, that nothing holds it.
//
//	heldby KIND ID WHO
func cmdHeldBy(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: heldby KIND ID WHO")
	}
	err := store.New(ts.Getenv("RUKH_HOME")).TryRemoveHeld(args[0], args[1], func() error { return nil })
	var in *store.InUseError
	switch {
	case neg && err != nil:
		ts.Fatalf("%s %s: %v", args[0], args[1], err)
	case neg:
	case !errors.As(err, &in):
		ts.Fatalf("%s %s is not held (%v)", args[0], args[1], err)
	case !strings.Contains(in.By(), args[2]):
		ts.Fatalf("%s %s is held by %s, not %s", args[0], args[1], in.By(), args[2])
	}
}

// chmodx makes files executable: txtar cannot carry modes.
func cmdChmodX(ts *testscript.TestScript, neg bool, args []string) {
	for _, a := range args {
		ts.Check(os.Chmod(ts.MkAbs(a), 0o755))
	}
}

// noorphans fails if any process still runs whose command line mentions the
// marker (the fake extension's grandchildren carry it).
func cmdNoOrphans(ts *testscript.TestScript, neg bool, args []string) {
	deadline := time.Now().Add(3 * time.Second)
	for {
		out, _ := exec.Command("pgrep", "-f", args[0]).Output()
		alive := strings.TrimSpace(string(out))
		if alive == "" {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("orphaned processes still running: %s", alive)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// fakeExtension speaks rukh.invoke/1 on fd 3 and misbehaves on request:
// its first argument (a fixed execute.args entry) picks the behaviour.
func fakeExtension() {
	if code, ok := fakeProcsChild(os.Args[1:]); ok {
		os.Exit(code)
	}
	if code, ok := fakeConfineChild(os.Args[1:]); ok {
		os.Exit(code)
	}
	os.Exit(runFake(os.Args[1:]))
}

func runFake(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "rukh-fake-ext: no behaviour")
		return 2
	}
	fd, _ := strconv.Atoi(os.Getenv("RUKH_CHANNEL_FD"))
	if fd == 0 {
		fmt.Fprintln(os.Stderr, "rukh-fake-ext: no channel")
		return 2
	}
	ch := os.NewFile(uintptr(fd), "channel")
	r := bufio.NewReader(ch)
	line, err := r.ReadBytes('\n')
	if err != nil {
		return 2
	}
	var inv struct {
		InvocationID string         `json:"invocationId"`
		Command      string         `json:"command"`
		Input        jsontext.Value `json:"input"`
		Explicit     []string       `json:"explicit"`
	}
	if err := json.Unmarshal(line, &inv, json.RejectUnknownMembers(false)); err != nil {
		return 2
	}
	report := func(outcome string, result any, reason string) {
		m := map[string]any{"type": "report", "invocationId": inv.InvocationID, "outcome": outcome}
		if result != nil {
			m["commandResult"] = result
		}
		if reason != "" {
			m["reason"] = reason
		}
		b, _ := json.Marshal(m)
		ch.Write(append(b, '\n'))
	}
	text := func(s string) any { return map[string]any{"kind": "text", "text": s} }
	data := func(v any) any { return map[string]any{"kind": "structured", "data": v} }
	switch args[0] {
	case "echo": // the invoke request minus its invocation id, as text
		var m map[string]jsontext.Value
		json.Unmarshal(line, &m)
		delete(m, "invocationId")
		b, _ := json.Marshal(m, json.Deterministic(true))
		report("succeeded", text(string(b)), "")
	case "input": // the typed input as structured data
		report("succeeded", data(inv.Input), "")
	case "text":
		fmt.Println("to stdout")
		fmt.Fprintln(os.Stderr, "to stderr")
		report("succeeded", text(strings.Join(args[1:], " ")), "")
	case "plain": // a result-less command (v1): output on stdout only
		fmt.Println(strings.Join(args[1:], " "))
		report("succeeded", nil, "")
	case "fail":
		report("command_failed", nil, "the thing was not there")
		return 1
	case "crash":
		fmt.Fprintln(os.Stderr, "fake crash")
		return 2
	case "lie":
		inv.InvocationID = "inv_somebodyelse"
		report("succeeded", text("hi"), "")
	case "badresult":
		report("succeeded", data(map[string]any{"id": "not-an-integer"}), "")
	case "bigresult":
		report("succeeded", text(strings.Repeat("x", 200<<10)), "")
	case "succeed-exit1":
		report("succeeded", text("hi"), "")
		return 1
	case "hang":
		time.Sleep(time.Hour)
	case "ignore-cancel":
		ignoreTerm()
		os.WriteFile("started", nil, 0o644) // readiness, in the caller's directory
		time.Sleep(time.Hour)
	case "gate": // readiness, then waits for the file "go" (both in the caller's directory)
		os.WriteFile("started", nil, 0o644)
		for !fileExists("go") {
			time.Sleep(10 * time.Millisecond)
		}
		report("succeeded", text("passed the gate"), "")
	case "grandchild":
		exec.Command("sh", "-c", "exec sleep 300 # rukh-orphan-marker").Start()
		report("succeeded", text("spawned"), "")
	case "close-early":
		ch.Close()
		return 0
	case "procs": // procs_test.go
		return fakeProcs(args[1:], inv.Input, func(outcome, text string) {
			report(outcome, map[string]any{"kind": "text", "text": text}, "")
		})
	case "confine": // confine_test.go
		return fakeConfine(inv.Input, func(outcome, s, reason string) { report(outcome, text(s), reason) })
	case "flood":
		chunk := strings.Repeat("f", 64<<10)
		for i := 0; i < 64; i++ { // 4 MiB on each stream
			os.Stdout.WriteString(chunk)
			os.Stderr.WriteString(chunk)
		}
		report("succeeded", text("flooded"), "")
	case "pretty": // a report pretty-printed over several lines
		b, _ := json.Marshal(map[string]any{"type": "report", "invocationId": inv.InvocationID, "outcome": "succeeded", "commandResult": text("hi")}, jsontext.WithIndent("  "))
		ch.Write(append(b, '\n'))
	case "settings": // settings_test.go
		return fakeSettings(line, inv.Input, func(outcome, s string) { report(outcome, text(s), "") })
	case "progress":
		for i := 1; i <= 3; i++ {
			fmt.Fprintf(ch, `{"type":"progress","message":"step %d","progress":%d,"total":3}`+"\n", i, i)
		}
		report("succeeded", text("done"), "")
	default:
		fmt.Fprintf(os.Stderr, "rukh-fake-ext: unknown behaviour %q\n", args[0])
		return 2
	}
	return 0
}

// exitcode runs a command and checks its exact exit status; its output
// becomes the script's stdout and stderr.
//
//	exitcode N PROGRAM [ARGS...]
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Dir = ts.MkAbs(".")
	for _, k := range []string{"PATH", "HOME", "RUKH_HOME", "LANG", "TMPDIR", "WORK"} {
		cmd.Env = append(cmd.Env, k+"="+ts.Getenv(k))
	}
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		if p := filepath.Join(dir, args[1]); fileExists(p) {
			cmd.Path, cmd.Err = p, nil
			break
		}
	}
	cmd.Stdout, cmd.Stderr = ts.Stdout(), ts.Stderr()
	err = cmd.Run()
	got := 0
	if ee, ok := err.(*exec.ExitError); ok {
		got = ee.ExitCode()
	} else if err != nil {
		ts.Fatalf("exitcode: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

// waitfile waits up to 10 s for a file to appear (a readiness signal from
// a background process), instead of a sleep that races it.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile NAME")
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(ts.MkAbs(args[0])); err == nil {
			return
		}
	}
	ts.Fatalf("%s did not appear within a minute", args[0])
}

// copyhome copies a fixture home from store/testdata (a home written by an
// older rukh) to DIR, so a script can run the current rukh on it.
//
//	copyhome NAME DIR
func cmdCopyHome(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: copyhome NAME DIR")
	}
	src := filepath.Join(repoRoot, "store", "testdata", args[0])
	dst := ts.MkAbs(args[1])
	ts.Check(filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o700)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, fi.Mode().Perm()&0o755|0o600)
	}))
}

// repoRoot is where the tests run: the module root.
var repoRoot, _ = os.Getwd()
