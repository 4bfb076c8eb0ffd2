// Package commands wires Rukh's verbs onto urfave/cli: the owner verbs
// (install, trust, activate, policy, publish, …), the extension commands of
// the active revision, and serve-mcp. It is the only package that imports
// urfave/cli and the only place errors become exit codes.
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
	"strings"
	"syscall"

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
	env    func(string) string
	store  *store.Store
	runner *kernel.Runner
}

// exitError carries an exit code chosen by a verb (an extension's outcome,
// a passthrough program's status) past urfave/cli.
type exitError struct {
	code int
	err  error // printed unless nil
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
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, env: os.Getenv, runner: kernel.NewRunner()}
	home, err := store.DefaultHome(a.env)
	if err != nil {
		return a.fail(err)
	}
	a.store = store.New(home)
	if len(args) > 1 && args[1] == "help" {
		// "rukh help [COMMAND...]" is "rukh [COMMAND...] --help"
		args = append(append([]string{args[0]}, args[2:]...), "--help")
	}
	root, loadErr := a.root(args)
	if err := unknownCommand(root, args); err != nil {
		if loadErr != nil && kernel.ErrorCode(err) == kernel.CodeUsage {
			// the word may be a published command we could not read
			return a.fail(loadErr)
		}
		return a.fail(err)
	}
	err = root.Run(ctx, args)
	if err == nil {
		return ExitOK
	}
	if ctx.Err() != nil && kernel.ErrorCode(err) != kernel.CodeUsage {
		var ee *exitError
		if !errors.As(err, &ee) {
			fmt.Fprintln(stderr, "rukh: error: interrupted")
			return ExitCancelled
		}
	}
	return a.fail(err)
}

// fail prints err for a person and returns its exit code.
func (a *app) fail(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			printError(a.stderr, ee.err)
		}
		return ee.code
	}
	printError(a.stderr, err)
	return exitCode(err)
}

func printError(w io.Writer, err error) {
	msg := err.Error()
	fmt.Fprintf(w, "rukh: error: %s\n", printable(strings.TrimRight(msg, "\n")))
	if h := kernel.ErrorHint(err); h != "" {
		for _, line := range strings.Split(h, "\n") {
			fmt.Fprintf(w, "rukh: hint: %s\n", printable(line))
		}
	}
}

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
		Commands: a.ownerVerbs(),
	}
	err := a.addExtensionCommands(root, args)
	prepare(root)
	return root, err
}

// prepare applies the settings urfave/cli does not inherit to every command.
func prepare(c *cli.Command) {
	c.DisableSliceFlagSeparator = true
	if c.OnUsageError == nil {
		c.OnUsageError = onUsageError
	}
	for _, sub := range c.Commands {
		prepare(sub)
	}
}

func onUsageError(_ context.Context, c *cli.Command, err error, _ bool) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		msg = "unknown flag " + flagName(name) // urfave/cli prints one dash whatever was typed
	}
	return kernel.Errorf(kernel.CodeUsage, "%s", msg).
		WithHint(fmt.Sprintf("run '%s --help' for usage", c.FullName()))
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
		if next == nil {
			where, hint := "", "run 'rukh --help' for the built-in verbs and 'rukh list' for installed commands; only published commands run"
			if cur != root {
				where = fmt.Sprintf(" in %q", path)
				hint = fmt.Sprintf("run '%s --help' to see its commands", path)
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
