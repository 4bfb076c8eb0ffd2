package mcpstdio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/mcpcore/mcpcoretest"
	"github.com/rukh-dev/rukh/mcpcore/mcpcoretest/transcript"
	"github.com/rukh-dev/rukh/policy"
)

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func callLine(id int, name, args string) string {
	p := `"name":"` + name + `"`
	if args != "" {
		p += `,"arguments":` + args
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%s,%s}}`, id, p, modernMeta)
}

// session runs Serve in a synctest bubble with a scripted client and returns
// the raw output and Serve's error.
func session(t *testing.T, cfgEdit func(*Config), script func(h *transcript.Harness)) (string, error, *transcript.Invoker) {
	t.Helper()
	var out string
	var serveErr error
	var inv *transcript.Invoker
	synctest.Test(t, func(t *testing.T) {
		h := startHarnessCfg(t, cfgEdit)
		inv = h.Invoker
		script(h)
		serveErr = h.End()
		out = string(h.Out.Bytes())
	})
	return out, serveErr, inv
}

// startHarnessCfg serves revision 1 over stdio, with cfg edited by edit.
func startHarnessCfg(t *testing.T, edit func(*Config)) *transcript.Harness {
	h := transcript.NewHarness()
	b := mcpcoretest.Binding(1, 3, mcpcoretest.Template)
	cfg := Config{Config: mcpcore.Config{
		Endpoint: "local", ServerName: "rukh", ServerVersion: "test",
		Active:  func() (uint64, error) { return h.Active.Load(), nil },
		Load:    mcpcoretest.Bindings(func(uint64) (*policy.Binding, error) { return b, nil }),
		Invoker: h.Invoker, Logf: t.Logf, NewID: transcript.CounterIDs(),
	}}
	if edit != nil {
		edit(&cfg)
	}
	h.Start(func(ctx context.Context, in io.Reader, out io.Writer) error { return Serve(ctx, in, out, cfg) })
	return h
}

// responses decodes output lines into id -> message.
func responses(t *testing.T, out string) map[string]map[string]jsontext.Value {
	t.Helper()
	got := map[string]map[string]jsontext.Value{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var m map[string]jsontext.Value
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("bad output line %q: %v", line, err)
		}
		got[string(m["id"])] = m
	}
	return got
}

func TestCallPassesPinnedInvocation(t *testing.T) {
	_, _, inv := session(t, nil, func(h *transcript.Harness) {
		h.Send(t, callLine(1, "echo__r1", `{"title":"hi"}`))
	})
	seen := inv.Invocations()
	if len(seen) != 1 {
		t.Fatalf("%d invocations, want 1", len(seen))
	}
	got := seen[0].Inv
	if got.ID != "inv_0001" || got.Dir != "/releases/test.pkg@1.0.0" || got.Interactive || got.Stdin != nil {
		t.Errorf("invocation = %+v", got)
	}
	if got.Command == nil || got.Command.ID != "test.echo" || got.Request.Command != "test.echo" {
		t.Errorf("command = %+v, request = %+v", got.Command, got.Request)
	}
	want := kernel.Limits{Timeout: time.Second, ResultBytes: 128 << 10}
	if got.Limits != want {
		t.Errorf("limits = %+v, want %+v", got.Limits, want)
	}
	if _, ok := got.Stdout.(*kernel.Diagnostics); !ok {
		t.Errorf("stdout is %T, want bounded diagnostics", got.Stdout)
	}
	if got.OnProgress != nil {
		t.Error("OnProgress set without a progressToken")
	}
}

func TestRejectedRunsNothing(t *testing.T) {
	out, _, inv := session(t, nil, func(h *transcript.Harness) {
		h.Send(t,
			callLine(1, "echo__r1", `{}`),
			callLine(2, "echo__r1", `{"title":"far too long"}`),
			callLine(3, "interactive__r1", ""),
			callLine(4, "no_such__r1", ""),
			strings.Replace(callLine(5, "echo__r1", `{"title":"hi"}`), `"arguments"`, `"requestState":"x","arguments"`, 1),
		)
	})
	if n := len(inv.Invocations()); n != 0 {
		t.Errorf("invoker ran %d times for rejected calls", n)
	}
	r := responses(t, out)
	for _, id := range []string{"1", "2", "3", "5"} {
		var res struct {
			IsError           bool          `json:"isError"`
			StructuredContent kernel.Result `json:"structuredContent"`
		}
		if err := json.Unmarshal(r[id]["result"], &res); err != nil {
			t.Fatalf("id %s: %v", id, err)
		}
		if !res.IsError || res.StructuredContent.Outcome != kernel.Rejected || res.StructuredContent.Reason == "" {
			t.Errorf("id %s: %+v", id, res)
		}
	}
	if !bytes.Contains(r["4"]["error"], []byte(`-32602`)) {
		t.Errorf("unknown tool: %s", r["4"]["error"])
	}
}

func TestDiagnosticsNeverReachTheWire(t *testing.T) {
	type diag struct{ id, cmd, stdout, stderr string }
	var mu sync.Mutex
	var got []diag
	out, _, _ := session(t, func(c *Config) {
		c.Diagnostics = func(inv *kernel.Invocation, res kernel.Result) {
			mu.Lock()
			got = append(got, diag{res.InvocationID, inv.Command.ID, inv.Stdout.(*kernel.Diagnostics).String(), inv.Stderr.(*kernel.Diagnostics).String()})
			mu.Unlock()
		}
	}, func(h *transcript.Harness) { h.Send(t, callLine(1, "noisy__r1", "")) })
	if len(got) != 1 {
		t.Fatalf("%d diagnostics callbacks, want 1", len(got))
	}
	d := got[0]
	if d.id != "inv_0001" || d.cmd != "test.noisy" || d.stdout != "to stdout\n" {
		t.Errorf("diagnostics = %+v", d)
	}
	if !strings.HasPrefix(d.stderr, strings.Repeat("e", 64)+"\n[dropped 37 bytes]") {
		t.Errorf("stderr not bounded to 64 bytes: %q", d.stderr)
	}
	if strings.Contains(out, "to stdout") || strings.Contains(out, "eeee") {
		t.Errorf("child output reached the wire: %s", out)
	}
}

func TestPublishDuringCallChangesNothing(t *testing.T) {
	b1, b2 := mcpcoretest.Binding(1, 0, mcpcoretest.Template), mcpcoretest.Binding(2, 0, mcpcoretest.Template)
	b2.Commands[9].Declaration.Summary = "changed in r2"
	out, _, inv := session(t, func(c *Config) {
		c.Load = mcpcoretest.Bindings(func(n uint64) (*policy.Binding, error) {
			if n == 1 {
				return b1, nil
			}
			return b2, nil
		})
	}, func(h *transcript.Harness) {
		h.Send(t, callLine(1, "slow__r1", ""), "#active 2", "#sleep 1500ms")
	})
	r := responses(t, out)
	if !bytes.Contains(r["1"]["result"], []byte(`"reason":"deadline exceeded"`)) {
		t.Errorf("call 1 = %s", r["1"]["result"])
	}
	// Revision 2's declaration differs; the call keeps the one it was
	// resolved with.
	seen := inv.Invocations()
	if len(seen) != 1 || seen[0].Inv.Command.ID != b1.Commands[9].Declaration.ID || seen[0].Inv.Command.Summary != b1.Commands[9].Declaration.Summary {
		t.Errorf("the call was not pinned to revision 1's declaration: %+v", seen)
	}
}

func TestStoreErrors(t *testing.T) {
	tests := []struct {
		name   string
		active func() (uint64, error)
		load   func(uint64) (*policy.ServeView, error)
		want   string
	}{
		{"active unavailable", func() (uint64, error) { return 0, errors.New("bolt: timeout") }, nil,
			`"error":{"code":-32603,"message":"the active revision is unavailable"}`},
		{"nothing published", func() (uint64, error) { return 0, kernel.Errorf(kernel.CodeNotFound, "no revision") }, nil,
			`"result":{"tools":[],`},
		{"load fails", nil, mcpcoretest.Bindings(func(uint64) (*policy.Binding, error) { return nil, errors.New("corrupt") }),
			`"error":{"code":-32603,"message":"the active revision is unavailable"}`},
		{"broken wire", nil, func(uint64) (*policy.ServeView, error) {
			v := mcpcoretest.View(t, mcpcoretest.Binding(1, 0, mcpcoretest.Template))
			v.Projection.Tools[0].Wire = jsontext.Value(`{"name":`)
			return v, nil
		}, `"error":{"code":-32603,"message":"the active revision is unavailable"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, _ := session(t, func(c *Config) {
				if tt.active != nil {
					c.Active = tt.active
				}
				if tt.load != nil {
					c.Load = tt.load
				}
			}, func(h *transcript.Harness) {
				h.Send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+modernMeta+`}}`)
			})
			if !strings.Contains(out, tt.want) {
				t.Errorf("got %s, want it to contain %s", out, tt.want)
			}
		})
	}
}

