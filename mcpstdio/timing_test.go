package mcpstdio

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/mcpcore/mcpcoretest"
	"github.com/rukh-dev/rukh/mcpcore/mcpcoretest/transcript"
	"github.com/rukh-dev/rukh/policy"
)

// serveResult waits for Serve in a bubble and reports when it returned.
func returnedWithin(h *transcript.Harness) (error, bool) {
	select {
	case err := <-h.Done:
		h.ServeErr, h.Finished = err, true
		return err, true
	default:
		return nil, false
	}
}

func assertStopped(t *testing.T, inv *transcript.Invoker, n int) {
	t.Helper()
	seen := inv.Invocations()
	if len(seen) != n {
		t.Fatalf("%d invocations ended, want %d", len(seen), n)
	}
	for _, s := range seen {
		if !errors.Is(s.CtxErr, context.Canceled) {
			t.Errorf("invocation %s ended with ctx %v, want cancelled", s.Inv.ID, s.CtxErr)
		}
	}
}

func TestPartialMessageTimeout(t *testing.T) {
	for _, tt := range []struct {
		name    string
		timeout time.Duration // Config.ReadTimeout; 0 = the 2 s default
		want    time.Duration
	}{
		{"default", 0, 2 * time.Second},
		{"configured", 300 * time.Millisecond, 300 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := startHarnessCfg(t, func(c *Config) { c.ReadTimeout = tt.timeout })
				h.Send(t, callLine(1, "hang__r1", ""), `#raw "{\"jsonrpc\":"`)
				start := time.Now()
				time.Sleep(tt.want - time.Millisecond)
				synctest.Wait()
				if _, done := returnedWithin(h); done {
					t.Fatalf("Serve returned before the timeout")
				}
				time.Sleep(time.Millisecond)
				synctest.Wait()
				err, done := returnedWithin(h)
				if !done {
					t.Fatalf("Serve still running %v after the message started", time.Since(start))
				}
				if kernel.ErrorCode(err) != kernel.CodeUnavailable || !errors.Is(err, errReadTimeout) {
					t.Errorf("Serve = %v, want a read timeout", err)
				}
				assertStopped(t, h.Invoker, 1)
				if out := h.Out.Bytes(); len(out) != 0 {
					t.Errorf("a stopped invocation was answered: %s", out)
				}
				h.In.Close()
				h.InR.Close()
			})
		})
	}
}

func TestCompleteMessagesNeverTimeOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startHarnessCfg(t, nil)
		// An idle client, then a message sent slowly but within the bound.
		time.Sleep(time.Minute)
		h.Send(t, `#raw "{\"jsonrpc\":\"2.0\","`)
		time.Sleep(1500 * time.Millisecond)
		h.Send(t, `#raw "\"id\":1,\"method\":\"ping\"}\n"`)
		time.Sleep(time.Minute)
		synctest.Wait()
		if _, done := returnedWithin(h); done {
			t.Fatalf("Serve returned: %v", h.ServeErr)
		}
		h.In.Close()
		if err := <-h.Done; err != nil {
			t.Errorf("Serve = %v", err)
		}
		if got := string(h.Out.Bytes()); got != `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n" {
			t.Errorf("output = %q", got)
		}
	})
}

func TestBlockedWriteTimeout(t *testing.T) {
	for _, tt := range []struct {
		name    string
		timeout time.Duration
		want    time.Duration
	}{
		{"default", 0, 2 * time.Second},
		{"configured", 250 * time.Millisecond, 250 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := startHarnessCfg(t, func(c *Config) { c.WriteTimeout = tt.timeout })
				h.Send(t, callLine(1, "hang__r1", ""), "#hold",
					`{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{`+modernMeta+`}}`)
				time.Sleep(tt.want - time.Millisecond)
				synctest.Wait()
				if _, done := returnedWithin(h); done {
					t.Fatalf("Serve returned before the write timeout")
				}
				time.Sleep(time.Millisecond)
				synctest.Wait()
				err, done := returnedWithin(h)
				if !done {
					t.Fatal("Serve still running after a write blocked for the timeout")
				}
				if !errors.Is(err, errWriteTimeout) {
					t.Errorf("Serve = %v, want a write timeout", err)
				}
				assertStopped(t, h.Invoker, 1)
				h.Out.Release()
				h.In.Close()
				h.InR.Close()
			})
		})
	}
}

// A full queue: a response that cannot be queued within the write timeout
// closes the transport too (here the writer is stuck and 32 messages wait).
func TestFullQueueClosesTransport(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startHarnessCfg(t, func(c *Config) { c.WriteTimeout = time.Hour })
		h.Send(t, "#hold")
		for i := 0; i < maxQueueMessages+1; i++ {
			h.Send(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		}
		// One message is being written, 32 are queued; the next waits.
		h.Send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		if _, done := returnedWithin(h); done {
			t.Fatal("Serve returned while a response could still be queued")
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		err, done := returnedWithin(h)
		if !done || !errors.Is(err, errWriteTimeout) && !errors.Is(err, errQueueFull) {
			t.Fatalf("Serve = %v (returned %v), want a transport timeout", err, done)
		}
		h.Out.Release()
		h.In.Close()
		h.InR.Close()
	})
}

func TestEOFStopsInvocations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startHarnessCfg(t, nil)
		h.Send(t, callLine(1, "hang__r1", ""), callLine(2, "hang__r1", ""))
		h.In.Close()
		synctest.Wait()
		err, done := returnedWithin(h)
		if !done || err != nil {
			t.Fatalf("Serve = %v (returned %v), want nil at once", err, done)
		}
		assertStopped(t, h.Invoker, 2)
		if out := h.Out.Bytes(); len(out) != 0 {
			t.Errorf("stopped invocations were answered: %s", out)
		}
	})
}

func TestContextCancelStopsServe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startHarnessCfg(t, nil)
		h.Send(t, callLine(1, "hang__r1", ""))
		h.Cancel()
		synctest.Wait()
		err, done := returnedWithin(h)
		if !done || !errors.Is(err, context.Canceled) {
			t.Fatalf("Serve = %v (returned %v)", err, done)
		}
		assertStopped(t, h.Invoker, 1)
		h.In.Close()
		h.InR.Close()
	})
}

// The same timeouts with real time and real pipes, shortened through
// Config, so the bubble's fake clock is not the only evidence.
func TestTimeoutsRealTime(t *testing.T) {
	t.Run("read", func(t *testing.T) {
		cr, cw := io.Pipe()
		defer cw.Close()
		done := make(chan error, 1)
		cfg := testConfig(t)
		cfg.ReadTimeout = 50 * time.Millisecond
		go func() { done <- Serve(context.Background(), cr, io.Discard, cfg) }()
		start := time.Now()
		cw.Write([]byte(`{"jsonrpc":`))
		select {
		case err := <-done:
			if el := time.Since(start); el < 50*time.Millisecond || !errors.Is(err, errReadTimeout) {
				t.Errorf("Serve = %v after %v", err, el)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no read timeout")
		}
		cr.Close()
	})
	t.Run("write", func(t *testing.T) {
		cr, cw := io.Pipe()
		sr, sw := io.Pipe() // nobody reads sr
		defer cw.Close()
		done := make(chan error, 1)
		cfg := testConfig(t)
		cfg.WriteTimeout = 50 * time.Millisecond
		go func() { done <- Serve(context.Background(), cr, sw, cfg) }()
		start := time.Now()
		cw.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"))
		select {
		case err := <-done:
			if el := time.Since(start); el < 50*time.Millisecond || !errors.Is(err, errWriteTimeout) {
				t.Errorf("Serve = %v after %v", err, el)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no write timeout")
		}
		sr.Close()
		cr.Close()
	})
	t.Run("eof", func(t *testing.T) {
		cr, cw := io.Pipe()
		sr, sw := io.Pipe()
		done := make(chan error, 1)
		go func() { done <- Serve(context.Background(), cr, sw, testConfig(t)); sw.Close() }()
		go func() {
			cw.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"))
			cw.Close()
		}()
		line, err := bufio.NewReader(sr).ReadString('\n')
		if err != nil || strings.TrimSpace(line) != `{"jsonrpc":"2.0","id":1,"result":{}}` {
			t.Fatalf("read %q, %v", line, err)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve = %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Serve did not return at EOF")
		}
	})
}

func testConfig(t *testing.T) Config {
	b := mcpcoretest.Binding(1, 3, mcpcoretest.Template)
	return Config{Config: mcpcore.Config{
		Endpoint: "local", ServerName: "rukh", ServerVersion: "test",
		Active:  func() (uint64, error) { return 1, nil },
		Load:    mcpcoretest.Bindings(func(uint64) (*policy.Binding, error) { return b, nil }),
		Invoker: &transcript.Invoker{}, Logf: t.Logf,
	}}
}
