package main

// Tools-changed delivery end to end: a go-sdk client connected to the real
// binary, with its own list-changed handler, is told when ANOTHER rukh
// process publishes: on a subscriptions/listen stream (2026-07-28) and as an
// unsolicited notification after initialize (2025-11-25); over serve-http
// on the listen stream (2026-07-28: the legacy era has no stream for
// unsolicited messages there, GET being 405). The stale name then gets the
// error that says to list again.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestInteropListChanged(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: Go MCP client libraries told of publishes")
	}
	bin := buildRukh(t)
	for _, v := range []string{"2026-07-28", "2025-11-25"} {
		t.Run("go-sdk/"+v, func(t *testing.T) {
			home := newInteropHome(t, bin, "testdata/interop/pkg", "interop.fake")
			cmd := exec.Command(bin, "serve-mcp")
			cmd.Env = rukhEnv(home)
			cmd.Dir = filepath.Dir(home)
			stderr := &lockedBuffer{}
			cmd.Stderr = stderr
			listChanged(t, bin, home, v, &mcp.CommandTransport{Command: cmd}, stderr)
		})
	}
	t.Run("go-sdk/http/2026-07-28", func(t *testing.T) {
		home := newHTTPHome(t, bin, "testdata/interop/pkg", "interop.fake")
		url, stderr := startHTTP(t, bin, home, "--rate", "0")
		listChanged(t, bin, home, "2026-07-28", &mcp.StreamableClientTransport{Endpoint: url}, stderr)
	})
}

func listChanged(t *testing.T, bin, home, version string, tr mcp.Transport, stderr *lockedBuffer) {
	wire := &lockedBuffer{}
	changed := make(chan *mcp.ToolListChangedRequest, 8)
	c := mcp.NewClient(&mcp.Implementation{Name: "rukh-interop", Version: "0.0.1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(_ context.Context, req *mcp.ToolListChangedRequest) { changed <- req },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.LoggingTransport{Transport: tr, Writer: wire},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v\nstderr: %s", err, stderr.String())
	}
	defer cs.Close()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("wire:\n%s\nserver stderr:\n%s", truncate(wire.String(), 20000), stderr.String())
		}
	})
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %q, want %q", got, version)
	}
	if caps := cs.InitializeResult().Capabilities; caps == nil || caps.Tools == nil || !caps.Tools.ListChanged {
		t.Fatalf("the server does not announce tools.listChanged: %+v", caps)
	}
	modern := version >= "2026-07-28"
	if modern {
		// The SDK opened the stream itself because listChanged is announced.
		waitWire(t, wire, `"method":"notifications/subscriptions/acknowledged"`)
		if !strings.Contains(wire.String(), `"method":"subscriptions/listen"`) {
			t.Fatal("the client did not open subscriptions/listen")
		}
	}
	before := toolNames(t, ctx, cs)

	select {
	case <-changed:
		t.Fatal("tools/list_changed before anything was published")
	case <-time.After(300 * time.Millisecond):
	}

	// Another process publishes a profile that renames every tool: every
	// revision does (a new namespace would be refused by this server: its
	// launch binding is fixed).
	profile := filepath.Join(t.TempDir(), "profile2.json")
	p := `{"endpoints":{"local":{"namespace":"` + interopNamespace + `","transports":["stdio","http"],"httpAuth":"none","publish":{"packages":["interop.fake"]}}},"templates":{"default":{"timeoutMs":29000}}}`
	if err := os.WriteFile(profile, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRukh(t, bin, home, "policy", "set", profile)
	published := time.Now()
	mustRukh(t, bin, home, "publish")

	select {
	case <-changed:
		t.Logf("list_changed %v after publishing began", time.Since(published).Round(time.Millisecond))
	case <-time.After(time.Minute):
		t.Fatal("no tools/list_changed within a minute of a publish by another process")
	}
	note := lastLine(wire.String(), `"method":"notifications/tools/list_changed"`)
	if tagged := strings.Contains(note, `"io.modelcontextprotocol/subscriptionId"`); tagged != modern {
		t.Errorf("notification tagged with a subscriptionId: %v, want %v: %s", tagged, modern, note)
	}

	after := toolNames(t, ctx, cs)
	if len(after) != len(before) || after[0] == before[0] {
		t.Fatalf("after the publish the list should hold the same number of renamed tools: before %d (%s…), after %d (%s…)",
			len(before), before[0], len(after), after[0])
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: before[0], Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "list tools again") {
		t.Fatalf("calling a stale name: %v, want an error that says to list tools again", err)
	}
}

func toolNames(t *testing.T, ctx context.Context, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		names = append(names, tool.Name)
	}
	if len(names) == 0 {
		t.Fatal("tools/list: no tools")
	}
	return names
}

func waitWire(t *testing.T, wire *lockedBuffer, s string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(wire.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("never saw %s on the wire", s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func lastLine(log, s string) string {
	lines := strings.Split(log, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], s) {
			return lines[i]
		}
	}
	return ""
}
