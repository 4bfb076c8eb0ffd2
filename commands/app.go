// Package commands is Rukh's CLI: the flags, the printing and the exit
// codes. It wires the owner verbs (install, trust, activate, policy,
// publish, dev, agent, tasks, …), the extension commands of the active
// revision and the serving verbs (serve-mcp, serve-http, mcp-config) onto
// urfave/cli. A verb parses its flags into options and calls a run
// function; the run function calls a use case (home for the owner's verbs,
// serve for the serving processes, mcpclients for the clients' config
// files, extpkg for signing and packing) and prints what it returns. It is
// the only package that imports urfave/cli and the only place errors
// become exit codes.
//
// commands imports home, serve, mcpclients, extpkg, policy, kernel, and
// store only to open one and to name its records. It never imports the
// protocol core or a transport (mcpcore, mcpstdio, mcphttp): serving is
// serve's. Only main imports commands.
//
// Stdout is data, stderr is people: results and listings go to stdout,
// errors go to stderr as "rukh: error: …" with "rukh: hint: …" lines.
package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
	"github.com/urfave/cli/v3"
)

// Version is set at build time with -ldflags "-X github.com/rukh-dev/rukh/commands.Version=…".
var Version = ""

// Exit codes: few, fixed, documented in the README.
const (
	ExitOK          = 0   // success
	ExitFailed      = 1   // the command failed, or an owner operation was refused
	ExitUsage       = 2   // usage error or rejected input
	ExitExecution   = 3   // the extension misbehaved, or an internal error
	ExitUnavailable = 4   // the store is busy or unreachable; retry
	ExitCancelled   = 130 // interrupted
)

// app carries what every verb needs. Seams are fields so tests can swap them.
type app struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	h      *home.Home // the use cases over the home, which print nothing
	// jsonErrors prints errors as one JSON object (under --json or
	// --output json): guessed from the arguments before parsing, settled
	// by the verb once its flags are parsed.
	jsonErrors bool
}

// exitError carries an exit code chosen by a verb (an extension's outcome,
// a passthrough program's status) past urfave/cli.
type exitError struct {
	code    int
	err     error  // printed unless nil
	outcome string // the extension's outcome, the error's code under --json
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// Main runs rukh with args (args[0] is the program name) and returns the
// process exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// A hangup (the terminal or the agent's host went away) stops running
	// commands like SIGTERM does, so none outlives rukh.
	ctx, signalsWatched, stop := watchSignals(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, h: home.New(os.Getenv, kernel.NewRunner())}
	dir, err := store.DefaultHome(a.h.Env)
	if err != nil {
		return a.fail(err)
	}
	spec, args := takeStoreFlag(args)
	if a.h.Store, err = openStore(spec, dir, a.h.Env); err != nil {
		return a.fail(err)
	}
	defer a.h.Store.Close()
	// What a rukh killed on this home left running is killed first; what
	// this one's invocations start beyond their leaders is recorded for the
	// next one (home/processes.go).
	for _, w := range a.h.SweepProcesses().Warnings {
		fmt.Fprintf(a.stderr, "rukh: warning: %s\n", printable(w))
	}
	defer a.h.RecordProcesses().Close()
	if len(args) > 1 && args[1] == "help" {
		// "rukh help [COMMAND...]" is "rukh [COMMAND...] --help"
		args = append(append([]string{args[0]}, args[2:]...), "--help")
	}
	root, loadErr := a.root(args)
	a.jsonErrors = wantsJSON(root, args)
	if err := unknownCommand(root, args); err != nil {
		if loadErr != nil && kernel.ErrorCode(err) == kernel.CodeUsage {
			// the word may be a published command we could not read
			return a.fail(loadErr)
		}
		return a.fail(err)
	}
	signalsWatched()
	err = root.Run(ctx, args)
	if err == nil {
		return ExitOK
	}
	if ctx.Err() != nil && kernel.ErrorCode(err) != kernel.CodeUsage {
		var ee *exitError
		if !errors.As(err, &ee) {
			a.printError(kernel.Errorf(kernel.CodeInternal, "interrupted"), ExitCancelled, "cancelled")
			return ExitCancelled
		}
	}
	return a.fail(err)
}

