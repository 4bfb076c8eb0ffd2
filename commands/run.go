package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
	"github.com/urfave/cli/v3"
)

// addExtensionCommands grafts the active revision's CLI routes onto root.
// Only what is published is live: the draft never reaches the CLI. It reads
// the routes of the words given, the one command record they name, and the
// children of a group whose help is wanted: never the whole revision. A
// store that cannot be read leaves the built-in verbs working, and the
// error is returned for when the command turns out not to be one of them.
// routed reports that the first word is a published route: then no owner
// verb can be meant (their names are reserved words). verbs builds the owner
// verbs, which the caller adds in front of root's commands unless routed.
func (a *app) addExtensionCommands(root *cli.Command, args []string, verbs func() []*cli.Command) (routed bool, err error) {
	if len(args) > 1 && (kernel.IsBuiltinVerb(args[1]) || args[1] == "--version" || args[1] == "-v") {
		return false, nil // owner verbs never need the revision
	}
	var words []string
	for _, w := range args[1:] {
		if strings.HasPrefix(w, "-") || w == "help" || w == "h" {
			break
		}
		words = append(words, w)
	}
	_, err = a.h.ViewActive(func(ix *store.Index) error {
		t := cliTarget{revision: ix.Revision(), limits: cliLimits(ix)}
		if len(words) > 0 {
			var err error
			if t.untrusted, err = ix.UntrustedReleases(); err != nil {
				return err
			}
		}
		if len(words) == 0 {
			return ix.Children(nil, func(r store.Route) error {
				root.Commands = append(root.Commands, &cli.Command{Name: r.Words[0], Usage: r.Line, Category: "published commands"})
				return nil
			})
		}
		parent, depth := root, 0
		for k := 1; k <= len(words); k++ {
			r, ok, err := ix.Route(words[:k])
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			routed = true
			name := words[k-1]
			if r.Kind != store.RouteGroup {
				c, err := a.routeCommand(ix, t, r, name)
				if err != nil {
					return err
				}
				add(parent, root, c)
				return nil
			}
			g := &cli.Command{Name: name, Usage: r.Line, Action: func(ctx context.Context, c *cli.Command) error {
				return cli.ShowSubcommandHelp(c) // unknown words were refused before parsing
			}}
			add(parent, root, g)
			parent, depth = g, k
		}
		if parent == root {
			if _, isVerb := verbNames(verbs())[words[0]]; isVerb {
				return nil
			}
			// An unknown first word: the top-level routes are what the
			// "did you mean" of the error needs.
			return ix.Children(nil, func(r store.Route) error {
				root.Commands = append(root.Commands, &cli.Command{Name: r.Words[0], Usage: r.Line, Category: "published commands"})
				return nil
			})
		}
		// The words end at a group (or at a word that is not in it): its
		// children are what its help and the unknown-word message need.
		return ix.Children(words[:depth], func(r store.Route) error {
			parent.Commands = append(parent.Commands, &cli.Command{Name: r.Words[len(r.Words)-1], Usage: r.Line})
			return nil
		})
	})
	return routed && err == nil, err
}

func add(parent, root, c *cli.Command) {
	if parent == root {
		c.Category = "published commands"
	}
	parent.Commands = append(parent.Commands, c)
}

// cliTarget is what a CLI run takes from the revision besides the command.
type cliTarget struct {
	revision string // the active revision's id, which the call holds
	limits   kernel.Limits
	dir      string // the release copy
	// untrusted: the releases whose key is no longer trusted, read with
	// the route
	untrusted map[string]bool
}

// routeCommand builds the urfave command for a command route or an alias.
func (a *app) routeCommand(ix *store.Index, t cliTarget, r store.Route, name string) (*cli.Command, error) {
	raw, err := ix.Decl(r.Decl)
	if err != nil {
		return nil, err
	}
	bc, err := policy.DecodeCommand(raw)
	if err != nil {
		return nil, kernel.Errorf(kernel.CodeInternal, "revision %s: command %s is unreadable", ix.Revision(), r.Command).Wrap(err)
	}
	t.dir = a.h.CopyDir(bc.Digest, bc.Development)
	c := a.extensionCommand(t, bc, name)
	if r.Kind == store.RouteAlias {
		c.Usage += " (alias of " + strings.Join(bc.Declaration.Path, " ") + ")"
	}
	return c, nil
}

