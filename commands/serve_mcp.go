package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/serve"
	"github.com/urfave/cli/v3"
)

func (a *app) serveMCPCmd() *cli.Command {
	return &cli.Command{
		Name:  "serve-mcp",
		Usage: "serve the published tools of an endpoint to an agent over MCP stdio",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "endpoint", Value: "local", Usage: "the profile endpoint this server is bound to for its whole life"},
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() > 0 {
				return usageErr("serve-mcp takes no arguments")
			}
			return a.runServeMCP(ctx, serveMCPOptions{endpoint: c.String("endpoint")})
		},
	}
}

type serveMCPOptions struct {
	endpoint string
}

func (a *app) runServeMCP(ctx context.Context, o serveMCPOptions) error {
	// Once, so no program it starts for the agent needs a session of its own
	// to have no controlling terminal.
	kernel.DetachTerminal()
	serveOnFewerProcs() // as serve-http does
	// SIGHUP is the owner's cancel too, like SIGINT and SIGTERM
	// (Main): calls in flight are answered cancelled, then we exit.
	ctx, stopHUP := signal.NotifyContext(ctx, syscall.SIGHUP)
	defer stopHUP()
	// A client that closes our stderr must not kill the server with
	// SIGPIPE before it stops its children: handled (not ignored, so
	// children still get the default), writes just fail.
	sigpipe := make(chan os.Signal, 1)
	signal.Notify(sigpipe, syscall.SIGPIPE)
	defer signal.Stop(sigpipe)
	log := newStderrLog(a.stderr)
	defer log.close()
	// Calls run in warm containment slots, one ready from the start.
	a.h.Runner.WarmSlots(log.Logf)
	err := serve.Stdio(ctx, serve.StdioOptions{
		Home:          a.h,
		Endpoint:      o.endpoint,
		Stdin:         a.stdin,
		Stdout:        a.stdout,
		IsolateStdout: a.stdout == os.Stdout,
		Version:       version(),
		Logf:          log.Logf,
		Line:          log.Line,
	})
	var logged *serve.Logged
	switch {
	case errors.Is(err, serve.ErrCancelled):
		return &exitError{code: ExitCancelled}
	case errors.As(err, &logged):
		return &exitError{code: exitCode(logged.Err)}
	}
	return err
}

// stderrLog writes serve-mcp's log lines without ever blocking the server:
// a client that does not read our stderr must not stall deadlines,
// cancellation or shutdown. Lines that do not fit are counted and dropped.
type stderrLog struct {
	verb    string
	lines   chan string
	dropped atomic.Int64
	done    chan struct{}
}

func newStderrLog(w io.Writer) *stderrLog { return newVerbLog(w, "serve-mcp") }

func newVerbLog(w io.Writer, verb string) *stderrLog {
	l := &stderrLog{verb: verb, lines: make(chan string, 256), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for line := range l.lines {
			if n := l.dropped.Swap(0); n > 0 {
				fmt.Fprintf(w, "rukh: %s: %d log line(s) dropped: stderr is not being read\n", l.verb, n)
			}
			io.WriteString(w, line)
		}
	}()
	return l
}

func (l *stderrLog) Logf(format string, args ...any) {
	l.Line(fmt.Sprintf("rukh: "+l.verb+": "+format+"\n", args...))
}

// Line queues one complete line as it is.
func (l *stderrLog) Line(line string) {
	select {
	case l.lines <- line:
	default:
		l.dropped.Add(1)
	}
}

// close flushes what is queued, waiting at most a moment: a stuck stderr
// must not keep the process from exiting.
func (l *stderrLog) close() {
	close(l.lines)
	select {
	case <-l.done:
	case <-time.After(200 * time.Millisecond):
	}
}