// watchSignals is signal.NotifyContext set up in the background: the first
// Notify starts the runtime's signal threads (a measurable part of a CLI
// call: docs/performance.md), which then overlaps building the command tree
// (reads only). wait returns once the signals are caught; every verb runs
// after it, so what a verb does, and every program it starts, sees the
// signals as before.
func watchSignals(parent context.Context, sigs ...os.Signal) (ctx context.Context, wait func(), stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	ready := make(chan struct{})
	go func() {
		signal.Notify(ch, sigs...)
		close(ready)
		select {
		case s := <-ch:
			cancel(errors.New(s.String() + " signal received")) // NotifyContext's cause
		case <-ctx.Done():
		}
	}()
	wait = func() { <-ready }
	stop = func() {
		cancel(nil)
		// Stop hands each signal back to the runtime's signal thread, one
		// at a time, waiting for each; done in the background it costs the
		// exit that follows a command nothing. What arrives meanwhile is
		// dropped: the command has ended.
		go func() {
			wait()
			signal.Stop(ch)
		}()
	}
	return ctx, wait, stop
}

// fail prints err for a person (or, under --json, as one JSON object) and
// returns its exit code.
func (a *app) fail(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			a.printError(ee.err, ee.code, ee.outcome)
		}
		return ee.code
	}
	code := exitCode(err)
	a.printError(err, code, "")
	return code
}

// printError writes err to stderr: "rukh: error:" and "rukh: hint:" lines,
// or under --json one line {"error":{"code","message","hint","exitCode"}}
// (stdout stays data). The code is the extension's outcome when there is
// one, else the error's kernel code.
func (a *app) printError(err error, exit int, outcome string) {
	msg := strings.TrimRight(err.Error(), "\n")
	if a.jsonErrors {
		type jsonError struct {
			Code     kernel.Code `json:"code"`
			Message  string      `json:"message"`
			Hint     string      `json:"hint,omitempty"`
			ExitCode int         `json:"exitCode"`
		}
		b, _ := json.Marshal(struct {
			Error jsonError `json:"error"`
		}{jsonError{kernel.Code(orDefault(outcome, string(kernel.ErrorCode(err)))), msg, kernel.ErrorHint(err), exit}}, jsontext.EscapeForHTML(false))
		fmt.Fprintf(a.stderr, "%s\n", b)
		return
	}
	fmt.Fprintf(a.stderr, "rukh: error: %s\n", printable(msg))
	if h := kernel.ErrorHint(err); h != "" {
		for _, line := range strings.Split(h, "\n") {
			fmt.Fprintf(a.stderr, "rukh: hint: %s\n", printable(line))
		}
	}
}

// outcomeExit is the exit code of an extension's outcome.
func outcomeExit(o kernel.Outcome) int {
	switch o {
	case kernel.Succeeded:
		return ExitOK
	case kernel.CommandFailed:
		return ExitFailed
	case kernel.Rejected:
		return ExitUsage
	case kernel.Cancelled:
		return ExitCancelled
	default:
		return ExitExecution
	}
}

// exitCode is the exit code of an error that carries no outcome.
func exitCode(err error) int {
	switch kernel.ErrorCode(err) {
	case kernel.CodeUsage:
		return ExitUsage
	case kernel.CodeInvalid, kernel.CodeNotFound, kernel.CodeConflict, kernel.CodeDenied, kernel.CodeUnsupported:
		return ExitFailed
	case kernel.CodeUnavailable:
		return ExitUnavailable
	default:
		return ExitExecution
	}
}

func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// usageErr marks a command-line mistake (exit 2).
func usageErr(format string, args ...any) error {
	return kernel.Errorf(kernel.CodeUsage, format, args...)
}