// recorder keeps CLI values in the order they were given.
type recorder struct{ values []kernel.CLIValue }

type recordValue struct {
	rec   *recorder
	param string
	last  string
}

func (v *recordValue) Set(s string) error {
	v.rec.values = append(v.rec.values, kernel.CLIValue{Param: v.param, Text: s})
	v.last = s
	return nil
}
func (v *recordValue) Get() any       { return v.last }
func (v *recordValue) String() string { return v.last }

// extensionCommand builds the urfave command for one bound command. The
// flags only collect raw text: typing and checking happen in the kernel,
// the same step MCP arguments go through.
func (a *app) extensionCommand(t cliTarget, bc *policy.BoundCommand, name string) *cli.Command {
	decl := &bc.Declaration
	c := &cli.Command{
		Name:        name,
		Usage:       decl.Summary,
		Description: decl.Description,
		UsageText:   cliUsage(decl),
	}
	if decl.Execute.Mode == kernel.ModePassthrough {
		c.SkipFlagParsing = true
		c.Action = func(ctx context.Context, cmd *cli.Command) error {
			return a.runPassthrough(ctx, t, bc, cmd.Args().Slice())
		}
		return c
	}
	var args []string
	for i := range decl.Params {
		if p := &decl.Params[i]; p.Position != nil {
			line := fmt.Sprintf("  %-10s %s%s", strings.ToUpper(p.ID), paramType(p), paramRules(p))
			if p.Description != "" {
				line += ": " + p.Description
			}
			args = append(args, line)
		}
	}
	if len(args) > 0 {
		c.Description = strings.TrimSpace(c.Description + "\n\nARGUMENTS:\n" + strings.Join(args, "\n"))
	}
	rec := &recorder{}
	taken := map[string]bool{"help": true, "h": true, outputFlag(decl): true}
	for _, p := range decl.Params {
		if p.Flag != "" {
			taken[p.Flag] = true
		}
	}
	for i := range decl.Params {
		p := &decl.Params[i]
		if p.Flag == "" {
			continue
		}
		var aliases []string
		if p.Short != "" && !taken[p.Short] {
			// a short that clashes with a name (allowed by an older rukh)
			// is dropped rather than breaking every command
			aliases = []string{p.Short}
			taken[p.Short] = true
		}
		usage := flagUsage(p)
		if p.Type == kernel.TypeBoolean {
			c.Flags = append(c.Flags, &cli.BoolFlag{Name: p.Flag, Aliases: aliases, Usage: usage})
			continue
		}
		c.Flags = append(c.Flags, &cli.GenericFlag{Name: p.Flag, Aliases: aliases, Usage: usage,
			Value: &recordValue{rec: rec, param: p.ID}})
	}
	c.Flags = append(c.Flags, &cli.StringFlag{Name: outputFlag(decl), Value: "text", Usage: "`FORMAT`: text prints the result as is (structured data as JSON); json prints the whole outcome envelope"})
	if !taken["json"] {
		// the shorthand owner verbs have; a command declaring --json keeps its own
		c.Flags = append(c.Flags, &cli.BoolFlag{Name: "json", Usage: "short for --" + outputFlag(decl) + " json"})
	}
	c.ShellComplete = a.completeExtension(decl)
	c.Action = func(ctx context.Context, cmd *cli.Command) error {
		out, err := outputFormat(cmd, outputFlag(decl), !taken["json"])
		a.jsonErrors = out == "json"
		if err != nil {
			return err
		}
		values, err := cliValues(cmd, decl, rec)
		if err != nil {
			return err
		}
		return a.runManaged(ctx, t, bc, values, out)
	}
	return c
}

