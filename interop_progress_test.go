package main

// End-to-end progress: the real rukh binary runs testdata/interop/pkg's
// interop.progress (three child progress messages, then the report) and real
// MCP clients — go-sdk and mcp-go, modern and legacy — must see exactly three
// notifications/progress carrying their token, before the result, and none
// for a call that sent no progressToken (docs/extension-protocol.md,
// progress).

import (
	"context"
	stdjson "encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestInteropProgress(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: Go MCP client libraries following progress")
	}
	bin := buildRukh(t)
	home := newInteropHome(t, bin, "testdata/interop/pkg", "interop.fake")
	tool := toolByID(t, expectedTools(t, bin, home), "interop.progress")

	for _, v := range []string{"2026-07-28", "2025-11-25"} {
		t.Run("go-sdk/"+v, func(t *testing.T) {
			exerciseProgress(t, newGoSDKProgressClient(t, bin, home, v), tool)
		})
	}
	for _, v := range []string{"2026-07-28", "2025-06-18"} {
		t.Run("mcp-go/"+v, func(t *testing.T) {
			exerciseProgress(t, newMCPGoProgressClient(t, bin, home, v), tool)
		})
	}
}

// progressNote is one notifications/progress as the client library decoded
// it; token is the token's JSON text, so "7" matches an int sent as 7.
type progressNote struct {
	token    string
	progress float64
	total    float64
	message  string
}

// progressLog collects what a client's notification handler was given.
type progressLog struct {
	mu    sync.Mutex
	notes []progressNote
}

func (l *progressLog) add(n progressNote) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.notes = append(l.notes, n)
}

func (l *progressLog) snapshot() []progressNote {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.notes)
}

// waitLen waits until at least n notes were delivered: a client may hand
// notifications to its handler after the response that followed them.
func (l *progressLog) waitLen(n int) []progressNote {
	deadline := time.Now().Add(2 * time.Second)
	for {
		notes := l.snapshot()
		if len(notes) >= n || time.Now().After(deadline) {
			return notes
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func tokenText(v any) string {
	b, err := stdjson.Marshal(v)
	if err != nil {
		return fmt.Sprintf("unmarshalable token %v", v)
	}
	return string(b)
}

// progressClient calls a tool with an optional progress token (nil: the
// request has no progressToken). before is how many notifications/progress
// the client read during the call ahead of its result.
type progressClient interface {
	callProgress(ctx context.Context, name string, token any) (r *callResult, before int, err error)
	log() *progressLog
	close() error
}

func exerciseProgress(t *testing.T, c progressClient, tool string) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	// A string token, no token, then an integer token, on one session: the
	// no-token call in the middle must not produce (or receive) anything.
	total := 0
	for _, tc := range []struct {
		name  string
		token any
	}{
		{"string-token", "tok-" + strings.ReplaceAll(t.Name(), "/", "-")},
		{"no-token", nil},
		{"integer-token", 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prior := len(c.log().snapshot())
			r, before, err := c.callProgress(ctx, tool, tc.token)
			if err != nil {
				t.Fatalf("tools/call: %v", err)
			}
			env := checkEnvelope(t, r, false, "succeeded")
			if want := map[string]any{"kind": "text", "text": "done"}; !reflect.DeepEqual(env["commandResult"], want) {
				t.Errorf("commandResult = %v, want %v", env["commandResult"], want)
			}
			if tc.token == nil {
				if before != 0 {
					t.Errorf("a call without progressToken got %d notifications/progress", before)
				}
				if got := c.log().snapshot()[prior:]; len(got) != 0 {
					t.Errorf("a call without progressToken delivered %v", got)
				}
				return
			}
			if before != 3 {
				t.Errorf("%d notifications/progress before the result, want 3", before)
			}
			tok := tokenText(tc.token)
			want := []progressNote{
				{tok, 1, 3, "step 1"},
				{tok, 2, 3, "step 2"},
				{tok, 3, 3, "step 3"},
			}
			if got := c.log().waitLen(prior + 3)[prior:]; !reflect.DeepEqual(got, want) {
				t.Errorf("notifications:\n got %+v\nwant %+v", got, want)
			}
			total += 3
		})
	}
	// Nothing late or stray: only the two token calls' six notifications.
	time.Sleep(50 * time.Millisecond)
	if got := c.log().snapshot(); len(got) != total {
		t.Errorf("%d notifications over the session, want %d: %+v", len(got), total, got)
	}
	if err := c.close(); err != nil {
		t.Errorf("close: %v", err)
	}
}

// --- go-sdk: ClientOptions.ProgressNotificationHandler, CallToolParams.SetProgressToken ---

type goSDKProgressClient struct {
	*goSDKClient
	notes *progressLog
}

func newGoSDKProgressClient(t *testing.T, bin, home, version string) progressClient {
	cmd := exec.Command(bin, "serve-mcp")
	cmd.Env = rukhEnv(home)
	cmd.Dir = filepath.Dir(home)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	wire := &lockedBuffer{}
	notes := &progressLog{}
	c := mcp.NewClient(&mcp.Implementation{Name: "rukh-interop", Version: "0.0.1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			p := req.Params
			notes.add(progressNote{token: tokenText(p.ProgressToken), progress: p.Progress, total: p.Total, message: p.Message})
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.LoggingTransport{Transport: &mcp.CommandTransport{Command: cmd}, Writer: wire},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v\nstderr: %s", err, stderr.String())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("wire:\n%s\nserver stderr:\n%s", truncate(wire.String(), 20000), stderr.String())
		}
	})
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Errorf("negotiated %q, want %q", got, version)
	}
	return &goSDKProgressClient{goSDKClient: &goSDKClient{t: t, cs: cs, wire: wire, ver: version}, notes: notes}
}