// root builds a fresh command tree for one run: urfave/cli trees are
// stateful, and the extension commands come from the active revision.
func (a *app) root(args []string) (*cli.Command, error) {
	root := &cli.Command{
		Name:                      "rukh",
		Usage:                     "run trusted extension commands for people (CLI) and agents (MCP)",
		Version:                   version(),
		Reader:                    a.stdin,
		Writer:                    a.stdout,
		ErrWriter:                 a.stderr,
		EnableShellCompletion:     true,
		DisableSliceFlagSeparator: true,
		HideHelpCommand:           true,
		ExitErrHandler:            func(context.Context, *cli.Command, error) {},
		OnUsageError:              onUsageError,
		CommandNotFound: func(_ context.Context, c *cli.Command, name string) {
			// reported through Action below
		},
		Action: func(_ context.Context, c *cli.Command) error {
			if c.Args().Len() > 0 {
				return kernel.Errorf(kernel.CodeUsage, "unknown command %q", c.Args().First()).
					WithHint("run 'rukh --help' for the built-in verbs and 'rukh list' for installed commands")
			}
			return cli.ShowAppHelp(c)
		},
		Flags: []cli.Flag{&cli.StringFlag{Name: "store", Usage: "`URL` of a shared store, etcd://HOST:PORT[,HOST:PORT…]/PREFIX (default: $RUKH_STORE, else the bbolt file in the home); give it before the verb"}},
	}
	root.ConfigureShellCompletionCommand = configureCompletion
	var verbs []*cli.Command
	ownerVerbs := func() []*cli.Command {
		if verbs == nil {
			verbs = a.ownerVerbs()
		}
		return verbs
	}
	// A published command that runs needs no owner verb: they are built
	// (two dozen commands and their flags) only when none is routed.
	routed, err := a.addExtensionCommands(root, args, ownerVerbs)
	if !routed {
		root.Commands = append(ownerVerbs(), root.Commands...)
	}
	a.prepare(root)
	return root, err
}

// prepare applies the settings urfave/cli does not inherit to every
// command, completion, and --output beside every owner verb's --json.
func (a *app) prepare(c *cli.Command) {
	c.DisableSliceFlagSeparator = true
	if c.OnUsageError == nil {
		c.OnUsageError = onUsageError
	}
	if c.ShellComplete == nil {
		c.ShellComplete = a.completeOwner
	}
	if hasFlag(c, "json") && !hasFlag(c, "output") && c.Action != nil {
		c.Flags = append(c.Flags, &cli.StringFlag{Name: "output", Value: "text", Usage: "`FORMAT`: text or json (--json is short for --output json)"})
		act := c.Action
		c.Action = func(ctx context.Context, cmd *cli.Command) error {
			out, err := outputFormat(cmd, "output", true)
			if err != nil {
				return err
			}
			a.jsonErrors = out == "json"
			if out == "json" {
				if err := cmd.Set("json", "true"); err != nil {
					return err
				}
			}
			return act(ctx, cmd)
		}
	}
	for _, sub := range c.Commands {
		a.prepare(sub)
	}
}

// outputFormat reads --output (named name) and, when the command has it
// from rukh, its --json shorthand.
func outputFormat(cmd *cli.Command, name string, shorthand bool) (string, error) {
	out := cmd.String(name)
	if out != "text" && out != "json" {
		hint := fmt.Sprintf("run '%s --help' for usage", cmd.FullName())
		if hasFlag(cmd, "out") {
			hint = "--out names the file to write; --output is the format of what is printed\n" + hint
		}
		return "", kernel.Errorf(kernel.CodeUsage, "--%s must be text or json, got %q", name, out).WithHint(hint)
	}
	if shorthand && cmd.Bool("json") {
		if cmd.IsSet(name) && out != "json" {
			return "", usageErr("--json contradicts --%s %s", name, out)
		}
		out = "json"
	}
	return out, nil
}

