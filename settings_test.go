//go:build linux

package main

// Settings end to end, through the real binary and real MCP clients: the
// extension receives its package's settings typed and defaulted on the
// channel, an endpoint's own value over the package's; a missing required
// setting rejects the call on every surface before anything runs; a
// sensitive value is never anywhere but on the channel (argv, environment,
// stdin, diagnostics, audit, logs, every owner verb's output, the store's
// bytes, a store copy); a value set while a server runs reaches the next
// call and leaves a running one alone; a process without the settings key
// refuses only the calls that need a sensitive value. The extension is this
// test binary (rukh-fake-ext "settings", fakeSettings).

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	stdjson "encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fixture's packages: settings.demo declares a sensitive required
// apiKey, an enum with a default and an optional integer; settings.plain
// declares one setting that is not sensitive.
const (
	settingsDemoManifest = `{"apiVersion":"rukh.extension/2","name":"settings.demo","version":"1.0.0","publisher":"settings",
 "description":"Settings fixture","settings":[
  {"id":"apiKey","type":"string","sensitive":true,"required":true,"description":"The service's API key"},
  {"id":"region","type":"string","enum":["eu","us"],"default":"eu","description":"Where the service runs"},
  {"id":"retries","type":"integer","minimum":0,"maximum":10}],
 "commands":[{"id":"sdemo.show","path":["sdemo","show"],"summary":"Report the settings received",` + settingsCommandTail + `}]}`
	settingsPlainManifest = `{"apiVersion":"rukh.extension/2","name":"settings.plain","version":"1.0.0","publisher":"settings",
 "description":"Settings fixture, nothing sensitive","settings":[{"id":"label","type":"string","required":true}],
 "commands":[{"id":"splain.show","path":["splain","show"],"summary":"Report the settings received",` + settingsCommandTail + `}]}`
	settingsCommandTail = `
  "params":[{"id":"dir","type":"string","flag":"dir","required":true},{"id":"tag","type":"string","flag":"tag","default":"call"},
   {"id":"gate","type":"string","flag":"gate","default":""}],
  "execute":{"program":"bin/ext","args":["settings"],"result":{"kind":"text"}},
  "machine":{"eligible":true,"interaction":"none","requiredFeatures":[{"id":"command-result","version":1}]}`
	settingsProfile = `{"endpoints":{
  "local":{"namespace":"sdemo","transports":["stdio","http"],"publish":{"packages":["settings.demo","settings.plain"]}},
  "tenant-a":{"namespace":"tenanta","transports":["stdio","http"],"publish":{"packages":["settings.demo","settings.plain"]}}}}`
	settingsDemoTool  = "sdemo_show__"  // the compact tool names' slugs
	settingsPlainTool = "splain_show__" //
)

// settingsHome is a home with both fixture packages installed and published
// on the endpoints local and tenant-a; calls is the fixture's capture
// directory.
type settingsHome struct {
	t              *testing.T
	bin, dir, home string
	calls          string
	env            []string // added to every rukh's environment
	ns             map[string]string
	serveStderr    []string // serve-mcp stderr files
	httpLogs       []*lockedBuffer
	invocations    []string // ids the MCP calls answered with
	rukhOutputs    map[string]string
}