// cliValues gathers flags (in the order given) and positional words.
func cliValues(cmd *cli.Command, decl *kernel.Command, rec *recorder) ([]kernel.CLIValue, error) {
	values := append([]kernel.CLIValue(nil), rec.values...)
	var positional []*kernel.Param
	for i := range decl.Params {
		p := &decl.Params[i]
		switch {
		case p.Position != nil:
			positional = append(positional, p)
		case p.Type == kernel.TypeBoolean && cmd.IsSet(p.Flag):
			v := cmd.Bool(p.Flag)
			values = append(values, kernel.CLIValue{Param: p.ID, Bool: &v})
		}
	}
	sort.Slice(positional, func(i, j int) bool { return *positional[i].Position < *positional[j].Position })
	words := cmd.Args().Slice()
	for _, p := range positional {
		if len(words) == 0 {
			break
		}
		if p.Type == kernel.TypeList {
			for _, w := range words {
				values = append(values, kernel.CLIValue{Param: p.ID, Text: w})
			}
			words = nil
			break
		}
		values = append(values, kernel.CLIValue{Param: p.ID, Text: words[0]})
		words = words[1:]
	}
	if len(words) > 0 {
		return nil, kernel.Errorf(kernel.CodeUsage, "unexpected argument %q", words[0]).
			WithHint(fmt.Sprintf("run '%s --help' for usage", cmd.FullName()))
	}
	return values, nil
}

func (a *app) runManaged(ctx context.Context, t cliTarget, bc *policy.BoundCommand, values []kernel.CLIValue, output string) error {
	decl := &bc.Declaration
	req, err := kernel.RequestFromCLI(decl, values)
	if err != nil {
		var ke *kernel.Error
		if errors.As(err, &ke) && ke.Code == kernel.CodeInvalid {
			ke = ke.AtPath(cliName(decl, ke.Path)).WithHint(fmt.Sprintf("run 'rukh %s --help' for usage", strings.Join(decl.Path, " ")))
			return &exitError{code: outcomeExit(kernel.Rejected), err: ke, outcome: string(kernel.Rejected)}
		}
		return err
	}
	dir, unpin, err := a.pinCLI(t, bc, output)
	if err != nil {
		return err
	}
	defer unpin()
	res := a.h.Runner.Invoke(ctx, &kernel.Invocation{
		ID:         kernel.NewInvocationID(),
		Command:    decl,
		Dir:        dir,
		Request:    req,
		Caller:     kernel.CLICaller,
		Limits:     t.limits,
		Stdin:      managedStdin(a.stdin),
		Stdout:     a.stdout,
		Stderr:     a.stderr,
		OnProgress: a.progressPrinter(),
		Terminal:   true, // a person's command may need the terminal
		Package:    bc.Package(),
		Settings:   bc.Settings,
	})
	if output == "json" {
		if err := printJSON(a.stdout, res); err != nil {
			return err
		}
	} else if len(res.CommandResult) > 0 {
		a.printResult(res.CommandResult)
	}
	var failure error
	switch res.Outcome {
	case kernel.Succeeded:
		return nil
	case kernel.CommandFailed:
		failure = fmt.Errorf("%s failed: %s", decl.ID, orDefault(res.Reason, "no reason given"))
	case kernel.Rejected:
		failure = fmt.Errorf("%s was rejected: %s", decl.ID, res.Reason)
	case kernel.Cancelled:
		failure = fmt.Errorf("%s was cancelled: %s", decl.ID, strings.TrimPrefix(res.Reason, "cancelled: "))
	default:
		failure = fmt.Errorf("%s did not complete properly: %s (invocation %s)", decl.ID, res.Reason, res.InvocationID)
	}
	return &exitError{code: outcomeExit(res.Outcome), outcome: string(res.Outcome), err: failure}
}

func (a *app) printResult(cr jsontext.Value) {
	var r struct {
		Kind string         `json:"kind"`
		Text string         `json:"text"`
		Data jsontext.Value `json:"data"`
	}
	// read member by member: the one-shot CLI would otherwise build this
	// struct's decoder by reflection for one use
	pr := kernel.NewPlainReader(cr)
	pr.Object(func(name string) {
		switch name {
		case "kind":
			r.Kind = pr.String()
		case "text":
			r.Text = pr.String()
		case "data":
			r.Data = pr.Value()
		default:
			pr.Skip()
		}
	})
	if !pr.OK() {
		r.Kind, r.Text, r.Data = "", "", nil
		if err := json.Unmarshal(cr, &r); err != nil {
			return
		}
	}
	if r.Kind == kernel.ResultText {
		fmt.Fprint(a.stdout, r.Text)
		if r.Text != "" && !strings.HasSuffix(r.Text, "\n") {
			fmt.Fprintln(a.stdout)
		}
		return
	}
	_ = printJSON(a.stdout, r.Data)
}

