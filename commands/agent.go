package commands

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
	"github.com/urfave/cli/v3"
)

// tokenReport is a newly minted secret, printed once.
type tokenReport struct {
	Agent     string    `json:"agent"`
	Endpoint  string    `json:"endpoint"`
	Kind      string    `json:"kind"`
	Command   string    `json:"command,omitempty"`
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
	Token     string    `json:"token"`
	Note      string    `json:"note"`
}

const shownOnce = "shown only once: rukh keeps only its SHA-256, so store it now"

type agentAddOptions struct {
	Name     string
	Endpoint string // required
	JSON     bool
}

type agentListOptions struct {
	JSON bool
}

// agentNameOptions serve the verbs that take one agent NAME and --json.
type agentNameOptions struct {
	Name string
	JSON bool
}

type agentTokenOptions struct {
	Name       string
	Once       bool
	TTL        time.Duration
	TTLSet     bool // else the kind's default
	Command    string
	CommandSet bool
	JSON       bool
}

func (a *app) agentCmd() *cli.Command {
	return &cli.Command{
		Name:  "agent",
		Usage: "manage agents (named principals bound to one endpoint) and their keys and tokens",
		Commands: []*cli.Command{
			{
				Name:      "add",
				Usage:     "add an agent bound to an endpoint and print its static key (shown only once)",
				ArgsUsage: "NAME",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "endpoint", Usage: "the profile endpoint the agent may call (required)"},
					jsonFlag(),
				},
				Action: func(ctx context.Context, c *cli.Command) error {
					name, err := oneName(c, "agent add")
					if err != nil {
						return err
					}
					return a.runAgentAdd(&agentAddOptions{Name: name, Endpoint: c.String("endpoint"), JSON: c.Bool("json")})
				},
			},
			{
				Name:  "list",
				Usage: "list agents, their endpoints and live credentials (never a secret)",
				Flags: []cli.Flag{jsonFlag()},
				Action: func(ctx context.Context, c *cli.Command) error {
					if err := noArgs(c); err != nil {
						return err
					}
					return a.runAgentList(&agentListOptions{JSON: c.Bool("json")})
				},
			},
			{
				Name:      "remove",
				Usage:     "remove an agent and revoke every key and token it has",
				ArgsUsage: "NAME",
				Flags:     []cli.Flag{jsonFlag()},
				Action:    a.agentNameAction("agent remove", a.runAgentRemove),
			},
			{
				Name:      "rotate",
				Usage:     "give an agent a new static key; the old one stops working at once",
				ArgsUsage: "NAME",
				Flags:     []cli.Flag{jsonFlag()},
				Action:    a.agentNameAction("agent rotate", a.runAgentRotate),
			},
			{
				Name:      "token",
				Usage:     "mint a short-lived token (--ttl), or a one-time token (--once [--command ID]) for an agent",
				ArgsUsage: "NAME",
				Flags: []cli.Flag{
					&cli.DurationFlag{Name: "ttl", Usage: "how long the token is valid, at most 24h (default 15m; 10m with --once)"},
					&cli.BoolFlag{Name: "once", Usage: "a one-time token: consumed by the first call it authorises"},
					&cli.StringFlag{Name: "command", Usage: "with --once: the one command identity the token may call"},
					jsonFlag(),
				},
				Action: func(ctx context.Context, c *cli.Command) error {
					name, err := oneName(c, "agent token")
					if err != nil {
						return err
					}
					return a.runAgentToken(&agentTokenOptions{Name: name, Once: c.Bool("once"),
						TTL: c.Duration("ttl"), TTLSet: c.IsSet("ttl"),
						Command: c.String("command"), CommandSet: c.IsSet("command"), JSON: c.Bool("json")})
				},
			},
		},
	}
}

// agentNameAction is the Action of a verb that takes one agent NAME.
func (a *app) agentNameAction(verb string, run func(*agentNameOptions) error) cli.ActionFunc {
	return func(ctx context.Context, c *cli.Command) error {
		name, err := oneName(c, verb)
		if err != nil {
			return err
		}
		return run(&agentNameOptions{Name: name, JSON: c.Bool("json")})
	}
}

