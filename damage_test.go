package main

// A damaged store (a file cut short, pages overwritten) is refused with a
// clear error by every verb that reads it and by both servers: never a
// panic, a fault or a goroutine trace. Each case runs on a fresh copy of one
// prepared home whose rukh.db and tasks.db both hold branch and leaf pages.

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rukh-dev/rukh/store"
)

// boltLayout is what a damage needs to know of a bbolt file: its page
// size, its high-water mark and a live page of each kind.
type boltLayout struct {
	pageSize, hwm, root, branch, leaf int64
}

// readBoltLayout reads the newest valid meta page and finds a branch page
// and a leaf page of the file's largest bucket.
func readBoltLayout(t *testing.T, path string) boltLayout {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ne := binary.NativeEndian
	var l boltLayout
	var txid uint64
	for _, off := range []int64{0, 4096} {
		m := b[off+16:]
		if ne.Uint32(m) != 0xED0CDAED || ne.Uint64(m[48:]) < txid {
			continue
		}
		txid = ne.Uint64(m[48:])
		l.pageSize, l.root, l.hwm = int64(ne.Uint32(m[8:])), int64(ne.Uint64(m[16:])), int64(ne.Uint64(m[40:]))
	}
	page := func(id int64) []byte { return b[id*l.pageSize : (id+1)*l.pageSize] }
	// The root bucket's leaf lists the buckets; a bucket whose own root
	// is a branch page gives both kinds.
	root := page(l.root)
	for i := range int64(ne.Uint16(root[10:])) {
		e := 16 + i*16
		pos, ks := int64(ne.Uint32(root[e+4:])), int64(ne.Uint32(root[e+8:]))
		sub := int64(ne.Uint64(root[e+pos+ks:]))
		if sub == 0 || ne.Uint16(page(sub)[8:]) != 0x01 {
			continue
		}
		l.branch = sub
		l.leaf = int64(ne.Uint64(page(sub)[16+8:])) // its first child
		break
	}
	if l.branch == 0 || l.hwm == 0 {
		t.Fatalf("%s: no bucket with a branch page (layout %+v)", path, l)
	}
	return l
}

// storeDamage is one way a file gets damaged. mayRead: the damage leaves
// what some verbs read intact, so they may still succeed; doctor must
// still find it.
type storeDamage struct {
	name    string
	mayRead bool
	apply   func(f *os.File, l boltLayout) error
}

func garbage(f *os.File, off, n int64) error {
	r := rand.New(rand.NewPCG(uint64(off), uint64(n)))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	_, err := f.WriteAt(b, off)
	return err
}

var storeDamages = []storeDamage{
	{"cut to half its pages", false, func(f *os.File, l boltLayout) error { return f.Truncate(l.hwm * l.pageSize / 2) }},
	{"cut by its last page", false, func(f *os.File, l boltLayout) error { return f.Truncate((l.hwm - 1) * l.pageSize) }},
	{"cut to one page", false, func(f *os.File, l boltLayout) error { return f.Truncate(l.pageSize) }},
	{"cut between one and two pages", false, func(f *os.File, l boltLayout) error { return f.Truncate(l.pageSize + l.pageSize/2) }},
	{"cut to a few bytes", false, func(f *os.File, l boltLayout) error { return f.Truncate(40) }},
	{"garbage over the root page", false, func(f *os.File, l boltLayout) error {
		return garbage(f, l.root*l.pageSize, l.pageSize)
	}},
	// Behind an intact page header: the elements point anywhere.
	{"garbage over a branch page", true, func(f *os.File, l boltLayout) error {
		return garbage(f, l.branch*l.pageSize+16, l.pageSize-16)
	}},
	{"garbage over a leaf page", true, func(f *os.File, l boltLayout) error {
		return garbage(f, l.leaf*l.pageSize+16, l.pageSize-16)
	}},
	// One meta page: bbolt reads the other one, the state before the
	// last write.
	{"garbage over one meta page", true, func(f *os.File, l boltLayout) error { return garbage(f, 0, l.pageSize) }},
	{"garbage over both meta pages", false, func(f *os.File, l boltLayout) error { return garbage(f, 0, 2*l.pageSize) }},
}