func (c *goSDKProgressClient) log() *progressLog { return c.notes }

func (c *goSDKProgressClient) callProgress(ctx context.Context, name string, token any) (*callResult, int, error) {
	mark := len(c.wire.String())
	params := &mcp.CallToolParams{Name: name, Arguments: stdjson.RawMessage(`{}`)}
	if token != nil {
		params.SetProgressToken(token)
	}
	res, err := c.cs.CallTool(ctx, params)
	if err != nil {
		return nil, 0, err
	}
	r := &callResult{isError: res.IsError}
	if r.structured, err = toPlain(res.StructuredContent); err != nil {
		return nil, 0, err
	}
	for _, block := range res.Content {
		if tc, ok := block.(*mcp.TextContent); ok {
			r.texts = append(r.texts, tc.Text)
		} else {
			r.other++
		}
	}
	// go-sdk runs notification handlers apart from the reader, so order is
	// read off the wire log: progress lines between this call's request and
	// the line answering it.
	before, err := progressBeforeResult(c.wire.String()[mark:], token)
	return r, before, err
}

// progressBeforeResult scans a LoggingTransport log of one sequential call
// ("write: " request … "read: " response) and counts notifications/progress
// read before the response; with token, the request must carry it.
func progressBeforeResult(log string, token any) (int, error) {
	type msg struct {
		ID     stdjson.RawMessage `json:"id"`
		Method string             `json:"method"`
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
		Result stdjson.RawMessage `json:"result"`
	}
	var id string
	n := 0
	for _, line := range strings.Split(log, "\n") {
		dir, data, ok := strings.Cut(line, ": ")
		if !ok || dir != "read" && dir != "write" {
			continue // "read error: EOF" and the like
		}
		var m msg
		if err := stdjson.Unmarshal([]byte(data), &m); err != nil {
			return 0, fmt.Errorf("wire line %q: %v", line, err)
		}
		switch {
		case dir == "write" && m.Method == "tools/call":
			id = string(m.ID)
			got, has := m.Params.Meta["progressToken"]
			if has != (token != nil) || has && tokenText(got) != tokenText(token) {
				return 0, fmt.Errorf("request _meta.progressToken = %v (present %v), want %v", got, has, token)
			}
		case dir == "read" && m.Method == "notifications/progress":
			if id == "" {
				return 0, fmt.Errorf("progress before the request: %s", data)
			}
			n++
		case dir == "read" && id != "" && string(m.ID) == id && m.Result != nil:
			return n, nil
		}
	}
	return 0, fmt.Errorf("no tools/call request and response in the wire log:\n%s", log)
}