func TestTemplateIsFixedAtLaunch(t *testing.T) {
	other := mcpcoretest.Template
	other.TimeoutMs, other.DiagnosticsBytes = 5000, 128
	b1, b2 := mcpcoretest.Binding(1, 0, mcpcoretest.Template), mcpcoretest.Binding(2, 0, other)
	_, _, inv := session(t, func(c *Config) {
		c.Load = mcpcoretest.Bindings(func(n uint64) (*policy.Binding, error) {
			if n == 1 {
				return b1, nil
			}
			return b2, nil
		})
	}, func(h *transcript.Harness) {
		h.Send(t, callLine(1, "echo__r1", `{"title":"a"}`), "#active 2", callLine(2, "echo__r2", `{"title":"b"}`))
	})
	seen := inv.Invocations()
	if len(seen) != 2 {
		t.Fatalf("%d invocations, want 2", len(seen))
	}
	for _, s := range seen {
		// the launch template keeps 64 diagnostics bytes, the later one 128
		d := s.Inv.Stdout.(*kernel.Diagnostics)
		d.Write(make([]byte, 100))
		if s.Inv.Limits.Timeout != time.Second || len(d.Bytes()) != 64 {
			t.Errorf("%s ran under %+v with %d diagnostics bytes, want the launch template", s.Inv.Request.Input["title"], s.Inv.Limits, len(d.Bytes()))
		}
	}
}

// With a launch binding read at start, even the first call after a publish
// runs under the template the server started with.
func TestLaunchTemplateFromStart(t *testing.T) {
	other := mcpcoretest.Template
	other.TimeoutMs = 5000
	b2 := mcpcoretest.Binding(2, 0, other)
	_, _, inv := session(t, func(c *Config) {
		c.Launch = &policy.Launch{Endpoint: "local", Namespace: "test-ns", Subject: "owner", Template: mcpcoretest.Template, Transports: []string{"stdio"}}
		c.Load = mcpcoretest.Bindings(func(n uint64) (*policy.Binding, error) { return b2, nil })
	}, func(h *transcript.Harness) {
		h.Send(t, "#active 2", callLine(1, "echo__r2", `{"title":"a"}`))
	})
	seen := inv.Invocations()
	if len(seen) != 1 || seen[0].Inv.Limits.Timeout != time.Second {
		t.Fatalf("invocations = %+v, want one under the launch template", seen)
	}
}
