package commands

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/urfave/cli/v3"
)

// Shell completion. The scripts urfave/cli prints call
// "rukh WORDS... --generate-shell-completion" and offer what is printed,
// one candidate a line. Beyond its verbs and flags, rukh completes the
// values it knows: --output formats, endpoint names, package names, and
// the enum members an extension declares.

// completionShells are the shells urfave/cli has scripts for.
var completionShells = []string{"bash", "zsh", "fish", "pwsh"}

// configureCompletion shows the completion verb in --help and makes an
// unknown shell a usage error instead of a help lookup.
func configureCompletion(cc *cli.Command) {
	cc.Hidden = false
	cc.Category = "owner verbs"
	cc.Usage = "print a shell completion script: " + strings.Join(completionShells, ", ")
	cc.ArgsUsage = "SHELL"
	cc.Action = func(_ context.Context, c *cli.Command) error {
		hint := "add 'source <(rukh completion bash)' to ~/.bashrc (bash needs the bash-completion package)"
		if c.Args().Len() == 0 {
			return kernel.Errorf(kernel.CodeUsage, "completion needs a shell: %s", strings.Join(completionShells, ", ")).WithHint(hint)
		}
		return kernel.Errorf(kernel.CodeUsage, "unknown shell %q: rukh completes %s", c.Args().First(), strings.Join(completionShells, ", ")).WithHint(hint)
	}
}

// completeOwner completes an owner verb: flag values, then its flags or
// subcommands and the names its first argument takes.
func (a *app) completeOwner(ctx context.Context, c *cli.Command) {
	args := c.Args().Slice()
	if flag, ok := pendingFlag(c, args); ok {
		switch flag {
		case "output":
			a.offer("text", "json")
		case "endpoint":
			a.offer(a.endpointNames()...)
		}
		return
	}
	cli.DefaultCompleteWithFlags(ctx, c)
	switch c.FullName() {
	case "rukh settings set", "rukh settings unset":
		if len(args) < 2 {
			a.offer(a.settingCompletions(args)...)
		}
		return
	case "rukh settings list":
		if len(args) == 0 {
			a.offer(a.settingCompletions(nil)...)
		}
		return
	}
	if len(args) > 0 {
		return // a partial flag was completed above, or the argument is given
	}
	switch c.FullName() {
	case "rukh activate":
		a.offer(a.releaseNames(true)...)
	case "rukh uninstall":
		a.offer(a.releaseNames(false)...)
	case "rukh deactivate":
		if d, err := a.h.Store.Draft(); err == nil {
			var names []string
			for n := range d.Active {
				names = append(names, n)
			}
			sort.Strings(names)
			a.offer(names...)
		}
	}
}

// completeExtension completes a published command from its declaration.
func (a *app) completeExtension(decl *kernel.Command) cli.ShellCompleteFunc {
	return func(ctx context.Context, c *cli.Command) {
		args := c.Args().Slice()
		if flag, ok := pendingFlag(c, args); ok {
			if flag == outputFlag(decl) {
				a.offer("text", "json")
				return
			}
			for i := range decl.Params {
				if p := &decl.Params[i]; p.Flag == flag || p.Short == flag {
					a.offer(enumValues(p)...)
				}
			}
			return
		}
		cli.DefaultCompleteWithFlags(ctx, c)
		if len(args) > 0 && strings.HasPrefix(args[len(args)-1], "-") {
			return
		}
		for i := range decl.Params {
			p := &decl.Params[i]
			if p.Position != nil && (*p.Position == len(args) || p.Type == kernel.TypeList && *p.Position <= len(args)) {
				a.offer(enumValues(p)...)
			}
		}
	}
}

// pendingFlag reports a value-taking flag typed last, whose value is the
// word being completed (urfave/cli leaves it among the arguments).
func pendingFlag(c *cli.Command, args []string) (string, bool) {
	if len(args) == 0 {
		return "", false
	}
	last := args[len(args)-1]
	name := strings.TrimLeft(last, "-")
	if name == last || strings.Contains(name, "=") {
		return "", false
	}
	for _, f := range c.Flags {
		for _, n := range f.Names() {
			if n == name {
				_, isBool := f.(*cli.BoolFlag)
				return f.Names()[0], !isBool
			}
		}
	}
	return "", false
}

func (a *app) offer(values ...string) {
	for _, v := range values {
		fmt.Fprintln(a.stdout, v)
	}
}

// enumValues are a param's (or its list items') enum members as typed.
func enumValues(p *kernel.Param) []string {
	enum := p.Enum
	if p.Items != nil && len(p.Items.Enum) > 0 {
		enum = p.Items.Enum
	}
	var out []string
	for _, v := range enum {
		var s string
		if v.Kind() == '"' && json.Unmarshal(v, &s) == nil {
			out = append(out, s)
		} else {
			out = append(out, string(v))
		}
	}
	return out
}

// releaseNames lists installed packages: NAME and NAME@VERSION, or only
// NAME@VERSION.
func (a *app) releaseNames(bare bool) []string {
	rels, err := a.h.Store.Releases()
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, r := range rels {
		if bare && !seen[r.Name] {
			seen[r.Name] = true
			out = append(out, r.Name)
		}
		out = append(out, r.Name+"@"+r.Version)
	}
	sort.Strings(out)
	return out
}

// endpointNames are the endpoints of the draft profile and of the active
// revision.
func (a *app) endpointNames() []string {
	seen := map[string]bool{}
	if p, err := a.h.DraftProfile(); err == nil {
		for n := range p.Endpoints {
			seen[n] = true
		}
	}
	if b, _, err := a.h.ActiveBinding(); err == nil && b != nil {
		for _, p := range b.Endpoints {
			seen[p.Endpoint] = true
		}
	}
	var out []string
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// wantsJSON guesses from the arguments whether errors should be printed as
// JSON, for errors found before a verb parses its flags.
func wantsJSON(root *cli.Command, args []string) bool {
	cur := root
	for i := 1; i < len(args); i++ {
		w := args[i]
		if w == "--" {
			return false
		}
		if !strings.HasPrefix(w, "-") || w == "-" {
			if next := cur.Command(w); next != nil {
				if cur = next; cur.SkipFlagParsing {
					return false // a passthrough program's own arguments
				}
			}
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(w, "-"), "=")
		switch name {
		case "json":
			if !hasVal || val == "true" {
				return true
			}
		case "output", "rukh-output":
			if hasVal && val == "json" || !hasVal && i+1 < len(args) && args[i+1] == "json" {
				return true
			}
		}
		if _, takes := pendingFlag(cur, []string{"--" + name}); takes && !hasVal {
			i++ // the flag's value
		}
	}
	return false
}
