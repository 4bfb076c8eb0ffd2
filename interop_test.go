package main

// End-to-end MCP interop: the real rukh binary (built once, CGO_ENABLED=0)
// serving a home with an installed and published package, driven over stdio
// by MCP clients nobody here wrote — github.com/modelcontextprotocol/go-sdk
// (modern 2026-07-28 and legacy initialize) and github.com/mark3labs/mcp-go —
// plus a raw wire exchange and the CLI/MCP equivalence check. Every call
// reaches a real extension process: testdata/interop/pkg/bin/ext (POSIX sh)
// and testdata/interop/echo/bin/ext (this test binary as rukh-fake-ext, put on
// PATH by testscript.Main).

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gowebpki/jcs"
	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// hangMarker is in the hang command's argv: the fixture's marker made
// unique to this test process, so counting processes by it never sees
// another run's (another checkout's tests on the same machine).
var hangMarker = fmt.Sprintf("%s-%d", fixtureHangMarker, os.Getpid())

const (
	interopNamespace  = "interop"
	fixtureHangMarker = "rukh-interop-hang-marker" // as the fixture manifest has it
	fillerCount       = 36
	interopToolCount  = 5 + fillerCount
	// A page that has a next one holds from pageMin to pageMax tools
	// (docs/design.md, Page bounds).
	pageMin, pageMax = 12, 32
)

// Compact tool names, the default (docs/design.md, Names and
// fingerprints): slug of at most 16 + 24 hex.
var toolNameRE = regexp.MustCompile(`^[a-z0-9_-]{1,16}__[0-9a-f]{24}$`)

func TestInterop(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: Go MCP client libraries against every era")
	}
	bin := buildRukh(t)
	home := newInteropHome(t, bin, "testdata/interop/pkg", "interop.fake")
	want := expectedTools(t, bin, home)

	for _, v := range []string{"2026-07-28", "2025-11-25", "2025-06-18"} {
		t.Run("go-sdk/"+v, func(t *testing.T) {
			exercise(t, newGoSDKClient(t, bin, home, v), want)
		})
	}
	for _, v := range []string{"2026-07-28", "2025-06-18"} {
		t.Run("mcp-go/"+v, func(t *testing.T) {
			exercise(t, newMCPGoClient(t, bin, home, v), want)
		})
	}
	t.Run("raw-wire", func(t *testing.T) { rawWire(t, bin, home, want) })
	for _, client := range []string{"claude", "cursor", "vscode"} {
		t.Run("mcp-config/"+client, func(t *testing.T) { mcpConfigWorks(t, bin, home, client, len(want)) })
	}

	t.Run("equivalence", func(t *testing.T) {
		equivalence(t, bin, newInteropHome(t, bin, "testdata/interop/echo", "interop.echo"))
	})
}

// buildRukh builds the real binary the way a user does.
func buildRukh(t *testing.T) string {
	t.Helper()
	return buildRukhTags(t, "")
}

// buildRukhTags builds rukh with build tags ("etcd" for the shared store),
// and rukh_portable when the tests run with it: the tests of the default
// binary run the default binary. Each is built once per test process (a
// link costs seconds on a busy host); cleanAfter removes them.
func buildRukhTags(t *testing.T, tags string) string {
	t.Helper()
	b := &rukhBuilds
	b.mu.Lock()
	defer b.mu.Unlock()
	if bin, ok := b.bins[tags]; ok {
		return bin
	}
	if b.dir == "" {
		dir, err := os.MkdirTemp("", "rukh-test-bin-")
		if err != nil {
			t.Fatal(err)
		}
		b.dir, b.bins = dir, map[string]string{}
	}
	gobin := "go"
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		if p := filepath.Join(strings.TrimSpace(string(out)), "bin", "go"); fileExists(p) {
			gobin = p
		}
	}
	bin := filepath.Join(b.dir, "rukh-"+strings.ReplaceAll(tags, ",", "-"), "rukh")
	args := []string{"build", "-trimpath", "-o", bin}
	if portableTag != "" { // a test run with -tags rukh_portable tests that binary
		tags = strings.TrimPrefix(tags+","+portableTag, ",")
	}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.Command(gobin, append(args, ".")...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	b.bins[tags] = bin
	return bin
}

// rukhBuilds are the binaries buildRukhTags built, by tags.
var rukhBuilds struct {
	mu   sync.Mutex
	dir  string
	bins map[string]string
}

// rukhEnv is the environment of every rukh process: this process's (its PATH
// holds rukh-fake-ext) plus the home.
func rukhEnv(home string) []string {
	return append(os.Environ(), "RUKH_HOME="+home, "LANG=C.UTF-8")
}

// runRukh runs the built binary and returns stdout, stderr and the exit code.
func runRukh(t *testing.T, bin, home string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = rukhEnv(home)
	cmd.Dir = filepath.Dir(home)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("rukh %s: %v", strings.Join(args, " "), err)
	}
	return stdout.String(), stderr.String(), code
}

