package commands

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
	"github.com/urfave/cli/v3"
)

type describeReport struct {
	Command     kernel.Command    `json:"declaration"`
	Release     string            `json:"release"`
	Source      string            `json:"source"` // published | draft
	Usage       string            `json:"usage"`
	Eligible    bool              `json:"eligible"`
	Reason      string            `json:"reason,omitempty"`
	Fix         string            `json:"fix,omitempty"`        // what to change so it becomes a tool
	Development bool              `json:"development,omitzero"` // from a `rukh dev` release, NAME@dev
	Tools       map[string]string `json:"tools,omitempty"`      // endpoint → tool name
	Security    map[string]string `json:"security,omitempty"`   // endpoint → security level
	Tasks       []string          `json:"tasks,omitempty"`      // endpoints where a call may become a task
	TaskOnly    []string          `json:"taskOnly,omitempty"`   // endpoints where a call may only run as a task
	InputSchema jsontext.Value    `json:"inputSchema,omitempty"`
	// Needs is what the manifest asks for; RunsUnder is, per endpoint that
	// publishes the command, the template its calls run under.
	Needs     *kernel.Needs        `json:"needs,omitempty"`
	RunsUnder map[string]runsUnder `json:"runsUnder,omitempty"`
	Withheld  map[string]string    `json:"withheld,omitempty"` // endpoint → why its template withholds the command
	// Settings are the package's declared settings and where a value is
	// set; never a value.
	Settings []describeSetting `json:"settings,omitempty"`
}

// describeSetting is one declared setting as describe shows it.
type describeSetting struct {
	ID        string           `json:"id"`
	Type      kernel.ParamType `json:"type"`
	Required  bool             `json:"required,omitzero"`
	Sensitive bool             `json:"sensitive,omitzero"`
	Default   bool             `json:"hasDefault,omitzero"`
	SetFor    []string         `json:"setFor"` // "package", or "endpoint E"
}

// runsUnder is the template a command runs under on an endpoint.
type runsUnder struct {
	Template string          `json:"template"`
	Confine  *kernel.Confine `json:"confine,omitempty"` // nil: unconfined
}

type describeOptions struct {
	Args []string // a command id, or its words
	JSON bool
}

func (a *app) describeCmd() *cli.Command {
	return &cli.Command{
		Name:      "describe",
		Usage:     "show a command's declaration, CLI usage and whether agents can call it (and why not)",
		ArgsUsage: "COMMAND (an id such as notes.add, or its words: notes add)",
		Flags:     []cli.Flag{jsonFlag()},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() == 0 {
				return usageErr("describe needs a COMMAND")
			}
			return a.runDescribe(&describeOptions{Args: c.Args().Slice(), JSON: c.Bool("json")})
		},
	}
}

// describe looks in the active revision first, then in the draft, so an
// owner can inspect a command before publishing it.
func (a *app) describe(args []string) (*describeReport, error) {
	b, _, err := a.h.ActiveBinding()
	if err != nil {
		return nil, err
	}
	if bc := findCommand(b, args); bc != nil {
		return newDescribe(b, bc, "published"), nil
	}
	in, err := a.h.DraftInput("draft")
	if err != nil {
		return nil, err
	}
	db, _, err := policy.Build(in)
	if err == nil {
		if bc := findCommand(db, args); bc != nil {
			rep := newDescribe(db, bc, "draft")
			rep.Tools = nil // names are fixed only at publication
			// levels are known: they show what publishing would require
			return rep, nil
		}
	}
	// The draft may not build (that is what describe helps debug): search releases directly.
	for _, ri := range in.Releases {
		for i := range ri.Manifest.Commands {
			cmd := &ri.Manifest.Commands[i]
			if matches(cmd, args) {
				ok, why := kernel.Eligibility(ri.APIVersion, cmd)
				bc := &policy.BoundCommand{Release: ri.Name + "@" + ri.Version, Digest: ri.Digest, Declaration: *cmd, Eligible: ok, Reason: why, Settings: ri.Manifest.Settings}
				rep := newDescribe(nil, bc, "draft")
				rep.Fix = policy.CommandFix(ri.APIVersion, bc)
				rep.Development = ri.Development
				return rep, nil
			}
		}
	}
	return nil, kernel.Errorf(kernel.CodeNotFound, "no command %q is published or in the draft", strings.Join(args, " ")).
		WithHint("'rukh list' shows installed releases; 'rukh status' shows the draft")
}

