package mcpstdio

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/mcpcore/mcpcoretest"
	"github.com/rukh-dev/rukh/mcpcore/mcpcoretest/transcript"
	"github.com/rukh-dev/rukh/policy"
)

func listReq(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{%s}}`, id, modernMeta)
}

// Every call running when the owner cancels is answered cancelled with the
// stable reason; the invoker saw the owner's cause; Serve returns the
// context's error once they are answered.
func TestOwnerCancelAnswersEveryCall(t *testing.T) {
	var out string
	var serveErr error
	var inv *transcript.Invoker
	synctest.Test(t, func(t *testing.T) {
		h := startHarnessCfg(t, nil)
		inv = h.Invoker
		h.Send(t, callLine(1, "hang__r1", ""), callLine(2, "slow__r1", ""))
		h.Owner(errors.New("terminated signal received"))
		serveErr = <-h.Done
		h.Finished = true
		out = string(h.Out.Bytes())
		h.In.Close()
		h.InR.Close()
	})
	if !errors.Is(serveErr, context.Canceled) {
		t.Errorf("Serve returned %v, want context.Canceled", serveErr)
	}
	got := responses(t, out)
	for _, id := range []string{"1", "2"} {
		var res struct {
			StructuredContent kernel.Result `json:"structuredContent"`
			IsError           bool          `json:"isError"`
		}
		if err := json.Unmarshal(got[id]["result"], &res); err != nil {
			t.Fatalf("call %s: %v in %s", id, err, out)
		}
		if r := res.StructuredContent; !res.IsError || r.Outcome != kernel.Cancelled || r.Reason != mcpcore.ReasonOwnerCancel {
			t.Errorf("call %s answered %+v (isError %v), want cancelled: %s", id, r, res.IsError, mcpcore.ReasonOwnerCancel)
		}
	}
	for _, s := range inv.Invocations() {
		if s.CtxErr == nil {
			t.Errorf("%s returned before its context ended", s.Inv.Command.ID)
		}
	}
}

// End of input is not the owner's cancel: no answers (the stdio rule).
func TestEndOfInputAnswersNothing(t *testing.T) {
	out, err, _ := session(t, nil, func(h *transcript.Harness) {
		h.Send(t, callLine(1, "hang__r1", ""))
	})
	if err != nil || strings.Contains(out, `"id":1`) {
		t.Errorf("Serve %v, output %s: want nil and no answer to call 1", err, out)
	}
}

// logLines collects what the server tells the owner.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logLines) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

// A refused revision is logged once, however often it is asked for, and
// the log says what to do.
func TestRefusalLoggedOncePerRevision(t *testing.T) {
	log := &logLines{}
	b1 := mcpcoretest.Binding(1, 0, mcpcoretest.Template)
	b2 := mcpcoretest.Binding(2, 0, mcpcoretest.Template)
	b2.Endpoints[0].Namespace = "elsewhere"
	mcpcoretest.SetProfile(b2, nil)
	out, _, _ := session(t, func(c *Config) {
		c.Logf = log.logf
		c.Load = mcpcoretest.Bindings(func(n uint64) (*policy.Binding, error) {
			if n == 1 {
				return b1, nil
			}
			return b2, nil
		})
	}, func(h *transcript.Harness) {
		h.Send(t, listReq(1), "#active 2", listReq(2), listReq(3), callLine(4, "ok__r2", ""))
	})
	got := responses(t, out)
	for _, id := range []string{"2", "3", "4"} {
		if !strings.Contains(string(got[id]["error"]), `"code":-32603`) {
			t.Errorf("request %s: %s, want -32603", id, got[id]["error"])
		}
	}
	if n := log.count(`refusing revision r2: the published endpoint "local" changed its namespace from "test-ns" to "elsewhere"`); n != 1 {
		t.Errorf("refusal logged %d times, want once: %q", n, log.lines)
	}
}

// The caller of a call comes from the launch binding: stdio, the launch
// endpoint and its subject.
func TestCallerFromLaunchBinding(t *testing.T) {
	b := mcpcoretest.Binding(1, 0, mcpcoretest.Template)
	b.Endpoints[0].Subject = "ci-bot"
	mcpcoretest.SetProfile(b, nil)
	_, _, inv := session(t, func(c *Config) {
		c.Load = mcpcoretest.Bindings(func(uint64) (*policy.Binding, error) { return b, nil })
	}, func(h *transcript.Harness) {
		h.Send(t, callLine(1, "ok__r1", `{"subject":"root"}`), strings.Replace(callLine(2, "ok__r1", ""), `"name"`, `"subject":"root","name"`, 1))
	})
	seen := inv.Invocations()
	want := kernel.Caller{Transport: "stdio", Endpoint: "local", Subject: "ci-bot"}
	if len(seen) != 1 || seen[0].Inv.Caller != want {
		t.Fatalf("invocations %+v, want one with caller %+v", seen, want)
	}
}

// The revision is read within 30 s (docs/design.md, Limits). A revision that
// takes longer to load gets an error at exactly 30 s (fake time); the load it
// started still fills the cache, so the next list is answered.
func TestListBoundedAt30s(t *testing.T) {
	var unblock chan struct{} // made in the bubble, so a load waiting on it is durably blocked
	var early, onTime bool
	out, _, _ := session(t, func(c *Config) {
		unblock = make(chan struct{})
		b := mcpcoretest.Binding(1, 0, mcpcoretest.Template)
		c.Load = mcpcoretest.Bindings(func(uint64) (*policy.Binding, error) {
			<-unblock
			return b, nil
		})
	}, func(h *transcript.Harness) {
		answered := func() bool { return strings.Contains(string(h.Out.Bytes()), `"id":1`) }
		h.Send(t, listReq(1))
		time.Sleep(mcpcore.RevisionTimeout - time.Millisecond)
		synctest.Wait()
		early = answered()
		time.Sleep(time.Millisecond)
		synctest.Wait()
		onTime = answered()
		close(unblock)
		synctest.Wait()
		h.Send(t, listReq(2), callLine(3, "ok__r1", ""))
	})
	if early || !onTime {
		t.Errorf("list 1 answered 1 ms before the bound: %v, at it: %v; want false, true", early, onTime)
	}
	got := responses(t, out)
	if !strings.Contains(string(got["1"]["error"]), `"code":-32603,"message":"the active revision did not load within 30 s; try again"`) {
		t.Errorf("list 1: %s", out)
	}
	if got["2"]["result"] == nil || got["3"]["result"] == nil {
		t.Errorf("after the load finished, list and call should be answered: %s", out)
	}
}