func (a *app) runPassthrough(ctx context.Context, t cliTarget, bc *policy.BoundCommand, args []string) error {
	// A passthrough program has the terminal and the owner's environment:
	// it cannot run confined, nor under a template that could not be read.
	if why := t.limits.Refuse; why != "" {
		return &exitError{code: ExitExecution, err: kernel.Errorf(kernel.CodeUnavailable, "%s cannot run: %s", bc.Declaration.ID, why)}
	}
	if t.limits.Confine != nil {
		return &exitError{code: ExitExecution, err: kernel.Errorf(kernel.CodeUnavailable, "%s is a passthrough command, which cannot run confined, and the local endpoint's template %q confines", bc.Declaration.ID, t.limits.Template).WithHint("give the local endpoint an unconfined template to run passthrough commands, or run the command through an endpoint of its own")}
	}
	dir, unpin, err := a.pinCLI(t, bc, "")
	if err != nil {
		return err
	}
	defer unpin()
	code, err := a.h.Runner.RunPassthrough(ctx, dir, &bc.Declaration, args, a.stdin, a.stdout, a.stderr)
	if err != nil {
		return &exitError{code: ExitExecution, err: err}
	}
	if code != 0 {
		return &exitError{code: code}
	}
	return nil
}

func (t cliTarget) releaseDir(bc *policy.BoundCommand) (string, error) {
	if t.dir != "" {
		return t.dir, nil
	}
	return "", kernel.Errorf(kernel.CodeInternal, "the active revision binds no release directory for %s (%s)", bc.Declaration.ID, bc.Release)
}

// managedStdin keeps the terminal away from managed children: they run in
// their own process group, where reading the terminal would stop them, and
// they take input from the channel. Piped input still reaches them.
func managedStdin(in io.Reader) io.Reader {
	if isTerminal(in) {
		return nil
	}
	return in
}

func isTerminal(v any) bool { return kernel.IsTerminal(v) }

// progressPrinter shows a command's progress messages on a terminal.
func (a *app) progressPrinter() func(kernel.Progress) {
	if !isTerminal(a.stderr) {
		return nil
	}
	return func(p kernel.Progress) {
		line := "rukh: progress:"
		if p.Message != "" {
			line += " " + p.Message
		}
		switch {
		case p.Progress != nil && p.Total != nil:
			line += fmt.Sprintf(" (%g/%g)", *p.Progress, *p.Total)
		case p.Progress != nil:
			line += fmt.Sprintf(" (%g)", *p.Progress)
		}
		fmt.Fprintln(a.stderr, line)
	}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// cliLimits applies the template of the local endpoint to CLI runs, so one
// profile setting bounds a command wherever it is called from.
func cliLimits(ix *store.Index) kernel.Limits {
	if ep, ok := ix.Endpoint(policy.DefaultEndpoint); ok {
		m, err := policy.DecodeEndpointMeta(ep.Meta)
		if err != nil {
			return policy.UnreadableTemplate(err).Limits()
		}
		return m.Template.Limits()
	}
	return kernel.Limits{}
}

// cliName renames an input error's JSON pointer (/priority, /tags/2) to
// what a person typed: --priority, item 3 of --tag, or the argument ID.
func cliName(decl *kernel.Command, path string) string {
	id, rest, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	for i := range decl.Params {
		p := &decl.Params[i]
		if p.ID != id {
			continue
		}
		name := strings.ToUpper(p.ID)
		if p.Flag != "" {
			name = flagName(p.Flag)
		}
		if n, err := strconv.Atoi(rest); err == nil {
			return fmt.Sprintf("%s (item %d)", name, n+1)
		}
		return name
	}
	return path
}

// outputFlag is "output" unless a release published before that name was
// reserved declares it itself; then the result format moves aside rather
// than breaking every command.
func outputFlag(decl *kernel.Command) string {
	for _, p := range decl.Params {
		if p.Flag == "output" {
			return "rukh-output"
		}
	}
	return "output"
}

// verbNames is the set of words the owner verbs answer to.
func verbNames(verbs []*cli.Command) map[string]struct{} {
	m := map[string]struct{}{}
	for _, c := range verbs {
		m[c.Name] = struct{}{}
		for _, a := range c.Aliases {
			m[a] = struct{}{}
		}
	}
	return m
}