func matches(c *kernel.Command, args []string) bool {
	if len(args) == 1 && args[0] == c.ID {
		return true
	}
	if equalWords(c.Path, args) {
		return true
	}
	for _, al := range c.Aliases {
		if equalWords(al, args) {
			return true
		}
	}
	return false
}

func equalWords(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func findCommand(b *policy.Binding, args []string) *policy.BoundCommand {
	if b == nil {
		return nil
	}
	for i := range b.Commands {
		if matches(&b.Commands[i].Declaration, args) {
			return &b.Commands[i]
		}
	}
	return nil
}

func newDescribe(b *policy.Binding, bc *policy.BoundCommand, source string) *describeReport {
	ok, why := bc.Publishable()
	rep := &describeReport{Command: bc.Declaration, Release: bc.Release, Source: source, Eligible: ok, Reason: why,
		Usage: cliUsage(&bc.Declaration), Needs: bc.Declaration.Execute.Needs}
	for _, st := range bc.Settings {
		rep.Settings = append(rep.Settings, describeSetting{ID: st.ID, Type: st.Type, Required: st.Required, Sensitive: st.Sensitive, Default: st.Default != nil, SetFor: []string{}})
	}
	if s, err := kernel.InputSchema(&bc.Declaration); err == nil {
		rep.InputSchema = s
	}
	if b != nil {
		rep.Development = home.DevReleases(b)[bc.Release]
		for _, p := range b.Endpoints {
			for _, t := range p.Tools {
				if t.Command == bc.Declaration.ID {
					if rep.Tools == nil {
						rep.Tools = map[string]string{}
					}
					rep.Tools[p.Endpoint] = t.Name
					if rep.RunsUnder == nil {
						rep.RunsUnder = map[string]runsUnder{}
					}
					rep.RunsUnder[p.Endpoint] = runsUnder{Template: p.Template.Name, Confine: p.Template.Confine}
					if rep.Security == nil {
						rep.Security = map[string]string{}
					}
					rep.Security[p.Endpoint] = t.Level()
					if tp := b.TasksOf(p.Endpoint); tp.Allows(t.Command) {
						rep.Tasks = append(rep.Tasks, p.Endpoint)
						if tp.Requires(t.Command) {
							rep.TaskOnly = append(rep.TaskOnly, p.Endpoint)
						}
					}
				}
			}
		}
		for _, p := range b.Endpoints {
			for _, w := range p.Withheld {
				if w.Command == bc.Declaration.ID {
					if rep.Withheld == nil {
						rep.Withheld = map[string]string{}
					}
					rep.Withheld[p.Endpoint] = w.Reason + " (" + w.Fix + ")"
				}
			}
		}
		if ok {
			if reason, fix := b.WhyNotTool(bc); reason != "" {
				rep.Reason, rep.Fix = reason, fix
			}
		} else {
			_, rep.Fix = b.WhyNotTool(bc)
		}
	}
	return rep
}

// cliUsage renders "rukh notes add --title STRING [--tag STRING]... [BODY]".
func cliUsage(c *kernel.Command) string {
	parts := append([]string{"rukh"}, c.Path...)
	if c.Execute.Mode == kernel.ModePassthrough {
		return strings.Join(append(parts, "[ARGS]..."), " ")
	}
	var pos []string
	for _, p := range c.Params {
		if p.Position != nil {
			w := strings.ToUpper(p.ID)
			if p.Type == kernel.TypeList {
				w += "..."
			}
			if !p.Required {
				w = "[" + w + "]"
			}
			pos = append(pos, w)
			continue
		}
		w := flagName(p.Flag)
		if p.Type != kernel.TypeBoolean {
			t := p.Type
			if p.Type == kernel.TypeList && p.Items != nil {
				t = p.Items.Type
			}
			w += " " + strings.ToUpper(string(t))
		}
		switch {
		case p.Type == kernel.TypeList:
			w = "[" + w + "]..."
		case !p.Required:
			w = "[" + w + "]"
		}
		parts = append(parts, w)
	}
	return strings.Join(append(parts, pos...), " ")
}

func printDescribe(w io.Writer, r *describeReport) {
	c := r.Command
	fmt.Fprintf(w, "%s  (%s%s, %s)\n", c.ID, r.Release, yesno(r.Development, " (dev)", ""), r.Source)
	if c.Summary != "" {
		fmt.Fprintf(w, "  %s\n", c.Summary)
	}
	if c.Description != "" {
		fmt.Fprintf(w, "  %s\n", c.Description)
	}
	fmt.Fprintf(w, "usage: %s\n", r.Usage)
	for _, al := range c.Aliases {
		fmt.Fprintf(w, "alias: rukh %s\n", strings.Join(al, " "))
	}
	if len(c.Params) > 0 {
		fmt.Fprintln(w, "params:")
		for _, p := range c.Params {
			fmt.Fprintf(w, "  %-12s %s\n", p.ID, paramSummary(&p))
		}
	}
	mode := c.Execute.Mode
	if mode == "" {
		mode = kernel.ModeManaged
	}
	res := "none declared"
	if c.Execute.Result != nil {
		res = c.Execute.Result.Kind
	}
	fmt.Fprintf(w, "execute: %s (mode %s, result %s)\n", strings.Join(append([]string{c.Execute.Program}, c.Execute.Args...), " "), mode, res)
	fmt.Fprintf(w, "needs: %s\n", needsWords(r.Needs))
	for _, st := range r.Settings {
		kind := string(st.Type)
		for _, k := range []struct {
			on   bool
			word string
		}{{st.Required, "required"}, {st.Sensitive, "sensitive"}, {st.Default, "has a default"}} {
			if k.on {
				kind += ", " + k.word
			}
		}
		set := "not set"
		if len(st.SetFor) > 0 {
			set = "set for " + strings.Join(st.SetFor, ", ")
		} else if st.Required {
			set = "not set: calls are rejected until 'rukh settings set " + strings.SplitN(r.Release, "@", 2)[0] + " " + st.ID + "'"
		}
		fmt.Fprintf(w, "setting %s (%s): %s\n", st.ID, kind, set)
	}
	if h := hintWords(c.Hints); h != "" {
		fmt.Fprintf(w, "hints: %s\n", h)
	}
	if r.Eligible {
		fmt.Fprintln(w, "agents: eligible")
	} else {
		fmt.Fprintf(w, "agents: not eligible: %s\n", r.Reason)
	}
	if r.Eligible && r.Reason != "" {
		fmt.Fprintf(w, "  %s\n", r.Reason)
	}
	if r.Fix != "" {
		fmt.Fprintf(w, "  fix: %s\n", r.Fix)
	}
	for _, ep := range slices.Sorted(maps.Keys(r.Tools)) {
		task := yesno(slices.Contains(r.Tasks, ep), ", may run as a task", "")
		if slices.Contains(r.TaskOnly, ep) {
			task = ", may only run as a task"
		}
		fmt.Fprintf(w, "tool on endpoint %s: %s (security %s)%s\n", ep, r.Tools[ep], r.Security[ep], task)
		if u, ok := r.RunsUnder[ep]; ok {
			fmt.Fprintf(w, "  runs under template %s: %s\n", cmp.Or(u.Template, "(unnamed)"), confineWords(u.Confine))
		}
	}
	for _, ep := range slices.Sorted(maps.Keys(r.Withheld)) {
		fmt.Fprintf(w, "not published on endpoint %s: %s\n", ep, r.Withheld[ep])
	}
	if len(r.Tools) == 0 {
		for _, ep := range slices.Sorted(maps.Keys(r.Security)) {
			fmt.Fprintf(w, "security on endpoint %s: %s\n", ep, r.Security[ep])
		}
	}
	if r.Development {
		fmt.Fprintf(w, "development release: published only on endpoint %s, whatever other endpoints' profiles say\n", policy.DevEndpoint)
	}
}

// needsWords says what a command's needs ask for.
func needsWords(n *kernel.Needs) string {
	if n == nil {
		return "none declared"
	}
	var words []string
	if n.Network {
		words = append(words, "network")
	}
	if len(n.Read) > 0 {
		words = append(words, "read "+strings.Join(n.Read, ", "))
	}
	if len(n.Write) > 0 {
		words = append(words, "write "+strings.Join(n.Write, ", "))
	}
	if n.Processes > 0 {
		words = append(words, fmt.Sprintf("%d processes", n.Processes))
	}
	if len(words) == 0 {
		return "nothing"
	}
	return strings.Join(words, "; ")
}

// confineWords says what a template's confinement grants.
func confineWords(c *kernel.Confine) string {
	if c == nil {
		return "unconfined (the owner's rights; contained all the same)"
	}
	none := func(l []string) string {
		if len(l) == 0 {
			return "nothing"
		}
		return strings.Join(l, ", ")
	}
	s := fmt.Sprintf("network %s; read %s; write %s", cmp.Or(c.Network, kernel.NetworkHost), none(c.Read), none(c.Write))
	for _, l := range []struct {
		name string
		v    int
	}{{"processes", c.Processes}, {"memoryMiB", c.MemoryMiB}, {"cpuSeconds", c.CPUSeconds}, {"fileMiB", c.FileMiB}} {
		if l.v > 0 {
			s += fmt.Sprintf("; %s %d", l.name, l.v)
		}
	}
	return s
}

// paramSummary describes a param's type and rules for describe.
func paramSummary(p *kernel.Param) string {
	var b strings.Builder
	b.WriteString(paramType(p))
	if p.Flag != "" {
		fmt.Fprintf(&b, ", %s", flagName(p.Flag))
		if p.Short != "" {
			fmt.Fprintf(&b, "/-%s", p.Short)
		}
	} else if p.Position != nil {
		fmt.Fprintf(&b, ", position %d", *p.Position)
	}
	b.WriteString(paramRules(p))
	if p.Description != "" {
		fmt.Fprintf(&b, ": %s", p.Description)
	}
	return b.String()
}

// flagUsage is a flag's help line; urfave/cli shows the back-quoted word
// as the value placeholder.
func flagUsage(p *kernel.Param) string {
	var b strings.Builder
	if p.Description != "" {
		b.WriteString(p.Description + " ")
	}
	if p.Type == kernel.TypeBoolean {
		fmt.Fprintf(&b, "(boolean%s)", paramRules(p))
	} else {
		fmt.Fprintf(&b, "(`%s`%s)", strings.ToUpper(paramType(p)), paramRules(p))
	}
	if p.Type == kernel.TypeList {
		b.WriteString(", repeat for more")
	}
	return b.String()
}

func paramType(p *kernel.Param) string {
	if p.Type == kernel.TypeList && p.Items != nil {
		return string(p.Items.Type)
	}
	return string(p.Type)
}

func paramRules(p *kernel.Param) string {
	var b strings.Builder
	if p.Type == kernel.TypeList {
		b.WriteString(", list")
	}
	if p.Required {
		b.WriteString(", required")
	}
	if len(p.Default) > 0 {
		fmt.Fprintf(&b, ", default %s", p.Default)
	}
	if len(p.Enum) > 0 {
		vals := make([]string, len(p.Enum))
		for i, e := range p.Enum {
			vals[i] = string(e)
		}
		fmt.Fprintf(&b, ", one of %s", strings.Join(vals, "|"))
	}
	if len(p.Minimum) > 0 || len(p.Maximum) > 0 {
		fmt.Fprintf(&b, ", range %s..%s", orEmpty(p.Minimum), orEmpty(p.Maximum))
	}
	if p.MaxLength != nil {
		fmt.Fprintf(&b, ", at most %d characters", *p.MaxLength)
	}
	if p.MaxItems != nil {
		fmt.Fprintf(&b, ", at most %d items", *p.MaxItems)
	}
	return b.String()
}

func orEmpty(v jsontext.Value) string {
	if len(v) == 0 {
		return ""
	}
	return string(v)
}

func hintWords(h *kernel.Hints) string {
	if h == nil {
		return ""
	}
	var words []string
	add := func(v *bool, yes, no string) {
		if v != nil {
			words = append(words, yesno(*v, yes, no))
		}
	}
	add(h.ReadOnly, "read-only", "writes")
	add(h.Destructive, "destructive", "not destructive")
	add(h.Idempotent, "idempotent", "not idempotent")
	add(h.OpenWorld, "open world", "closed world")
	if h.Title != "" {
		words = append([]string{fmt.Sprintf("title %q", h.Title)}, words...)
	}
	return strings.Join(words, ", ")
}

// flagName spells a flag as urfave/cli parses it: -n, --name.
func flagName(flag string) string {
	if len(flag) == 1 {
		return "-" + flag
	}
	return "--" + flag
}

// describeOther answers for words that are not a command: a built-in verb,
// or a published group (whose commands it lists).
func (a *app) describeOther(args []string, asJSON bool) (bool, error) {
	if len(args) == 1 && kernel.IsBuiltinVerb(args[0]) {
		if asJSON {
			return true, printJSON(a.stdout, map[string]string{"builtin": args[0]})
		}
		fmt.Fprintf(a.stdout, "%s is a built-in owner verb, never a tool: run 'rukh %s --help'\n", args[0], args[0])
		return true, nil
	}
	b, _, err := a.h.ActiveBinding()
	if err != nil || b == nil {
		return false, err
	}
	words := args
	if len(args) == 1 {
		words = strings.Fields(args[0])
	}
	for _, r := range b.Routes {
		if r.Kind != policy.RouteGroup || !equalWords(r.Words, words) {
			continue
		}
		var children []string
		for _, ch := range b.Children(r.Words) {
			children = append(children, strings.Join(ch.Words, " "))
		}
		if asJSON {
			return true, printJSON(a.stdout, map[string]any{"group": strings.Join(words, " "), "commands": children})
		}
		fmt.Fprintf(a.stdout, "%s is a group of published commands:\n", strings.Join(words, " "))
		for _, ch := range children {
			fmt.Fprintf(a.stdout, "  rukh %s\n", ch)
		}
		return true, nil
	}
	return false, nil
}

// describeSettings says where each declared setting has a value.
func (a *app) describeSettings(rep *describeReport) error {
	if len(rep.Settings) == 0 {
		return nil
	}
	pkg, _, _ := strings.Cut(rep.Release, "@")
	views, err := a.h.ListSettings(pkg, "")
	if err != nil {
		return err
	}
	for i := range rep.Settings {
		st := &rep.Settings[i]
		for _, v := range views {
			if v.ID != st.ID {
				continue
			}
			for _, sc := range v.Values {
				st.SetFor = append(st.SetFor, cmp.Or(yesno(sc.Endpoint != "", "endpoint "+sc.Endpoint, ""), "package"))
			}
		}
	}
	return nil
}

func (a *app) runDescribe(opts *describeOptions) error {
	if done, err := a.describeOther(opts.Args, opts.JSON); done || err != nil {
		return err
	}
	rep, err := a.describe(opts.Args)
	if err != nil {
		return err
	}
	if err := a.describeSettings(rep); err != nil {
		return err
	}
	if opts.JSON {
		return printJSON(a.stdout, rep)
	}
	printDescribe(a.stdout, rep)
	return nil
}