// --- mcp-go: Client.OnNotification, CallToolParams.Meta.ProgressToken ---

type mcpGoProgressClient struct {
	*mcpGoClient
	notes *progressLog
}

func newMCPGoProgressClient(t *testing.T, bin, home, version string) progressClient {
	c := newMCPGoClient(t, bin, home, version).(*mcpGoClient)
	notes := &progressLog{}
	// The stdio transport calls this from its reader before it reads the
	// next line, so a notification is delivered before a later response.
	c.c.OnNotification(func(n mcpgo.JSONRPCNotification) {
		if n.Method != "notifications/progress" {
			return
		}
		f := n.Params.AdditionalFields
		progress, _ := f["progress"].(float64)
		total, _ := f["total"].(float64)
		message, _ := f["message"].(string)
		notes.add(progressNote{token: tokenText(f["progressToken"]), progress: progress, total: total, message: message})
	})
	return &mcpGoProgressClient{mcpGoClient: c, notes: notes}
}

func (c *mcpGoProgressClient) log() *progressLog { return c.notes }

func (c *mcpGoProgressClient) callProgress(ctx context.Context, name string, token any) (*callResult, int, error) {
	prior := len(c.notes.snapshot())
	req := mcpgo.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = stdjson.RawMessage(`{}`)
	if token != nil {
		req.Params.Meta = &mcpgo.Meta{ProgressToken: token}
	}
	res, err := c.c.CallTool(ctx, req)
	if err != nil {
		return nil, 0, err
	}
	before := len(c.notes.snapshot()) - prior
	r := &callResult{isError: res.IsError}
	if r.structured, err = toPlain(res.StructuredContent); err != nil {
		return nil, 0, err
	}
	for _, block := range res.Content {
		if tc, ok := block.(mcpgo.TextContent); ok {
			r.texts = append(r.texts, tc.Text)
		} else {
			r.other++
		}
	}
	return r, before, nil
}

// The wire-order check must itself be able to fail.
func TestProgressBeforeResult(t *testing.T) {
	const (
		req   = `write: {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"_meta":{"progressToken":"a"},"name":"x"}}`
		bare  = `write: {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x"}}`
		note  = `read: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"a","progress":1}}`
		res   = `read: {"jsonrpc":"2.0","id":4,"result":{}}`
		other = `read: {"jsonrpc":"2.0","id":3,"result":{}}`
	)
	for _, tc := range []struct {
		name  string
		log   []string
		token any
		want  int
		err   bool
	}{
		{"all-before", []string{req, note, note, note, res}, "a", 3, false},
		{"one-after", []string{req, note, note, res, note}, "a", 2, false},
		{"other-response-first", []string{req, note, other, note, res}, "a", 2, false},
		{"none", []string{bare, res, "read error: EOF"}, nil, 0, false},
		{"token-missing", []string{bare, res}, "a", 0, true},
		{"token-unasked", []string{req, res}, nil, 0, true},
		{"token-other", []string{req, res}, 7, 0, true},
		{"no-response", []string{req, note}, "a", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := progressBeforeResult(strings.Join(tc.log, "\n")+"\n", tc.token)
			if (err != nil) != tc.err || err == nil && got != tc.want {
				t.Errorf("got %d, %v; want %d, error %v", got, err, tc.want, tc.err)
			}
		})
	}
}