func (a *app) runAgentAdd(opts *agentAddOptions) error {
	if opts.Endpoint == "" {
		return usageErr("agent add needs --endpoint E (the endpoint the agent may call)")
	}
	ag, err := a.h.AddAgent(opts.Name, opts.Endpoint)
	if err != nil {
		return err
	}
	if !ag.ServedOverHTTP {
		fmt.Fprintf(a.stderr, "rukh: note: endpoint %s is not served over HTTP yet: add \"http\" to its transports for the agent to reach it\n", opts.Endpoint)
	}
	rep := tokenReport{Agent: opts.Name, Endpoint: opts.Endpoint, Kind: kernel.CredentialStatic, Token: ag.Token, Note: shownOnce}
	return a.printToken(opts.JSON, rep, fmt.Sprintf("agent %s added, bound to endpoint %s", opts.Name, opts.Endpoint))
}

func (a *app) runAgentList(opts *agentListOptions) error {
	agents, err := a.h.Store.Agents()
	if err != nil {
		return err
	}
	if agents == nil {
		agents = []store.Agent{}
	}
	if opts.JSON {
		return printJSON(a.stdout, map[string]any{"agents": agents})
	}
	if len(agents) == 0 {
		fmt.Fprintln(a.stdout, "no agents (add one with 'rukh agent add NAME --endpoint E')")
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tENDPOINT\tCREATED\tLAST USED\tKEY\tSHORT-LIVED\tONE-TIME")
	for _, ag := range agents {
		last := "never"
		if !ag.LastUsed.IsZero() {
			last = ag.LastUsed.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\n", ag.Name, ag.Endpoint, ag.CreatedAt.UTC().Format(time.RFC3339), last,
			ag.Credentials[kernel.CredentialStatic], ag.Credentials[kernel.CredentialShortLived], ag.Credentials[kernel.CredentialOneTime])
	}
	return tw.Flush()
}

func (a *app) runAgentRemove(opts *agentNameOptions) error {
	n, err := a.h.Store.RemoveAgent(opts.Name)
	if err != nil {
		return err
	}
	if opts.JSON {
		return printJSON(a.stdout, map[string]any{"agent": opts.Name, "revoked": n})
	}
	fmt.Fprintf(a.stdout, "agent %s removed: %d credential(s) revoked\n", opts.Name, n)
	return nil
}

func (a *app) runAgentRotate(opts *agentNameOptions) error {
	m, err := a.h.Store.RotateAgent(opts.Name)
	if err != nil {
		return err
	}
	rep := tokenReport{Agent: opts.Name, Endpoint: m.Credential.Endpoint, Kind: kernel.CredentialStatic, Token: m.Token, Note: shownOnce}
	return a.printToken(opts.JSON, rep, fmt.Sprintf("agent %s has a new static key; the old one no longer works", opts.Name))
}

func (a *app) runAgentToken(opts *agentTokenOptions) error {
	if !opts.Once && opts.CommandSet {
		return usageErr("--command binds a one-time token: add --once")
	}
	ttl := home.DefaultTokenTTL(opts.Once)
	if opts.TTLSet {
		ttl = opts.TTL
	}
	tok, err := a.h.MintAgentToken(opts.Name, opts.Once, ttl, opts.Command)
	if err != nil {
		return err
	}
	cr := tok.Credential
	rep := tokenReport{Agent: opts.Name, Endpoint: cr.Endpoint, Kind: tok.Kind, Command: cr.Command, ExpiresAt: cr.ExpiresAt, Token: tok.Token, Note: shownOnce}
	what := fmt.Sprintf("%s token for agent %s (endpoint %s)", tok.Kind, opts.Name, cr.Endpoint)
	if cr.Command != "" {
		what += ", only for command " + cr.Command
	}
	what += fmt.Sprintf(", expires %s (in %s; tokens live at most %s)", cr.ExpiresAt.UTC().Format(time.RFC3339), fmtDuration(tok.TTL), fmtDuration(store.MaxTokenTTL))
	return a.printToken(opts.JSON, rep, what)
}

func (a *app) printToken(asJSON bool, rep tokenReport, what string) error {
	if asJSON {
		return printJSON(a.stdout, rep)
	}
	fmt.Fprintf(a.stdout, "%s\n%s\n(%s)\n", what, rep.Token, shownOnce)
	return nil
}

func oneName(c *cli.Command, verb string) (string, error) {
	if c.Args().Len() != 1 {
		return "", usageErr("%s takes exactly one NAME", verb)
	}
	return c.Args().First(), nil
}

// fmtDuration prints 24h0m0s as 24h.
func fmtDuration(d time.Duration) string {
	s := d.String()
	if t, ok := strings.CutSuffix(s, "m0s"); ok {
		s = t + "m"
	}
	if t, ok := strings.CutSuffix(s, "h0m"); ok {
		s = t + "h"
	}
	return s
}