func hasFlag(c *cli.Command, name string) bool {
	for _, f := range c.Flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

func onUsageError(_ context.Context, c *cli.Command, err error, _ bool) error {
	msg := err.Error()
	hint := fmt.Sprintf("run '%s --help' for usage", c.FullName())
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		msg = "unknown flag " + flagName(name) // urfave/cli prints one dash whatever was typed
		var names []string
		for _, f := range c.Flags {
			names = append(names, f.Names()...)
		}
		if s := kernel.DidYouMean(strings.TrimLeft(name, "-"), "--", names); s != "" {
			hint = s + "\n" + hint
		}
	}
	if m := flagValueMessage(c, msg); m != "" {
		msg = m
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		msg = flagName(strings.TrimLeft(name, "-")) + " needs a value"
	}
	return kernel.Errorf(kernel.CodeUsage, "%s", msg).WithHint(hint)
}

// flagValueMessage rewrites urfave/cli's `invalid value "15" for flag -ttl:
// time: missing unit …` as people type the flag and say what it takes.
func flagValueMessage(c *cli.Command, msg string) string {
	rest, ok := strings.CutPrefix(msg, "invalid value ")
	if !ok {
		return ""
	}
	val, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return ""
	}
	name, cause, ok := strings.Cut(strings.TrimPrefix(rest[len(val):], " for flag -"), ": ")
	if !ok || strings.ContainsAny(name, " \t") {
		return ""
	}
	var takes string
	switch lookupFlag(c, name).(type) {
	case *cli.DurationFlag:
		takes = "a duration with a unit, such as 30s, 15m or 2h"
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
		takes = "a whole number"
	case *cli.BoolFlag:
		takes = "true or false"
	case *cli.FloatFlag:
		takes = "a number"
	default:
		return fmt.Sprintf("invalid value %s for %s: %s", val, flagName(name), cause)
	}
	return fmt.Sprintf("%s takes %s, got %s", flagName(name), takes, val)
}

func lookupFlag(c *cli.Command, name string) cli.Flag {
	for _, cmd := range c.Lineage() { // the command, then the ones above it
		for _, f := range cmd.Flags {
			if slices.Contains(f.Names(), name) {
				return f
			}
		}
	}
	return nil
}

func jsonFlag() cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print machine-readable JSON"}
}

// unknownCommand reports a word that names no command (at the top or
// inside a group) before urfave/cli would complain about the flags that
// follow it, or answer "No help topic".
func unknownCommand(root *cli.Command, args []string) error {
	cur, path := root, "rukh"
	for _, w := range args[1:] {
		if strings.HasPrefix(w, "-") || len(cur.Commands) == 0 {
			return nil
		}
		if w == "help" || w == "h" || (cur == root && w == "completion") {
			return nil
		}
		next := cur.Command(w)
		if next == nil && cur != root && cur.ArgsUsage != "" {
			return nil // the group's own action takes the word (revisions REV)
		}
		if next == nil {
			where, hint := "", "run 'rukh --help' for the built-in verbs and 'rukh list' for installed commands; only published commands run"
			if cur != root {
				where = fmt.Sprintf(" in %q", path)
				hint = fmt.Sprintf("run '%s --help' to see its commands", path)
			}
			var names []string
			if cur == root {
				names = append(names, "completion") // added by urfave/cli when it runs
			}
			for _, sub := range cur.Commands {
				if !sub.Hidden {
					names = append(names, sub.Names()...)
				}
			}
			if s := kernel.DidYouMean(w, "", names); s != "" {
				hint = s + "\n" + hint
			}
			return kernel.Errorf(kernel.CodeUsage, "unknown command %q%s", w, where).WithHint(hint)
		}
		cur, path = next, path+" "+w
	}
	return nil
}

// noArgs refuses stray arguments to verbs that take none.
func noArgs(c *cli.Command) error {
	if c.Args().Len() > 0 {
		return kernel.Errorf(kernel.CodeUsage, "%s takes no arguments, got %q", c.Name, c.Args().First()).
			WithHint(fmt.Sprintf("run 'rukh %s --help' for usage", c.Name))
	}
	return nil
}