func newSettingsHome(t *testing.T, bin string, env ...string) *settingsHome {
	t.Helper()
	dir := t.TempDir()
	h := &settingsHome{t: t, bin: bin, dir: dir, home: filepath.Join(dir, "home"), calls: filepath.Join(dir, "calls"),
		env: env, ns: map[string]string{"local": "sdemo", "tenant-a": "tenanta"}, rukhOutputs: map[string]string{}}
	must(t, os.MkdirAll(h.calls, 0o755))
	for name, m := range map[string]string{"demo": settingsDemoManifest, "plain": settingsPlainManifest} {
		pkg := filepath.Join(dir, "pkg-"+name)
		must(t, os.MkdirAll(filepath.Join(pkg, "bin"), 0o755))
		must(t, os.WriteFile(filepath.Join(pkg, "rukh-extension.json"), []byte(m), 0o644))
		must(t, os.WriteFile(filepath.Join(pkg, "bin", "ext"), []byte("#!/bin/sh\nexec rukh-fake-ext \"$@\"\n"), 0o755))
		h.must("install", "--allow-unsigned", pkg)
	}
	profile := filepath.Join(dir, "profile.json")
	must(t, os.WriteFile(profile, []byte(settingsProfile), 0o644))
	h.must("activate", "settings.demo")
	h.must("activate", "settings.plain")
	h.must("policy", "set", profile)
	h.must("publish")
	return h
}

// environ is every rukh's environment: this process's (its PATH holds
// rukh-fake-ext) without any settings key of its own, the home, h.env.
func (h *settingsHome) environ() []string {
	env := slices.DeleteFunc(rukhEnv(h.home), func(kv string) bool {
		return strings.HasPrefix(kv, "RUKH_SETTINGS_KEY")
	})
	return append(env, h.env...)
}

// run runs rukh with stdin and returns its stdout, stderr and exit code.
func (h *settingsHome) run(stdin string, args ...string) (string, string, int) {
	h.t.Helper()
	cmd := exec.Command(h.bin, args...)
	cmd.Env, cmd.Dir = h.environ(), h.dir
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		h.t.Fatalf("rukh %s: %v", strings.Join(args, " "), err)
	}
	h.rukhOutputs["rukh "+strings.Join(args, " ")] = stdout.String() + stderr.String()
	return stdout.String(), stderr.String(), code
}

