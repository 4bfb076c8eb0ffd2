package commands

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
	"github.com/urfave/cli/v3"
)

type settingsSetOptions struct {
	Package, ID, Endpoint string
	Arg                   *string // VALUE given as an argument
	Value                 *string // --value
	FromEnv, FromFile     string
	JSON                  bool
}

type settingsListOptions struct {
	Package, Endpoint string
	JSON              bool
}

type settingsUnsetOptions struct {
	Package, ID, Endpoint string
	JSON                  bool
}

func (a *app) settingsCmd() *cli.Command {
	endpoint := func(what string) cli.Flag {
		return &cli.StringFlag{Name: "endpoint", Usage: what}
	}
	return &cli.Command{
		Name:  "settings",
		Usage: "give packages their settings and secrets (read at call time, delivered on the channel only)",
		Commands: []*cli.Command{
			{
				Name:      "set",
				Usage:     "set a package's setting; a sensitive value is read without echo from the terminal, or from stdin, --from-env or --from-file",
				ArgsUsage: "PACKAGE ID [VALUE]",
				Flags: []cli.Flag{
					endpoint("set the value of this endpoint only, over the package's (one key per tenant)"),
					&cli.StringFlag{Name: "value", Usage: "the value on the command line (visible to other users and kept in shell history)"},
					&cli.StringFlag{Name: "from-env", Usage: "read the value from this environment variable"},
					&cli.StringFlag{Name: "from-file", Usage: "read the value from this file (one trailing newline is dropped)"},
					jsonFlag(),
				},
				Action: func(ctx context.Context, c *cli.Command) error {
					args := c.Args().Slice()
					if len(args) < 2 || len(args) > 3 {
						return usageErr("settings set takes PACKAGE ID [VALUE]")
					}
					opts := &settingsSetOptions{Package: args[0], ID: args[1], Endpoint: c.String("endpoint"),
						FromEnv: c.String("from-env"), FromFile: c.String("from-file"), JSON: c.Bool("json")}
					if len(args) == 3 {
						opts.Arg = &args[2]
					}
					if c.IsSet("value") {
						v := c.String("value")
						opts.Value = &v
					}
					return a.runSettingsSet(ctx, opts)
				},
			},
			{
				Name:      "list",
				Usage:     "list the settings packages declare and which are set (a sensitive value is never shown)",
				ArgsUsage: "[PACKAGE]",
				Flags:     []cli.Flag{endpoint("show what this endpoint's calls get"), jsonFlag()},
				Action: func(ctx context.Context, c *cli.Command) error {
					if c.Args().Len() > 1 {
						return usageErr("settings list takes at most one PACKAGE")
					}
					return a.runSettingsList(&settingsListOptions{Package: c.Args().First(), Endpoint: c.String("endpoint"), JSON: c.Bool("json")})
				},
			},
			{
				Name:      "unset",
				Usage:     "remove a package's value of a setting (or, with --endpoint, that endpoint's own value)",
				ArgsUsage: "PACKAGE ID",
				Flags:     []cli.Flag{endpoint("remove this endpoint's own value"), jsonFlag()},
				Action: func(ctx context.Context, c *cli.Command) error {
					if c.Args().Len() != 2 {
						return usageErr("settings unset takes PACKAGE ID")
					}
					return a.runSettingsUnset(&settingsUnsetOptions{Package: c.Args().Get(0), ID: c.Args().Get(1), Endpoint: c.String("endpoint"), JSON: c.Bool("json")})
				},
			},
		},
	}
}

// settingReport is what set and unset print: never the value.
type settingReport struct {
	Package   string    `json:"package"`
	ID        string    `json:"id"`
	Endpoint  string    `json:"endpoint,omitempty"`
	Sensitive bool      `json:"sensitive"`
	SetAt     time.Time `json:"setAt,omitzero"`
	Removed   bool      `json:"removed,omitempty"`
}

func scope(endpoint string) string {
	if endpoint == "" {
		return "for every endpoint"
	}
	return "for endpoint " + endpoint
}