// damageVerb is one read of the home and the files it reads: rukh.db
// (store) and tasks.db (tasks).
type damageVerb struct {
	name         string
	args         []string
	store, tasks bool
}

var damageVerbs = []damageVerb{
	{"status", []string{"status"}, true, false},
	{"list", []string{"list"}, true, false},
	{"tools", []string{"tools"}, true, false},
	{"describe", []string{"describe", "interop.echo"}, true, false},
	{"revisions", []string{"revisions"}, true, false},
	{"audit", []string{"audit"}, true, false},
	{"tasks", []string{"tasks"}, false, true},
	{"doctor", []string{"doctor"}, true, true},
	{"run", []string{"interop", "echo", "hi"}, true, false},
	{"policy show", []string{"policy", "show"}, true, false},
	{"agent list", []string{"agent", "list"}, true, false},
	{"serve-mcp", nil, true, true},
	{"serve-http", nil, true, true},
}

var crashRE = regexp.MustCompile(`panic|fatal error|goroutine \d|SIGBUS|SIGSEGV|unexpected fault`)

func TestDamagedStore(t *testing.T) {
	bin := buildRukh(t)
	base := newDamageHome(t, bin)
	layouts := map[string]boltLayout{}
	for _, f := range []string{store.DBName, store.TasksDBName} {
		layouts[f] = readBoltLayout(t, filepath.Join(base, f))
	}
	for _, file := range []string{store.DBName, store.TasksDBName} {
		for _, d := range storeDamages {
			t.Run(file+"/"+d.name, func(t *testing.T) {
				t.Parallel()
				for _, v := range damageVerbs {
					home := copyHome(t, base)
					f, err := os.OpenFile(filepath.Join(home, file), os.O_RDWR, 0)
					if err != nil {
						t.Fatal(err)
					}
					if err := d.apply(f, layouts[file]); err != nil {
						t.Fatal(err)
					}
					f.Close()
					out, errOut, code := runDamageVerb(t, bin, home, v)
					all := out + errOut
					if crashRE.MatchString(all) {
						t.Errorf("%s crashed (exit %d):\n%s", v.name, code, all)
						continue
					}
					reads := file == store.DBName && v.store || file == store.TasksDBName && v.tasks
					damaged := strings.Contains(all, "the store file is damaged") && strings.Contains(all, file)
					switch {
					case v.name == "doctor":
						// doctor exits 1 with each problem found
						if code != 1 || !regexp.MustCompile(`(?m)^FAIL .*`+regexp.QuoteMeta(file)+`.*damaged`).MatchString(out) {
							t.Errorf("doctor: exit %d, want 1 with the damaged %s named:\n%s", code, file, all)
						}
					case !reads:
						if code != 0 {
							t.Errorf("%s does not read %s, yet exit %d:\n%s", v.name, file, code, all)
						}
					case d.mayRead && code == 0:
					case code != 3 || !damaged || !strings.Contains(errOut, "rukh: error: ") || !strings.Contains(errOut, "rukh: hint: ") || !strings.Contains(errOut, "rukh doctor"):
						t.Errorf("%s: exit %d, want 3 with the damaged-store error and a hint to run doctor:\n%s", v.name, code, all)
					}
				}
			})
		}
	}
}

