package transcript

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcpcore"
)

// Invoker is the kernel.Invoker of every harness: it runs no process; each
// test command (see mcpcoretest) has a fixed behaviour, and every
// invocation is recorded.
type Invoker struct {
	mu   sync.Mutex
	seen []Invocation
}

// Invocation is one recorded call of Invoke.
type Invocation struct {
	Inv    kernel.Invocation
	CtxErr error // ctx.Err() when Invoke returned
}

// Invoke behaves as inv.Command.ID says and records the call.
func (f *Invoker) Invoke(ctx context.Context, inv *kernel.Invocation) kernel.Result {
	res := f.behave(ctx, inv)
	f.mu.Lock()
	f.seen = append(f.seen, Invocation{Inv: *inv, CtxErr: ctx.Err()})
	f.mu.Unlock()
	return res
}

// Invocations are the calls that returned, in order.
func (f *Invoker) Invocations() []Invocation {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Invocation(nil), f.seen...)
}

func text(s string) jsontext.Value {
	b, _ := json.Marshal(map[string]string{"kind": "text", "text": s}, json.Deterministic(true))
	return b
}

func float(f float64) *float64 { return &f }

func (f *Invoker) behave(ctx context.Context, inv *kernel.Invocation) kernel.Result {
	r := kernel.Result{InvocationID: inv.ID}
	switch inv.Command.ID {
	case "test.ok":
		r.Outcome, r.CommandResult = kernel.Succeeded, jsontext.Value(`{"kind":"structured","data":{"id":42}}`)
	case "test.echo":
		data, err := json.Marshal(map[string]any{"input": inv.Request.Input, "explicit": inv.Request.Explicit}, json.Deterministic(true))
		if err != nil {
			panic(err)
		}
		r.Outcome, r.CommandResult = kernel.Succeeded, jsontext.Value(`{"kind":"structured","data":`+string(data)+`}`)
	case "test.fail":
		r.Outcome, r.Reason, r.CommandResult = kernel.CommandFailed, "no such note", text("note 7 not found")
	case "test.crash":
		r.Outcome, r.Reason = kernel.ExecutionFailed, "the program exited with status 2 before reporting"
	case "test.hang":
		<-ctx.Done()
		r.Outcome, r.Reason = kernel.Cancelled, "cancelled"
	case "test.slow":
		select {
		case <-ctx.Done():
			r.Outcome, r.Reason = kernel.Cancelled, "cancelled"
		case <-time.After(inv.Limits.Timeout):
			r.Outcome, r.Reason = kernel.Cancelled, "deadline exceeded"
		}
	case "test.progress":
		for _, p := range []kernel.Progress{
			{Message: "starting", Progress: float(1), Total: float(4)},
			{Progress: float(2), Total: float(4)},
			{Message: "repeated, dropped", Progress: float(2)},
			{Message: "backwards, dropped", Progress: float(1.5)},
			{Message: "no value, dropped"},
			{Message: "done", Progress: float(4), Total: float(4)},
		} {
			if inv.OnProgress != nil {
				inv.OnProgress(p)
			}
		}
		r.Outcome, r.CommandResult = kernel.Succeeded, text("ok")
	case "test.noisy":
		fmt.Fprintln(inv.Stdout, "to stdout")
		fmt.Fprintln(inv.Stderr, strings.Repeat("e", 100))
		r.Outcome, r.CommandResult = kernel.Succeeded, text("quiet on the wire")
	case "test.big":
		r.Outcome, r.CommandResult = kernel.Succeeded, text(strings.Repeat("x", mcpcore.MaxResponseBytes))
	default:
		r.Outcome, r.CommandResult = kernel.Succeeded, text(inv.Command.ID)
	}
	return r
}