func (a *app) runSettingsSet(ctx context.Context, opts *settingsSetOptions) error {
	// Every name is checked before a secret is asked for.
	if err := store.CheckSettingNames(opts.Package, opts.Endpoint, opts.ID); err != nil {
		return err
	}
	decl, err := a.h.SettingDeclaration(opts.Package, opts.ID)
	if err != nil {
		return err
	}
	value, err := a.settingValue(ctx, opts, decl)
	if err != nil {
		return err
	}
	view, warnings, err := a.h.SetSetting(opts.Package, opts.ID, opts.Endpoint, value)
	clear(value)
	if err != nil {
		return err
	}
	setAt := time.Time{}
	for _, sc := range view.Values {
		if sc.Endpoint == opts.Endpoint {
			setAt = sc.SetAt
		}
	}
	for _, w := range warnings {
		fmt.Fprintf(a.stderr, "rukh: warning: %s\n", printable(w))
	}
	out := settingReport{Package: opts.Package, ID: opts.ID, Endpoint: opts.Endpoint, Sensitive: decl.Sensitive, SetAt: setAt}
	if opts.JSON {
		return printJSON(a.stdout, out)
	}
	kind := ""
	if decl.Sensitive {
		kind = " (sensitive)"
	}
	fmt.Fprintf(a.stdout, "set %s %s%s %s\n", opts.Package, opts.ID, kind, scope(opts.Endpoint))
	return nil
}

// settingValue reads the value from the one source the owner chose. A
// sensitive value never comes from an argument unless --value insists.
func (a *app) settingValue(ctx context.Context, opts *settingsSetOptions, decl *kernel.Setting) ([]byte, error) {
	n := 0
	for _, given := range []bool{opts.Arg != nil, opts.Value != nil, opts.FromEnv != "", opts.FromFile != ""} {
		if given {
			n++
		}
	}
	if n > 1 {
		return nil, usageErr("give the value one way: VALUE, --value, --from-env or --from-file")
	}
	what := fmt.Sprintf("setting %q of %s", opts.ID, opts.Package)
	switch {
	case opts.Arg != nil && decl.Sensitive:
		return nil, kernel.Errorf(kernel.CodeUsage, "%s is sensitive: its value is not taken from the command line", what).
			WithHint("type it when asked (it is not echoed), pipe it on standard input, or use --from-env VAR or --from-file F; --value V insists")
	case opts.Arg != nil:
		return []byte(*opts.Arg), nil
	case opts.Value != nil:
		if decl.Sensitive {
			fmt.Fprintf(a.stderr, "rukh: warning: %s is sensitive, and a value on the command line can be seen by other users of this machine and stays in shell history\n", what)
		}
		return []byte(*opts.Value), nil
	case opts.FromEnv != "":
		v, ok := os.LookupEnv(opts.FromEnv)
		if !ok {
			return nil, kernel.Errorf(kernel.CodeUsage, "environment variable %s is not set", opts.FromEnv)
		}
		return []byte(v), nil
	case opts.FromFile != "":
		f, err := os.Open(opts.FromFile)
		if err != nil {
			return nil, kernel.Errorf(kernel.CodeUsage, "cannot read the value").Wrap(err)
		}
		defer f.Close()
		return readValue(f, opts.FromFile)
	}
	if f, ok := a.stdin.(*os.File); ok && kernel.IsTerminal(f) {
		kind := ""
		if decl.Sensitive {
			kind = ", not echoed"
		}
		fmt.Fprintf(a.stderr, "value of %s (%s, one line%s): ", opts.ID, decl.Type, kind)
		if decl.Sensitive {
			b, err := kernel.ReadSecret(ctx, f, kernel.MaxSettingValueBytes)
			fmt.Fprintln(a.stderr)
			return b, err
		}
		b, err := bufio.NewReaderSize(f, kernel.MaxSettingValueBytes+2).ReadSlice('\n')
		if err != nil && len(b) == 0 {
			return nil, kernel.Errorf(kernel.CodeUsage, "no value was typed").Wrap(err)
		}
		return bytes.TrimRight(b, "\r\n"), nil
	}
	return readValue(a.stdin, "standard input")
}