func (h *settingsHome) must(args ...string) string {
	h.t.Helper()
	out, errOut, code := h.run("", args...)
	if code != 0 {
		h.t.Fatalf("rukh %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// set sets a setting from stdin, as an owner pipes a secret in.
func (h *settingsHome) set(value string, args ...string) {
	h.t.Helper()
	out, errOut, code := h.run(value+"\n", append([]string{"settings", "set"}, args...)...)
	if code != 0 {
		h.t.Fatalf("rukh settings set %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
}

// received is what the fixture reports.
type received struct {
	Tag      string                        `json:"tag"`
	Settings map[string]stdjson.RawMessage `json:"settings"`
}

// String is the settings as compact JSON, keys sorted.
func (r received) String() string {
	b, _ := stdjson.Marshal(r.Settings)
	return string(b)
}

func parseReceived(t *testing.T, text string) received {
	t.Helper()
	var r received
	if err := stdjson.Unmarshal([]byte(text), &r); err != nil || r.Tag == "" {
		t.Fatalf("not the fixture's report (%v): %q", err, text)
	}
	return r
}

// cli calls COMMAND (sdemo or splain) show on the CLI with tag.
func (h *settingsHome) cli(command, tag string, extra ...string) (string, string, int) {
	h.t.Helper()
	return h.run("", append([]string{command, "show", "--dir", h.calls, "--tag", tag}, extra...)...)
}

func (h *settingsHome) cliReceived(command, tag string) received {
	h.t.Helper()
	out, errOut, code := h.cli(command, tag)
	if code != 0 {
		h.t.Fatalf("rukh %s show: exit %d\n%s%s", command, code, out, errOut)
	}
	return parseReceived(h.t, out)
}

// settingsClient is one MCP session on an endpoint, and its tool names.
type settingsClient struct {
	c     client
	demo  string
	plain string
}

// tools finds the fixture's tool names in a session's listing.
func settingsTools(t *testing.T, c client) settingsClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	all, _ := listAll(t, ctx, c)
	sc := settingsClient{c: c}
	for _, tool := range all {
		name, _ := tool["name"].(string)
		switch {
		case strings.HasPrefix(name, settingsDemoTool):
			sc.demo = name
		case strings.HasPrefix(name, settingsPlainTool):
			sc.plain = name
		}
	}
	if sc.demo == "" || sc.plain == "" {
		t.Fatalf("the fixture's tools are not listed: %v", all)
	}
	return sc
}

// stdio starts serve-mcp on endpoint, its stderr in a file, with a go-sdk
// client.
func (h *settingsHome) stdio(endpoint string, env ...string) settingsClient {
	t := h.t
	t.Helper()
	stderr, err := os.Create(filepath.Join(h.dir, "serve-mcp-"+endpoint+"-"+strconv.Itoa(len(h.serveStderr))+".stderr"))
	must(t, err)
	t.Cleanup(func() { stderr.Close() })
	h.serveStderr = append(h.serveStderr, stderr.Name())
	cmd := exec.Command(h.bin, "serve-mcp", "--endpoint", endpoint)
	cmd.Env, cmd.Dir, cmd.Stderr = append(h.environ(), env...), h.dir, stderr
	wire := &lockedBuffer{}
	tr := &mcp.LoggingTransport{Transport: &mcp.CommandTransport{Command: cmd}, Writer: wire}
	c := mcp.NewClient(&mcp.Implementation{Name: "rukh-settings", Version: "0.0.1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		b, _ := os.ReadFile(stderr.Name())
		t.Fatalf("connect to serve-mcp --endpoint %s: %v\nstderr: %s", endpoint, err, b)
	}
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			b, _ := os.ReadFile(stderr.Name())
			t.Logf("serve-mcp --endpoint %s wire:\n%s\nstderr:\n%s", endpoint, truncate(wire.String(), 20000), b)
		}
	})
	return settingsTools(t, &goSDKClient{t: t, cs: cs, wire: wire, ver: "2026-07-28"})
}

// http returns a go-sdk client of endpoint on a serve-http of the home,
// as an agent of that endpoint.
func (h *settingsHome) http(base, endpoint string) settingsClient {
	h.t.Helper()
	var rep struct{ Token string }
	out := h.must("agent", "add", "settings-"+endpoint+"-"+strconv.Itoa(len(h.invocations)), "--endpoint", endpoint, "--json")
	if err := stdjson.Unmarshal([]byte(out), &rep); err != nil || !strings.HasPrefix(rep.Token, "rukh_") {
		h.t.Fatalf("rukh agent add: no token in %q (%v)", out, err)
	}
	url := base + "/mcp/v1/" + h.ns[endpoint] + "/" + endpoint
	return settingsTools(h.t, newGoSDKHTTPClientAs(h.t, url, "2026-07-28", rep.Token))
}

// serveHTTP starts serve-http for the home and returns its base URL.
func (h *settingsHome) serveHTTP(env ...string) string {
	h.t.Helper()
	base, _, log := startServeHTTP(h.t, h.bin, append(h.environ(), env...), h.dir, "--rate", "0")
	h.httpLogs = append(h.httpLogs, log)
	return base
}

// mcpAnswer is one tools/call of the fixture.
type mcpAnswer struct {
	isError bool
	outcome string
	reason  string
	id      string
	text    string
}

// call calls tool with tag (and gate) and returns the envelope.
func (h *settingsHome) call(c client, tool, tag, gate string) mcpAnswer {
	h.t.Helper()
	args, _ := stdjson.Marshal(map[string]string{"dir": h.calls, "tag": tag, "gate": gate})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := mustCall(h.t, ctx, c, tool, args)
	env, _ := r.structured.(map[string]any)
	a := mcpAnswer{isError: r.isError}
	a.outcome, _ = env["outcome"].(string)
	a.reason, _ = env["reason"].(string)
	a.id, _ = env["invocationId"].(string)
	if res, ok := env["commandResult"].(map[string]any); ok {
		a.text, _ = res["text"].(string)
	}
	if a.id != "" {
		h.invocations = append(h.invocations, a.id)
	}
	return a
}

// received calls tool and returns what the fixture received; the call
// must succeed.
func (h *settingsHome) received(c client, tool, tag string) received {
	h.t.Helper()
	a := h.call(c, tool, tag, "")
	if a.isError || a.outcome != "succeeded" {
		h.t.Fatalf("%s (%s): isError %v, %s: %s", tool, tag, a.isError, a.outcome, a.reason)
	}
	return parseReceived(h.t, a.text)
}

// ran reports whether the fixture started for tag.
func (h *settingsHome) ran(tag string) bool {
	return fileExists(filepath.Join(h.calls, tag+".started"))
}

func keyHash(v string) string {
	sum := sha256.Sum256([]byte(v))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// randomSecret is a value no file holds by chance.
func randomSecret(t *testing.T, prefix string) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return prefix + hex.EncodeToString(b)
}

const missingAPIKey = `setting "apiKey" of package settings.demo is not set; run: rukh settings set settings.demo apiKey`

func TestSettingsDelivery(t *testing.T) {
	bin := buildRukh(t)
	h := newSettingsHome(t, bin)
	local, tenant := h.stdio("local"), h.stdio("tenant-a")
	base := h.serveHTTP()
	httpLocal, httpTenant := h.http(base, "local"), h.http(base, "tenant-a")

	t.Run("missing-required", func(t *testing.T) {
		h.t = t
		out, errOut, code := h.cli("sdemo", "cli-missing")
		if code != 2 {
			t.Errorf("CLI exit %d, want 2 (rejected)\n%s%s", code, out, errOut)
		}
		if !strings.Contains(errOut, missingAPIKey) {
			t.Errorf("CLI stderr does not carry %q:\n%s", missingAPIKey, errOut)
		}
		if h.ran("cli-missing") {
			t.Errorf("the CLI call was rejected, yet the extension ran")
		}
		for name, c := range map[string]settingsClient{"stdio-local": local, "stdio-tenant": tenant, "http-local": httpLocal, "http-tenant": httpTenant} {
			a := h.call(c.c, c.demo, name+"-missing", "")
			if !a.isError || a.outcome != "rejected" || !strings.Contains(a.reason, missingAPIKey) {
				t.Errorf("%s: isError %v, %s (%s), want isError, rejected with %q", name, a.isError, a.outcome, a.reason, missingAPIKey)
			}
			if h.ran(name + "-missing") {
				t.Errorf("%s: the call was rejected, yet the extension ran", name)
			}
		}
		// The other package's required setting is its own.
		if a := h.call(local.c, local.plain, "plain-missing", ""); a.outcome != "rejected" ||
			!strings.Contains(a.reason, `setting "label" of package settings.plain is not set; run: rukh settings set settings.plain label`) {
			t.Errorf("settings.plain without its label: %s (%s)", a.outcome, a.reason)
		}
	})

	t.Run("typed-defaulted", func(t *testing.T) {
		h.t = t
		h.set("delivery-key-1", "settings.demo", "apiKey")
		h.must("settings", "set", "settings.demo", "retries", "3")
		h.set("tenant-key-2", "settings.demo", "apiKey", "--endpoint", "tenant-a")
		h.must("settings", "set", "settings.demo", "region", "us", "--endpoint", "tenant-a")
		h.must("settings", "set", "settings.plain", "label", "hello world")

		pkgWant := `{"apiKey":"` + keyHash("delivery-key-1") + `","region":"eu","retries":3}`
		tenantWant := `{"apiKey":"` + keyHash("tenant-key-2") + `","region":"us","retries":3}`
		for _, c := range []struct {
			name, want string
			got        func() received
		}{
			{"cli", pkgWant, func() received { return h.cliReceived("sdemo", "cli") }},
			{"stdio-local", pkgWant, func() received { return h.received(local.c, local.demo, "stdio-local") }},
			{"stdio-tenant", tenantWant, func() received { return h.received(tenant.c, tenant.demo, "stdio-tenant") }},
			{"http-local", pkgWant, func() received { return h.received(httpLocal.c, httpLocal.demo, "http-local") }},
			{"http-tenant", tenantWant, func() received { return h.received(httpTenant.c, httpTenant.demo, "http-tenant") }},
			{"plain-cli", `{"label":"hello world"}`, func() received { return h.cliReceived("splain", "plain-cli") }},
			{"plain-http", `{"label":"hello world"}`, func() received { return h.received(httpTenant.c, httpTenant.plain, "plain-http") }},
		} {
			if got := c.got().String(); got != c.want {
				t.Errorf("%s received %s, want %s", c.name, got, c.want)
			}
		}
	})

	t.Run("unset", func(t *testing.T) {
		h.t = t
		// The endpoint's value gone, the package's shows through; the
		// package's gone too, the call is rejected again.
		h.must("settings", "unset", "settings.demo", "region", "--endpoint", "tenant-a")
		h.must("settings", "unset", "settings.demo", "retries")
		want := `{"apiKey":"` + keyHash("tenant-key-2") + `","region":"eu"}`
		if got := h.received(tenant.c, tenant.demo, "after-unset").String(); got != want {
			t.Errorf("after unset, tenant-a received %s, want %s", got, want)
		}
		h.must("settings", "unset", "settings.demo", "apiKey")
		if a := h.call(local.c, local.demo, "local-unset", ""); a.outcome != "rejected" || !strings.Contains(a.reason, missingAPIKey) {
			t.Errorf("local after apiKey unset: %s (%s), want rejected", a.outcome, a.reason)
		}
		if h.ran("local-unset") {
			t.Errorf("the call was rejected, yet the extension ran")
		}
	})
}

func TestSettingsRotation(t *testing.T) {
	bin := buildRukh(t)
	h := newSettingsHome(t, bin)
	h.set("rotation-old", "settings.demo", "apiKey")
	local := h.stdio("local")

	gate := filepath.Join(h.dir, "gate")
	running := make(chan mcpAnswer, 1)
	go func() {
		args, _ := stdjson.Marshal(map[string]string{"dir": h.calls, "tag": "running", "gate": gate})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		var a mcpAnswer
		r, err := local.c.call(ctx, local.demo, args)
		if err != nil {
			a.reason = err.Error()
		} else if env, ok := r.structured.(map[string]any); ok {
			a.outcome, _ = env["outcome"].(string)
			a.reason, _ = env["reason"].(string)
			if res, ok := env["commandResult"].(map[string]any); ok {
				a.text, _ = res["text"].(string)
			}
		}
		running <- a
	}()
	if !waitFor(2*time.Minute, func() bool { return h.ran("running") }) {
		t.Fatal("the gated call did not start")
	}
	h.set("rotation-new", "settings.demo", "apiKey")
	if got, want := h.received(local.c, local.demo, "next").Settings["apiKey"], keyHash("rotation-new"); string(got) != `"`+want+`"` {
		t.Errorf("the call after settings set received %s, want %s (the new value)", got, want)
	}
	must(t, os.WriteFile(gate, nil, 0o644))
	var a mcpAnswer
	select {
	case a = <-running:
	case <-time.After(5 * time.Minute):
		t.Fatal("the gated call never answered")
	}
	if a.outcome != "succeeded" {
		t.Fatalf("the gated call: %s (%s)", a.outcome, a.reason)
	}
	if got, want := parseReceived(t, a.text).Settings["apiKey"], keyHash("rotation-old"); string(got) != `"`+want+`"` {
		t.Errorf("the call running during settings set received %s, want %s (the value it started with)", got, want)
	}
}

func TestSettingsNoKey(t *testing.T) {
	bin := buildRukh(t)
	h := newSettingsHome(t, bin)
	h.set("nokey-secret", "settings.demo", "apiKey")
	h.must("settings", "set", "settings.plain", "label", "fine")
	keyFile := filepath.Join(h.home, "settings.key")
	if !fileExists(keyFile) {
		t.Fatalf("settings set of a sensitive value made no %s", keyFile)
	}
	if want := keyHash("nokey-secret"); string(h.cliReceived("sdemo", "with-key").Settings["apiKey"]) != `"`+want+`"` {
		t.Fatalf("with its key the home does not deliver the value")
	}

	// refused checks one process without the key: the sensitive package's
	// call fails naming the key and nothing runs; the other package works.
	refused := func(t *testing.T, name string) {
		h.t = t
		out, errOut, code := h.cli("sdemo", name+"-cli")
		if code != 3 || !strings.Contains(errOut, "settings key") {
			t.Errorf("CLI without the key: exit %d, want 3 (execution_failed) with an error naming the settings key\n%s%s", code, out, errOut)
		}
		if h.ran(name + "-cli") {
			t.Errorf("CLI without the key: the extension ran")
		}
		if got := h.cliReceived("splain", name+"-plain").String(); got != `{"label":"fine"}` {
			t.Errorf("CLI without the key, the package with nothing sensitive received %s", got)
		}
		c := h.stdio("local")
		a := h.call(c.c, c.demo, name+"-stdio", "")
		if !a.isError || a.outcome != "execution_failed" || !strings.Contains(a.reason, "settings key") {
			t.Errorf("stdio without the key: isError %v, %s (%s), want execution_failed naming the settings key", a.isError, a.outcome, a.reason)
		}
		if h.ran(name + "-stdio") {
			t.Errorf("stdio without the key: the extension ran")
		}
		if got := h.received(c.c, c.plain, name+"-stdio-plain").String(); got != `{"label":"fine"}` {
			t.Errorf("stdio without the key, the package with nothing sensitive received %s", got)
		}
	}
	t.Run("key-file-missing", func(t *testing.T) {
		h.env = []string{"RUKH_SETTINGS_KEY_FILE=" + filepath.Join(h.dir, "no-such.key")}
		defer func() { h.env = nil }()
		refused(t, "env")
	})
	t.Run("wrong-key", func(t *testing.T) {
		h.t = t
		home, err := os.ReadFile(keyFile)
		must(t, err)
		homeRaw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(strings.TrimSpace(string(home)), "rukh-settings-key-1:"))
		if err != nil || len(homeRaw) != 32 {
			t.Fatalf("HOME/settings.key is not one rukh-settings-key-1 line: %q (%v)", home, err)
		}
		other := make([]byte, 32)
		_, err = rand.Read(other)
		must(t, err)
		h.env = []string{"RUKH_SETTINGS_KEY=rukh-settings-key-1:" + base64.RawURLEncoding.EncodeToString(other)}
		defer func() { h.env = nil }()
		keyID := func(k []byte) string { s := sha256.Sum256(k); return hex.EncodeToString(s[:8]) }
		out, errOut, code := h.cli("sdemo", "wrong-key")
		if code != 3 || !strings.Contains(errOut, keyID(homeRaw)) || !strings.Contains(errOut, keyID(other)) {
			t.Errorf("CLI with another key: exit %d, want 3 (execution_failed) naming both key ids %s and %s\n%s%s",
				code, keyID(homeRaw), keyID(other), out, errOut)
		}
		if h.ran("wrong-key") {
			t.Errorf("CLI with another key: the extension ran")
		}
		if got := h.cliReceived("splain", "wrong-key-plain").String(); got != `{"label":"fine"}` {
			t.Errorf("CLI with another key, the package with nothing sensitive received %s", got)
		}
	})
	t.Run("key-removed", func(t *testing.T) {
		must(t, os.Rename(keyFile, filepath.Join(h.dir, "moved.key")))
		refused(t, "removed")
		// Put back, the value is there again: nothing was lost.
		must(t, os.Rename(filepath.Join(h.dir, "moved.key"), keyFile))
		if want := keyHash("nokey-secret"); string(h.cliReceived("sdemo", "key-back").Settings["apiKey"]) != `"`+want+`"` {
			t.Errorf("with the key back the value is not delivered")
		}
	})
}

// leakSearch fails the test for every place that holds any of secrets.
type leakSearch struct {
	t       *testing.T
	secrets [][]byte
	places  int
}

func (l *leakSearch) bytes(place string, b []byte) {
	l.t.Helper()
	l.places++
	for _, s := range l.secrets {
		if i := bytes.Index(b, s); i >= 0 {
			from, to := max(0, i-120), min(len(b), i+len(s)+120)
			l.t.Errorf("a sensitive value is in %s: …%q…", place, b[from:to])
		}
	}
}

// tree searches every file under root.
func (l *leakSearch) tree(root string) {
	l.t.Helper()
	files := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		l.bytes(p, b)
		return nil
	})
	if err != nil {
		l.t.Errorf("searching %s: %v", root, err)
	}
	if files == 0 {
		l.t.Errorf("searching %s: no files", root)
	}
}