// newDamageHome is a published home whose endpoint runs tasks, with task
// records enough for tasks.db to need branch pages.
func newDamageHome(t *testing.T, bin string) string {
	t.Helper()
	dir := t.TempDir()
	pkg := copyInteropFixture(t, "testdata/interop/pkg", dir)
	home := filepath.Join(dir, "home")
	profile := filepath.Join(dir, "profile.json")
	p := fmt.Sprintf(`{"endpoints":{"local":{"namespace":%q,"transports":["stdio","http"],"httpAuth":"none","tasks":{"commands":["interop.echo"]},"publish":{"packages":["interop.fake"]}}}}`, interopNamespace)
	if err := os.WriteFile(profile, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRukh(t, bin, home, "install", "--allow-unsigned", pkg)
	mustRukh(t, bin, home, "activate", "interop.fake")
	mustRukh(t, bin, home, "policy", "set", profile)
	mustRukh(t, bin, home, "publish")
	mustRukh(t, bin, home, "interop", "echo", "hi")
	st := store.New(home)
	defer st.Close()
	// The last write of rukh.db is not the publish, whatever the parity
	// of its transactions: with one meta page gone, bbolt's state before
	// the last write is still a published one.
	if err := st.AppendAudit(store.AuditRecord{Agent: "test", Endpoint: "local", Command: "interop.echo", Outcome: "succeeded"}); err != nil {
		t.Fatal(err)
	}
	for range 40 {
		task := store.Task{ID: store.NewTaskID(), Endpoint: "local", Command: "interop.echo", Tool: "interop_echo",
			TTLMs: 3_600_000, StatusMessage: strings.Repeat("s", 1000)}
		if err := st.CreateTask(task, 1000); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.RecoverTasks(""); err != nil { // all final: no owner runs them
		t.Fatal(err)
	}
	return home
}

// copyHome copies a prepared home, modes and all.
func copyHome(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "home")
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("chmod", "-R", "u+w", dst).Run() })
	return dst
}

// runDamageVerb runs one verb; a server is asked for its tools once.
func runDamageVerb(t *testing.T, bin, home string, v damageVerb) (string, string, int) {
	t.Helper()
	switch v.name {
	case "serve-mcp":
		return serveMCPOnce(t, bin, home)
	case "serve-http":
		return serveHTTPOnce(t, bin, home)
	}
	return runRukh(t, bin, home, v.args...)
}

func serveMCPOnce(t *testing.T, bin, home string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, "serve-mcp", "--endpoint", "local")
	cmd.Env, cmd.Dir = rukhEnv(home), filepath.Dir(home)
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
`)
	var out, errOut lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	code := runToExit(t, cmd)
	if code == 0 && !strings.Contains(out.String(), `"id":2,"result"`) {
		errOut.Write([]byte("(serve-mcp answered no tools/list)\n"))
		code = -1
	}
	return out.String(), errOut.String(), code
}

// serveHTTPOnce starts serve-http; if it starts, it is asked for its tools
// and stopped; its exit code is then 0 only if it answered.
func serveHTTPOnce(t *testing.T, bin, home string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, "serve-http", "--listen", "127.0.0.1:0")
	cmd.Env, cmd.Dir = rukhEnv(home), filepath.Dir(home)
	var errOut lockedBuffer
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			errOut.Write(append(sc.Bytes(), '\n'))
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	exited := make(chan int, 1)
	go func() {
		code := damageExitCode(cmd.Wait())
		pw.Close()
		<-read // every line of stderr
		exited <- code
	}()
	var body string
	select {
	case code := <-exited:
		return "", errOut.String(), code
	case base := <-found:
		req, _ := http.NewRequest("POST", base+"/mcp/v1/"+interopNamespace+"/local",
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+httpMeta+`}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Method", "tools/list")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		if res, err := http.DefaultClient.Do(req); err == nil {
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			body = fmt.Sprintf("%d %s", res.StatusCode, b)
		}
		cmd.Process.Signal(os.Interrupt)
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Errorf("serve-http neither started nor ended:\n%s", errOut.String())
	}
	code := <-exited
	if code == 0 && !strings.HasPrefix(body, "200 ") {
		code = -1
	}
	return body, errOut.String(), code
}

func runToExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return damageExitCode(err)
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Errorf("%s did not end", cmd.Args[1])
		return -1
	}
}

func damageExitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