// readValue reads a whole value (at most the value limit), dropping one
// trailing newline.
func readValue(r io.Reader, from string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, kernel.MaxSettingValueBytes+3))
	if err != nil {
		return nil, kernel.Errorf(kernel.CodeUsage, "cannot read the value from %s", from).Wrap(err)
	}
	b, _ = bytes.CutSuffix(b, []byte("\n"))
	b, _ = bytes.CutSuffix(b, []byte("\r"))
	if len(b) > kernel.MaxSettingValueBytes {
		return nil, kernel.Errorf(kernel.CodeUsage, "the value from %s is over the limit of %d bytes", from, kernel.MaxSettingValueBytes)
	}
	return b, nil
}

func (a *app) runSettingsList(opts *settingsListOptions) error {
	views, err := a.h.ListSettings(opts.Package, opts.Endpoint)
	if err != nil {
		return err
	}
	if views == nil {
		views = []home.SettingView{}
	}
	if opts.JSON {
		return printJSON(a.stdout, map[string]any{"settings": views})
	}
	if len(views) == 0 {
		what := "no installed package declares settings"
		if opts.Package != "" {
			what = "package " + opts.Package + " declares no settings"
		}
		fmt.Fprintln(a.stdout, what)
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PACKAGE\tID\tTYPE\tSCOPE\tVALUE\tSET AT")
	for _, v := range views {
		typ := v.Type
		if v.Required {
			typ += ", required"
		}
		if v.Sensitive {
			typ += ", sensitive"
		}
		if !v.Declared {
			typ = "no longer declared"
		}
		rows := v.Values
		if opts.Endpoint != "" && len(rows) > 1 {
			rows = rows[len(rows)-1:] // the endpoint's own, listed last, wins
		}
		for _, sc := range rows {
			where := "package"
			if sc.Endpoint != "" {
				where = "endpoint " + sc.Endpoint
			}
			val := "set"
			if sc.Value != nil {
				val = string(sc.Value)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", v.Package, v.ID, printable(typ), printable(where), printable(val), sc.SetAt.UTC().Format(time.RFC3339))
		}
		if len(rows) > 0 && (rows[0].Endpoint == "" || opts.Endpoint != "") || !v.Declared {
			continue
		}
		// No value of the package's own: what the other endpoints (and
		// the CLI) get.
		val := "not set"
		switch {
		case v.Default != nil:
			val = string(v.Default) + " (default)"
		case v.Required:
			val = "not set: calls are rejected"
		}
		where := "package"
		if opts.Endpoint != "" {
			where = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t-\n", v.Package, v.ID, printable(typ), where, printable(val))
	}
	return tw.Flush()
}

func (a *app) runSettingsUnset(opts *settingsUnsetOptions) error {
	existed, err := a.h.UnsetSetting(opts.Package, opts.ID, opts.Endpoint)
	if err != nil {
		return err
	}
	if !existed {
		return kernel.Errorf(kernel.CodeNotFound, "setting %q of %s has no value %s", opts.ID, opts.Package, scope(opts.Endpoint)).
			WithHint("'rukh settings list " + opts.Package + "' shows what is set")
	}
	if opts.JSON {
		return printJSON(a.stdout, settingReport{Package: opts.Package, ID: opts.ID, Endpoint: opts.Endpoint, Removed: true})
	}
	fmt.Fprintf(a.stdout, "unset %s %s %s\n", opts.Package, opts.ID, scope(opts.Endpoint))
	return nil
}

// settingCompletions offers the packages that declare settings, then the
// ids of the named package.
func (a *app) settingCompletions(args []string) []string {
	views, err := a.h.ListSettings("", "")
	if err != nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, v := range views {
		switch {
		case len(args) == 0 && !seen[v.Package]:
			seen[v.Package] = true
			out = append(out, v.Package)
		case len(args) == 1 && v.Package == args[0] && !seen[v.ID]:
			seen[v.ID] = true
			out = append(out, v.ID)
		}
	}
	return out
}