// ownerVerbs are the owner verbs whose output could show a setting, each
// run as text and as JSON.
var ownerVerbs = [][]string{
	{"settings", "list"},
	{"settings", "list", "settings.demo"},
	{"settings", "list", "settings.demo", "--endpoint", "tenant-a"},
	{"describe", "sdemo.show"},
	{"describe", "sdemo", "show"},
	{"describe", "splain.show"},
	{"status"},
	{"doctor"},
	{"tools"},
	{"tools", "--endpoint", "tenant-a"},
	{"publish", "--dry-run"},
	{"publish", "--force", "--dry-run"},
	{"list"},
	{"revisions"},
	{"audit"},
	{"diagnostics"},
	{"tasks"},
	{"agent", "list"},
	{"policy", "show"},
	{"mcp-config", "claude"},
	{"mcp-config", "claude", "--endpoint", "tenant-a"},
}

func TestSettingsSecret(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc here: the fixture cannot show its own argv and environment")
	}
	bin := buildRukh(t)
	h := newSettingsHome(t, bin)
	secret := randomSecret(t, "rukh-secret-")
	tenantSecret := randomSecret(t, "rukh-tenant-secret-")
	l := &leakSearch{t: t, secrets: [][]byte{[]byte(secret), []byte(tenantSecret)}}

	h.set(secret, "settings.demo", "apiKey")
	out, errOut, code := h.run("", "settings", "set", "settings.demo", "apiKey", "--endpoint", "tenant-a", "--from-env", "SETTINGS_TEST_TENANT_KEY")
	_ = out
	if code != 0 {
		// --from-env reads the owner's environment: give it there.
		h.env = []string{"SETTINGS_TEST_TENANT_KEY=" + tenantSecret}
		out, errOut, code = h.run("", "settings", "set", "settings.demo", "apiKey", "--endpoint", "tenant-a", "--from-env", "SETTINGS_TEST_TENANT_KEY")
		h.env = nil
		if code != 0 {
			t.Fatalf("settings set --from-env: exit %d\n%s%s", code, out, errOut)
		}
	} else {
		t.Fatalf("settings set --from-env of an unset variable succeeded:\n%s%s", out, errOut)
	}
	h.must("settings", "set", "settings.plain", "label", "not secret")

	// Calls on every surface; each must have received the value.
	want, wantTenant := `"`+keyHash(secret)+`"`, `"`+keyHash(tenantSecret)+`"`
	check := func(name string, r received, want string) {
		if got := string(r.Settings["apiKey"]); got != want {
			t.Errorf("%s received apiKey %s, want %s", name, got, want)
		}
	}
	check("cli", h.cliReceived("sdemo", "cli"), want)
	local, tenant := h.stdio("local"), h.stdio("tenant-a")
	check("stdio-local", h.received(local.c, local.demo, "stdio-local"), want)
	check("stdio-tenant", h.received(tenant.c, tenant.demo, "stdio-tenant"), wantTenant)
	base := h.serveHTTP()
	httpTenant := h.http(base, "tenant-a")
	check("http-tenant", h.received(httpTenant.c, httpTenant.demo, "http-tenant"), wantTenant)
	httpLocal := h.http(base, "local")
	check("http-local", h.received(httpLocal.c, httpLocal.demo, "http-local"), want)
	// A rejected call and a failed one are recorded too.
	h.must("settings", "unset", "settings.plain", "label")
	h.call(httpLocal.c, httpLocal.plain, "rejected", "")

	// The child's argv, environment and stdin, as it saw them.
	for _, tag := range []string{"cli", "stdio-local", "stdio-tenant", "http-tenant", "http-local"} {
		for _, f := range []string{"cmdline", "environ", "stdin"} {
			p := filepath.Join(h.calls, tag+"."+f)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatalf("the fixture left no %s: %v", p, err)
			}
			if f != "stdin" && !bytes.Contains(b, []byte("=")) && !bytes.Contains(b, []byte("settings")) {
				t.Errorf("%s holds nothing it should: %q", p, b)
			}
			l.bytes(p, b)
		}
	}

	// Diagnostics, each invocation's record and the listing.
	diag := h.must("diagnostics", "--json")
	if !strings.Contains(diag, "rukh-fake-ext: settings call") && len(h.invocations) > 0 {
		rec := h.must("diagnostics", h.invocations[0], "--json")
		if !strings.Contains(rec, "rukh-fake-ext: settings call") {
			t.Errorf("the diagnostics do not hold the fixture's stderr, so searching them proves nothing:\n%s", rec)
		}
	}
	for _, id := range h.invocations {
		l.bytes("rukh diagnostics "+id, []byte(h.must("diagnostics", id)))
		l.bytes("rukh diagnostics "+id+" --json", []byte(h.must("diagnostics", id, "--json")))
	}
	audit := h.must("audit", "--json")
	if !strings.Contains(audit, h.invocations[0]) {
		t.Errorf("the audit log does not hold the calls, so searching it proves nothing:\n%s", truncate(audit, 4000))
	}
	l.bytes("rukh audit --json", []byte(audit))

	// Every owner verb, as text and as JSON. A verb may refuse a form
	// (exit non-zero): its output is searched all the same.
	for _, v := range ownerVerbs {
		for _, args := range [][]string{v, append(slices.Clone(v), "--json")} {
			out, errOut, _ := h.run("", args...)
			l.bytes("rukh "+strings.Join(args, " "), []byte(out+errOut))
		}
	}

	// A store copy, then every file this test made: the home (rukh.db,
	// tasks.db, the release copies, settings.key), the copy, the serve
	// logs, the fixture's captures.
	copyTo := filepath.Join(h.dir, "copy")
	h.must("store", "copy", "--to", copyTo)
	if !fileExists(filepath.Join(copyTo, "rukh.db")) {
		t.Errorf("store copy made no %s", filepath.Join(copyTo, "rukh.db"))
	}
	for _, p := range []string{filepath.Join(h.home, "rukh.db"), filepath.Join(h.home, "tasks.db")} {
		if b, err := os.ReadFile(p); err == nil {
			l.bytes(p, b)
		} else if strings.HasSuffix(p, "rukh.db") {
			t.Errorf("no %s: %v", p, err)
		}
	}
	for _, log := range h.httpLogs {
		l.bytes("serve-http's log", []byte(log.String()))
	}
	for _, p := range h.serveStderr {
		b, _ := os.ReadFile(p)
		l.bytes(p, b)
	}
	for cmd, out := range h.rukhOutputs {
		l.bytes(cmd, []byte(out))
	}
	l.tree(h.dir)
	t.Logf("searched %d places for the sensitive values", l.places)
}