func mustRukh(t *testing.T, bin, home string, args ...string) string {
	t.Helper()
	out, errOut, code := runRukh(t, bin, home, args...)
	if code != 0 {
		t.Fatalf("rukh %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// copyInteropFixture copies the fixture package into dir/pkg, with this
// test process's hang marker, and returns its path.
func copyInteropFixture(t *testing.T, fixture, dir string) string {
	return copyFixture(t, fixture, dir, fixtureHangMarker, hangMarker)
}

// copyFixture copies the fixture package into dir/pkg, with placeholder's
// quoted occurrences in its manifest replaced by marker (this test
// process's own), and returns its path.
func copyFixture(t *testing.T, fixture, dir, placeholder, marker string) string {
	t.Helper()
	pkg := filepath.Join(dir, "pkg")
	if err := os.CopyFS(pkg, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	// A checkout may lose the execute bit.
	if err := os.Chmod(filepath.Join(pkg, "bin", "ext"), 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(pkg, "rukh-extension.json")
	m, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	m = bytes.ReplaceAll(m, []byte(strconv.Quote(placeholder)), []byte(strconv.Quote(marker)))
	if err := os.WriteFile(manifest, m, 0o644); err != nil {
		t.Fatal(err)
	}
	return pkg
}

// newInteropHome copies a fixture package, then runs the owner flow on it:
// install, activate, policy, publish.
func newInteropHome(t *testing.T, bin, fixture, name string) string {
	t.Helper()
	dir := t.TempDir()
	pkg := copyInteropFixture(t, fixture, dir)
	home := filepath.Join(dir, "home")
	profile := filepath.Join(dir, "profile.json")
	p := fmt.Sprintf(`{"endpoints":{"local":{"namespace":%q,"publish":{"packages":[%q]}}}}`, interopNamespace, name)
	if err := os.WriteFile(profile, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRukh(t, bin, home, "install", "--allow-unsigned", pkg)
	mustRukh(t, bin, home, "activate", name)
	mustRukh(t, bin, home, "policy", "set", profile)
	mustRukh(t, bin, home, "publish")
	return home
}

// wantTool is what a client must see for one published command.
type wantTool struct {
	id          string
	title       string
	annotations map[string]any
}

// expectedTools computes every compact tool name by the naming rule of
// docs/design.md (slug + the
// first 24 hex digits of the SHA-256 of the RFC 8785 array), independently
// of the server, for the revision the CLI
// reports as active.
func expectedTools(t *testing.T, bin, home string) map[string]wantTool {
	t.Helper()
	var listed struct {
		Revision string `json:"revision"`
	}
	if err := stdjson.Unmarshal([]byte(mustRukh(t, bin, home, "tools", "--json")), &listed); err != nil {
		t.Fatal(err)
	}
	if listed.Revision != "r1" {
		t.Fatalf("fresh home publishes r1, rukh tools says %q", listed.Revision)
	}
	name := func(id string) string {
		raw, _ := stdjson.Marshal([]string{"rukh.mcp-tool/1", interopNamespace, listed.Revision, id})
		canon, err := jcs.Transform(raw)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(canon)
		slug := strings.ReplaceAll(id, ".", "_")
		if len(slug) > 16 {
			slug = slug[:16]
		}
		return slug + "__" + hex.EncodeToString(sum[:])[:24]
	}
	want := map[string]wantTool{
		name("interop.greet"): {id: "interop.greet", title: "Greet", annotations: map[string]any{
			"title": "Greet", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}},
		name("interop.echo"): {id: "interop.echo", title: "Echo", annotations: map[string]any{
			"title": "Echo", "readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": true}},
		name("interop.fail"):     {id: "interop.fail", title: "Always fails", annotations: map[string]any{}},
		name("interop.hang"):     {id: "interop.hang", title: "Runs until cancelled", annotations: map[string]any{}},
		name("interop.progress"): {id: "interop.progress", title: "Reports progress three times", annotations: map[string]any{}},
	}
	for i := 1; i <= fillerCount; i++ {
		id := fmt.Sprintf("interop.filler-%02d", i)
		want[name(id)] = wantTool{id: id, title: fmt.Sprintf("Filler %02d", i), annotations: map[string]any{}}
	}
	return want
}

func toolByID(t *testing.T, want map[string]wantTool, id string) string {
	t.Helper()
	for name, w := range want {
		if w.id == id {
			return name
		}
	}
	t.Fatalf("no tool for %s", id)
	return ""
}

// client is what every MCP client library under test offers, reduced to
// plain JSON values as the library decoded them.
type client interface {
	listPage(ctx context.Context, cursor string) (tools []map[string]any, next string, err error)
	call(ctx context.Context, name string, args stdjson.RawMessage) (*callResult, error)
	close() error
}

type callResult struct {
	isError    bool
	structured any      // structuredContent as decoded
	texts      []string // the text content blocks
	other      int      // non-text content blocks
}

// exercise runs the common checks through one client.
func exercise(t *testing.T, c client, want map[string]wantTool) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	t.Run("list", func(t *testing.T) {
		all, pages := listAll(t, ctx, c)
		if pages < 2 {
			t.Errorf("%d tools came in %d page(s), want at least 2", len(all), pages)
		}
		seen := map[string]bool{}
		var names []string
		for _, tool := range all {
			name, _ := tool["name"].(string)
			names = append(names, name)
			if seen[name] {
				t.Errorf("tool %s listed twice", name)
			}
			seen[name] = true
			if !toolNameRE.MatchString(name) {
				t.Errorf("tool name %q is not slug__<24 hex>", name)
			}
			w, ok := want[name]
			if !ok {
				t.Errorf("unexpected tool %q", name)
				continue
			}
			checkTool(t, tool, w)
		}
		if len(all) != len(want) {
			t.Errorf("listed %d tools, want %d", len(all), len(want))
		}
		again, _ := listAll(t, ctx, c)
		var names2 []string
		for _, tool := range again {
			names2 = append(names2, tool["name"].(string))
		}
		if !slices.Equal(names, names2) {
			t.Errorf("a second walk listed another order:\n%v\n%v", names, names2)
		}
	})

	t.Run("call-succeeded", func(t *testing.T) {
		r := mustCall(t, ctx, c, toolByID(t, want, "interop.greet"), `{"name":"Ada","times":3,"tags":["a,b","😀 e\u0301"]}`)
		env := checkEnvelope(t, r, false, "succeeded")
		wantResult := map[string]any{"kind": "structured", "data": map[string]any{
			"name": "Ada", "times": float64(3), "tags": []any{"a,b", "😀 e\u0301"}}}
		if !reflect.DeepEqual(env["commandResult"], wantResult) {
			t.Errorf("commandResult = %v, want %v", env["commandResult"], wantResult)
		}
		// defaults applied by the kernel
		r = mustCall(t, ctx, c, toolByID(t, want, "interop.greet"), `{}`)
		env = checkEnvelope(t, r, false, "succeeded")
		wantResult = map[string]any{"kind": "structured", "data": map[string]any{"name": "world", "times": float64(1)}}
		if !reflect.DeepEqual(env["commandResult"], wantResult) {
			t.Errorf("commandResult = %v, want %v", env["commandResult"], wantResult)
		}
		// a text result: the sh extension echoes its input as JSON text
		msg := "héllo \"q\" \\ 𝄞"
		args, _ := stdjson.Marshal(map[string]string{"message": msg})
		r = mustCall(t, ctx, c, toolByID(t, want, "interop.echo"), args)
		env = checkEnvelope(t, r, false, "succeeded")
		cr, _ := env["commandResult"].(map[string]any)
		var echoed map[string]string
		if text, _ := cr["text"].(string); cr["kind"] != "text" || stdjson.Unmarshal([]byte(text), &echoed) != nil || echoed["message"] != msg {
			t.Errorf("echo commandResult = %v, want the input %q back", cr, msg)
		}
		r = mustCall(t, ctx, c, toolByID(t, want, "interop.filler-36"), `{}`)
		env = checkEnvelope(t, r, false, "succeeded")
		if cr, _ := env["commandResult"].(map[string]any); cr["text"] != "filler-36" {
			t.Errorf("filler-36 commandResult = %v", cr)
		}
	})

	t.Run("call-command-failed", func(t *testing.T) {
		r := mustCall(t, ctx, c, toolByID(t, want, "interop.fail"), `{}`)
		env := checkEnvelope(t, r, true, "command_failed")
		if env["reason"] != "the thing was not there" {
			t.Errorf("reason = %v", env["reason"])
		}
	})

	t.Run("call-rejected", func(t *testing.T) {
		for _, args := range []string{
			`{"times":9}`,      // over maximum
			`{"times":1.5}`,    // not an integer
			`{"name":null}`,    // null never means absent
			`{"nope":1}`,       // undeclared
			`{"tags":["a",1]}`, // wrong item type
			`{"name":"` + strings.Repeat("x", 41) + `"}`, // maxLength
		} {
			r := mustCall(t, ctx, c, toolByID(t, want, "interop.greet"), args)
			env := checkEnvelope(t, r, true, "rejected")
			if _, has := env["commandResult"]; has {
				t.Errorf("%s: a rejected call has a commandResult: %v", args, env)
			}
		}
	})

	t.Run("call-cancelled", func(t *testing.T) {
		if n := countProcs(t, hangMarker); n != 0 {
			t.Fatalf("%d hang process(es) running before the test", n)
		}
		callCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := c.call(callCtx, toolByID(t, want, "interop.hang"), stdjson.RawMessage(`{}`))
			done <- err
		}()
		waitProcs(t, hangMarker, 1)
		stop()
		select {
		case err := <-done:
			if err == nil || !errors.Is(err, context.Canceled) && !strings.Contains(err.Error(), "cancel") {
				t.Errorf("cancelled call returned %v, want a cancellation error", err)
			}
		case <-time.After(20 * time.Second): // under the 30 s deadline a cancel not honoured would wait for
			t.Fatal("the cancelled call did not return")
		}
		waitProcs(t, hangMarker, 0)
		// The server still serves.
		r := mustCall(t, ctx, c, toolByID(t, want, "interop.greet"), `{"name":"after"}`)
		checkEnvelope(t, r, false, "succeeded")
	})

	if err := c.close(); err != nil {
		t.Errorf("close: %v", err)
	}
}

// listAll follows nextCursor to the end, checking the page size.
func listAll(t *testing.T, ctx context.Context, c client) (all []map[string]any, pages int) {
	t.Helper()
	cursor := ""
	for {
		tools, next, err := c.listPage(ctx, cursor)
		if err != nil {
			t.Fatalf("tools/list page %d: %v", pages+1, err)
		}
		pages++
		if next != "" && (len(tools) < pageMin || len(tools) > pageMax) {
			t.Errorf("page %d has %d tools and a next cursor, want %d to %d", pages, len(tools), pageMin, pageMax)
		}
		all = append(all, tools...)
		if next == "" {
			return all, pages
		}
		if pages > interopToolCount {
			t.Fatal("the cursor never ends")
		}
		cursor = next
	}
}

func checkTool(t *testing.T, tool map[string]any, w wantTool) {
	t.Helper()
	name := tool["name"]
	if tool["title"] != w.title {
		t.Errorf("%s: title %v, want %q", name, tool["title"], w.title)
	}
	in, _ := tool["inputSchema"].(map[string]any)
	if in["type"] != "object" || in["additionalProperties"] != false {
		t.Errorf("%s: inputSchema %v is not a closed object", name, in)
	}
	out, _ := tool["outputSchema"].(map[string]any)
	props, _ := out["properties"].(map[string]any)
	if out["type"] != "object" || props["invocationId"] == nil || props["outcome"] == nil || props["commandResult"] == nil {
		t.Errorf("%s: outputSchema %v is not the core envelope", name, out)
	}
	ann, _ := tool["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
	}
	if !reflect.DeepEqual(ann, w.annotations) {
		t.Errorf("%s: annotations %v, want %v", name, ann, w.annotations)
	}
}

func mustCall(t *testing.T, ctx context.Context, c client, name string, args any) *callResult {
	t.Helper()
	var raw stdjson.RawMessage
	switch a := args.(type) {
	case string:
		raw = stdjson.RawMessage(a)
	case []byte:
		raw = a
	}
	r, err := c.call(ctx, name, raw)
	if err != nil {
		t.Fatalf("tools/call %s %s: %v", name, raw, err)
	}
	return r
}

// checkEnvelope checks isError, the envelope in structuredContent and the
// one text block that must be the same object serialised.
func checkEnvelope(t *testing.T, r *callResult, isError bool, outcome string) map[string]any {
	t.Helper()
	if r.isError != isError {
		t.Errorf("isError = %v, want %v", r.isError, isError)
	}
	env, ok := r.structured.(map[string]any)
	if !ok {
		t.Fatalf("structuredContent = %#v, want the envelope object", r.structured)
	}
	if env["outcome"] != outcome {
		t.Errorf("outcome = %v (reason %v), want %s", env["outcome"], env["reason"], outcome)
	}
	if id, _ := env["invocationId"].(string); !strings.HasPrefix(id, "inv_") {
		t.Errorf("invocationId = %v", env["invocationId"])
	}
	for k := range env {
		switch k {
		case "invocationId", "outcome", "reason", "commandResult", "consequences":
		default:
			t.Errorf("envelope has unexpected member %q", k)
		}
	}
	if len(r.texts) != 1 || r.other != 0 {
		t.Fatalf("content has %d text and %d other blocks, want exactly one text block", len(r.texts), r.other)
	}
	var fromText any
	if err := stdjson.Unmarshal([]byte(r.texts[0]), &fromText); err != nil {
		t.Fatalf("text block is not JSON: %v: %q", err, r.texts[0])
	}
	if !reflect.DeepEqual(fromText, r.structured) {
		t.Errorf("text block %s differs from structuredContent %v", r.texts[0], r.structured)
	}
	return env
}

// countProcs counts processes whose command line contains marker.
// A program's init (rukh-init, with the program's command line after its
// own) is not the program and is not counted.
func countProcs(t *testing.T, marker string) int {
	t.Helper()
	out, err := exec.Command("pgrep", "-a", "-f", marker).Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		return 0
	}
	if err != nil {
		t.Fatalf("pgrep: %v", err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[1] != "rukh-init" {
			n++
		}
	}
	return n
}

// waitProcs waits until exactly n processes carry marker (0: all gone).
func waitProcs(t *testing.T, marker string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := countProcs(t, marker)
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d process(es) carry %q, want %d", got, marker, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// toPlain re-decodes a library value as plain JSON values.
func toPlain(v any) (any, error) {
	b, err := stdjson.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = stdjson.Unmarshal(b, &out)
	return out, err
}

// lockedBuffer collects a client's wire log from several goroutines.
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

// --- github.com/modelcontextprotocol/go-sdk ---

type goSDKClient struct {
	t    *testing.T
	cs   *mcp.ClientSession
	wire *lockedBuffer
	ver  string
}

func newGoSDKClient(t *testing.T, bin, home, version string) client {
	cmd := exec.Command(bin, "serve-mcp")
	cmd.Env = rukhEnv(home)
	cmd.Dir = filepath.Dir(home)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	wire := &lockedBuffer{}
	transport := &mcp.LoggingTransport{Transport: &mcp.CommandTransport{Command: cmd}, Writer: wire}
	c := mcp.NewClient(&mcp.Implementation{Name: "rukh-interop", Version: "0.0.1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v\nstderr: %s", err, stderr.String())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("wire:\n%s\nserver stderr:\n%s", truncate(wire.String(), 20000), stderr.String())
		}
	})
	// The era must be the one asked for: a silent fallback would hide a
	// broken modern path.
	log := wire.String()
	modern := version >= "2026-07-28"
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Errorf("negotiated %q, want %q", got, version)
	}
	if modern && (!strings.Contains(log, `"method":"server/discover"`) || strings.Contains(log, `"method":"initialize"`)) {
		t.Errorf("modern connect did not use server/discover alone:\n%s", log)
	}
	if !modern && !strings.Contains(log, `"method":"initialize"`) {
		t.Errorf("legacy connect did not initialize:\n%s", log)
	}
	return &goSDKClient{t: t, cs: cs, wire: wire, ver: version}
}

func (c *goSDKClient) listPage(ctx context.Context, cursor string) ([]map[string]any, string, error) {
	res, err := c.cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
	if err != nil {
		return nil, "", err
	}
	var tools []map[string]any
	for _, tool := range res.Tools {
		p, err := toPlain(tool)
		if err != nil {
			return nil, "", err
		}
		tools = append(tools, p.(map[string]any))
	}
	return tools, res.NextCursor, nil
}

func (c *goSDKClient) call(ctx context.Context, name string, args stdjson.RawMessage) (*callResult, error) {
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		if ctx.Err() != nil && !c.waitCancelled() {
			c.t.Errorf("no notifications/cancelled on the wire after a cancelled call")
		}
		return nil, err
	}
	r := &callResult{isError: res.IsError}
	if r.structured, err = toPlain(res.StructuredContent); err != nil {
		return nil, err
	}
	for _, block := range res.Content {
		if tc, ok := block.(*mcp.TextContent); ok {
			r.texts = append(r.texts, tc.Text)
		} else {
			r.other++
		}
	}
	return r, nil
}

func (c *goSDKClient) waitCancelled() bool {
	for range 100 {
		if strings.Contains(c.wire.String(), `"method":"notifications/cancelled"`) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

func (c *goSDKClient) close() error {
	if c.ver >= "2026-07-28" {
		// Every modern request carried its own _meta.
		for _, line := range strings.Split(c.wire.String(), "\n") {
			if strings.HasPrefix(line, "write: ") && strings.Contains(line, `"id":`) &&
				!strings.Contains(line, `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`) {
				c.t.Errorf("modern request without protocolVersion _meta: %s", line)
			}
		}
	}
	return c.cs.Close()
}

// --- github.com/mark3labs/mcp-go ---

type mcpGoClient struct {
	c *mcpclient.Client
}

func newMCPGoClient(t *testing.T, bin, home, version string) client {
	tr := transport.NewStdio(bin, []string{"RUKH_HOME=" + home, "LANG=C.UTF-8"}, "serve-mcp")
	c := mcpclient.NewClient(tr, mcpclient.WithProtocolVersion(version))
	// Start's context must outlive the session: it may own the process.
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := mcpgo.InitializeRequest{}
	req.Params.ProtocolVersion = version
	req.Params.ClientInfo = mcpgo.Implementation{Name: "rukh-interop", Version: "0.0.1"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if res.ProtocolVersion != version {
		t.Errorf("negotiated %q, want %q", res.ProtocolVersion, version)
	}
	return &mcpGoClient{c: c}
}

func (c *mcpGoClient) listPage(ctx context.Context, cursor string) ([]map[string]any, string, error) {
	req := mcpgo.ListToolsRequest{}
	req.Params.Cursor = mcpgo.Cursor(cursor)
	res, err := c.c.ListToolsByPage(ctx, req)
	if err != nil {
		return nil, "", err
	}
	var tools []map[string]any
	for _, tool := range res.Tools {
		p, err := toPlain(tool)
		if err != nil {
			return nil, "", err
		}
		tools = append(tools, p.(map[string]any))
	}
	return tools, string(res.NextCursor), nil
}

func (c *mcpGoClient) call(ctx context.Context, name string, args stdjson.RawMessage) (*callResult, error) {
	req := mcpgo.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.c.CallTool(ctx, req)
	if err != nil {
		return nil, err
	}
	r := &callResult{isError: res.IsError}
	if r.structured, err = toPlain(res.StructuredContent); err != nil {
		return nil, err
	}
	for _, block := range res.Content {
		if tc, ok := block.(mcpgo.TextContent); ok {
			r.texts = append(r.texts, tc.Text)
		} else {
			r.other++
		}
	}
	return r, nil
}

func (c *mcpGoClient) close() error { return c.c.Close() }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// --- the raw wire, byte for byte ---

// rawSession is serve-mcp with the test holding both pipes.
type rawSession struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan []byte
}

func startRaw(t *testing.T, bin, home string) *rawSession {
	cmd := exec.Command(bin, "serve-mcp")
	cmd.Env = rukhEnv(home)
	cmd.Dir = filepath.Dir(home)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &rawSession{t: t, cmd: cmd, in: in, lines: make(chan []byte, 64)}
	go func() {
		r := bufio.NewReaderSize(out, 1<<20)
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
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	return s
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func (s *rawSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

// next returns the next line the server wrote, which must be one JSON-RPC
// 2.0 message.
func (s *rawSession) next() map[string]stdjson.RawMessage {
	s.t.Helper()
	select {
	case line, ok := <-s.lines:
		if !ok {
			s.t.Fatal("serve-mcp closed stdout")
		}
		var m map[string]stdjson.RawMessage
		if err := stdjson.Unmarshal(line, &m); err != nil || string(m["jsonrpc"]) != `"2.0"` {
			s.t.Fatalf("not a JSON-RPC 2.0 line (%v): %q", err, truncate(string(line), 300))
		}
		return m
	case <-time.After(time.Minute):
		s.t.Fatal("no answer from serve-mcp")
	}
	return nil
}

func rawWire(t *testing.T, bin, home string, want map[string]wantTool) {
	s := startRaw(t, bin, home)
	greet := toolByID(t, want, "interop.greet")
	s.send(`{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"` + greet + `","arguments":{"name":"x\u00e9\ud834\udd1e"},` + modernMeta + `}}`)
	m := s.next()
	if string(m["id"]) != `"c1"` {
		t.Fatalf("answer to %s, want c1", m["id"])
	}
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent stdjson.RawMessage `json:"structuredContent"`
		IsError           *bool              `json:"isError"`
		ResultType        string             `json:"resultType"`
	}
	if err := stdjson.Unmarshal(m["result"], &res); err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	stdjson.Compact(&compact, res.StructuredContent)
	if len(res.Content) != 1 || res.Content[0].Type != "text" || res.Content[0].Text != compact.String() {
		t.Errorf("the text block is not structuredContent serialised:\ntext: %+v\nstructured: %s", res.Content, compact.String())
	}
	if res.ResultType != "complete" || res.IsError != nil && *res.IsError {
		t.Errorf("resultType %q isError %v", res.ResultType, res.IsError)
	}
	if !strings.Contains(compact.String(), `"data":{"name":"xé𝄞","times":1}`) {
		t.Errorf("structuredContent %s", compact.String())
	}

	// A cancelled call is never answered, even once its child is gone; the
	// next request is.
	s.send(`{"jsonrpc":"2.0","id":"h1","method":"tools/call","params":{"name":"` + toolByID(t, want, "interop.hang") + `","arguments":{},` + modernMeta + `}}`)
	waitProcs(t, hangMarker, 1)
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"h1","reason":"test"}}`)
	waitProcs(t, hangMarker, 0)
	s.send(`{"jsonrpc":"2.0","id":"c2","method":"tools/call","params":{"name":"` + greet + `","arguments":{},` + modernMeta + `}}`)
	if m := s.next(); string(m["id"]) != `"c2"` {
		t.Fatalf("answer to %s after the cancel, want c2 (no answer to h1)", m["id"])
	}
	s.in.Close()
	for line := range s.lines {
		t.Errorf("after stdin closed: %s", line)
	}
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("serve-mcp after stdin EOF: %v", err)
	}
}

// mcpConfigWorks starts the server exactly as the printed snippet says
// (command, args, env) and lists its tools through go-sdk.
func mcpConfigWorks(t *testing.T, bin, home, client string, tools int) {
	var cfg map[string]map[string]struct {
		Type    string            `json:"type"`
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
	}
	if err := stdjson.Unmarshal([]byte(mustRukh(t, bin, home, "mcp-config", "--client", client)), &cfg); err != nil {
		t.Fatal(err)
	}
	key := "mcpServers"
	if client == "vscode" {
		key = "servers"
	}
	srv, ok := cfg[key]["rukh-local"]
	if !ok || len(cfg) != 1 {
		t.Fatalf("no %s.rukh-local in %v", key, cfg)
	}
	if client == "vscode" && srv.Type != "stdio" {
		t.Errorf("vscode type %q, want stdio", srv.Type)
	}
	cmd := exec.Command(srv.Command, srv.Args...)
	cmd.Env = os.Environ()
	for k, v := range srv.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: client, Version: "0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	n := 0
	for _, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != tools {
		t.Errorf("the configured server lists %d tools, want %d", n, tools)
	}
}

// --- CLI, stdio and HTTP reach the extension with the same request ---

func equivalence(t *testing.T, bin, home string) {
	// The endpoint is served over HTTP too, to an agent with a static key.
	profile := filepath.Join(filepath.Dir(home), "profile-http.json")
	p := fmt.Sprintf(`{"endpoints":{"local":{"namespace":%q,"transports":["stdio","http"],"publish":{"packages":["interop.echo"]}}}}`, interopNamespace)
	if err := os.WriteFile(profile, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRukh(t, bin, home, "policy", "set", profile)
	mustRukh(t, bin, home, "publish")
	var key struct {
		Token string `json:"token"`
	}
	if err := stdjson.Unmarshal([]byte(mustRukh(t, bin, home, "agent", "add", "eq", "--endpoint", "local", "--json")), &key); err != nil {
		t.Fatal(err)
	}
	base, _ := startHTTPServer(t, bin, home, "--rate", "0")

	c := newGoSDKClient(t, bin, home, "2026-07-28").(*goSDKClient)
	defer c.close()
	hc := newGoSDKHTTPClientAs(t, base+"/mcp/v1/"+interopNamespace+"/local", "2026-07-28", key.Token).(*goSDKClient)
	defer hc.close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var tool string
	for tl, err := range c.cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		tool = tl.Name
	}
	if !strings.HasPrefix(tool, "eq_run__") {
		t.Fatalf("tool %q", tool)
	}
	call := func(t *testing.T, c *goSDKClient, args string) map[string]any {
		t.Helper()
		r, err := c.call(ctx, tool, stdjson.RawMessage(args))
		if err != nil {
			t.Fatalf("tools/call %s: %v", args, err)
		}
		env, _ := r.structured.(map[string]any)
		if env == nil {
			t.Fatalf("no envelope: %+v", r)
		}
		if r.isError != (env["outcome"] != "succeeded") {
			t.Errorf("isError %v with outcome %v", r.isError, env["outcome"])
		}
		return env
	}
	mcpCall := func(t *testing.T, args string) map[string]any { return call(t, c, args) }
	httpCall := func(t *testing.T, args string) map[string]any { return call(t, hc, args) }

	same := []struct {
		name string
		cli  []string
		mcp  []string // each must reach the extension as cli does
	}{
		{"defaults", []string{"--s", "x"}, []string{`{"s":"x"}`}},
		{"explicit-equal-to-default", []string{"--s", "x", "--n", "7", "--color", "red"}, []string{`{"s":"x","n":7,"color":"red"}`, `{"color":"red","n":7,"s":"x"}`}},
		{"every-type", []string{"--s", "x", "--n", "-3", "--lim", "10", "--d", "2.25", "--x", "1.5", "--b", "--color", "green", "pos word"},
			[]string{`{"s":"x","n":-3,"lim":10,"d":"2.25","x":1.5,"b":true,"color":"green","rest":"pos word"}`}},
		{"boolean-false", []string{"--s", "x", "--b=false"}, []string{`{"s":"x","b":false}`}},
		{"list-commas", []string{"--s", "x", "--tag", "a,b", "--tag", ",", "--tag", "c"}, []string{`{"s":"x","tags":["a,b",",","c"]}`}},
		{"list-integers-decimals", []string{"--s", "x", "--id", "1", "--id", "-2", "--amount", "01.50", "--amount", "-0"},
			[]string{`{"s":"x","ids":[1,-2],"amounts":["01.50","-0"]}`, `{"s":"x","ids":[1.0,-2e0],"amounts":[1.50,-0]}`}},
		{"non-bmp-combining", []string{"--s", "e\u0301 😀 𝄞 \u0627\u0644", "--short", "😀😀😀"},
			[]string{`{"s":"e\u0301 😀 𝄞 \u0627\u0644","short":"😀😀😀"}`, `{"s":"e\u0301 \ud83d\ude00 \ud834\udd1e \u0627\u0644","short":"\ud83d\ude00😀😀"}`}},
		{"int64-max", []string{"--s", "x", "--big", "9223372036854775807"}, []string{`{"s":"x","big":9223372036854775807}`}},
		{"int64-min", []string{"--s", "x", "--big", "-9223372036854775808"}, []string{`{"s":"x","big":-9223372036854775808}`}},
		{"2^53+1", []string{"--s", "x", "--big", "9007199254740993"}, []string{`{"s":"x","big":9007199254740993}`, `{"s":"x","big":9.007199254740993e15}`}},
		{"integer-forms", []string{"--s", "x", "--n", "3"}, []string{`{"s":"x","n":3}`, `{"s":"x","n":3.0}`, `{"s":"x","n":3e0}`}},
		{"decimal-01.50", []string{"--s", "x", "--d", "01.50"}, []string{`{"s":"x","d":"01.50"}`, `{"s":"x","d":1.50}`, `{"s":"x","d":"1.5"}`}},
		{"decimal-minus-zero", []string{"--s", "x", "--d", "-0"}, []string{`{"s":"x","d":"-0"}`, `{"s":"x","d":-0}`, `{"s":"x","d":"0"}`}},
		{"decimal-exponent", []string{"--s", "x", "--d", "1E-2"}, []string{`{"s":"x","d":"1E-2"}`, `{"s":"x","d":1E-2}`, `{"s":"x","d":0.010}`}},
		{"integer-minus-zero", []string{"--s", "x", "--n", "-0"}, []string{`{"s":"x","n":-0}`, `{"s":"x","n":0}`}},
		{"number", []string{"--s", "x", "--x", "-1.25e-3"}, []string{`{"s":"x","x":-1.25e-3}`, `{"s":"x","x":-0.00125}`}},
		{"empty-string", []string{"--s", ""}, []string{`{"s":""}`}},
		{"dash-positional", []string{"--s", "x", "--", "--not-a-flag"}, []string{`{"s":"x","rest":"--not-a-flag"}`}},
	}
	for _, tc := range same {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runRukh(t, bin, home, append([]string{"eq"}, tc.cli...)...)
			if code != 0 {
				t.Fatalf("rukh eq %q: exit %d: %s", tc.cli, code, errOut)
			}
			for _, args := range tc.mcp {
				env := mcpCall(t, args)
				cr, _ := env["commandResult"].(map[string]any)
				text, _ := cr["text"].(string)
				if env["outcome"] != "succeeded" {
					t.Errorf("MCP %s: outcome %v: %v", args, env["outcome"], env["reason"])
					continue
				}
				// The CLI prints a text result as is, plus a final newline.
				// Only the caller differs: who asked, never what was asked.
				cliReq, ok1 := strings.CutPrefix(out, `{"caller":{"transport":"cli","subject":"owner"},`)
				mcpReq, ok2 := strings.CutPrefix(text, `{"caller":{"transport":"stdio","endpoint":"local","subject":"owner"},`)
				if !ok1 || !ok2 {
					t.Errorf("the extension was not told who called:\nCLI %s\nMCP %s", out, text)
				}
				if cliReq != mcpReq+"\n" {
					t.Errorf("the extension got different requests:\nCLI %q\n    %s\nMCP %s\n    %s", tc.cli, out, args, text)
				}
				// Over HTTP the same, but for the agent and its key's kind.
				henv := httpCall(t, args)
				hcr, _ := henv["commandResult"].(map[string]any)
				htext, _ := hcr["text"].(string)
				httpReq, ok3 := strings.CutPrefix(htext, `{"caller":{"transport":"http","endpoint":"local","subject":"owner","agent":"eq","credential":"static"},`)
				if henv["outcome"] != "succeeded" || !ok3 || httpReq != mcpReq {
					t.Errorf("HTTP and stdio reached the extension differently:\nstdio %s\nHTTP  %s (%v)", text, htext, henv["outcome"])
				}
			}
		})
	}

	rejected := []struct {
		name string
		cli  []string
		mcp  string
	}{
		{"missing-required", nil, `{}`},
		{"int64-overflow", []string{"--s", "x", "--big", "9223372036854775808"}, `{"s":"x","big":9223372036854775808}`},
		{"int64-underflow", []string{"--s", "x", "--big", "-9223372036854775809"}, `{"s":"x","big":-9223372036854775809}`},
		{"not-an-integer", []string{"--s", "x", "--n", "3.5"}, `{"s":"x","n":3.5}`},
		{"over-maximum", []string{"--s", "x", "--lim", "11"}, `{"s":"x","lim":11}`},
		{"under-minimum", []string{"--s", "x", "--lim", "0"}, `{"s":"x","lim":0}`},
		{"not-in-enum", []string{"--s", "x", "--color", "blue"}, `{"s":"x","color":"blue"}`},
		{"maxLength-code-points", []string{"--s", "x", "--short", "e\u0301e\u0301"}, `{"s":"x","short":"e\u0301e\u0301"}`},
		{"maxItems", []string{"--s", "x", "--tag", "1", "--tag", "2", "--tag", "3", "--tag", "4", "--tag", "5"}, `{"s":"x","tags":["1","2","3","4","5"]}`},
		{"bad-decimal", []string{"--s", "x", "--d", "1.2.3"}, `{"s":"x","d":"1.2.3"}`},
		{"nan", []string{"--s", "x", "--x", "NaN"}, `{"s":"x","x":"NaN"}`},
		{"undeclared", []string{"--s", "x", "--nope", "1"}, `{"s":"x","nope":1}`},
		{"list-item-type", []string{"--s", "x", "--id", "one"}, `{"s":"x","ids":["one"]}`},
	}
	for _, tc := range rejected {
		t.Run("rejected/"+tc.name, func(t *testing.T) {
			_, errOut, code := runRukh(t, bin, home, append([]string{"eq"}, tc.cli...)...)
			if code != 2 {
				t.Errorf("rukh eq %q: exit %d, want 2 (stderr %s)", tc.cli, code, errOut)
			}
			env := mcpCall(t, tc.mcp)
			if env["outcome"] != "rejected" {
				t.Errorf("MCP %s: outcome %v, want rejected", tc.mcp, env["outcome"])
			}
			if henv := httpCall(t, tc.mcp); henv["outcome"] != "rejected" || henv["reason"] != env["reason"] {
				t.Errorf("HTTP %s: %v (%v), want rejected as on stdio (%v)", tc.mcp, henv["outcome"], henv["reason"], env["reason"])
			}
			t.Logf("CLI: %sMCP: %v", errOut, env["reason"])
		})
	}
}
