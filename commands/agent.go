package commands

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
	"github.com/urfave/cli/v3"
)

// Default token lifetimes; store.MaxTokenTTL bounds them.
const (
	defaultShortLivedTTL = 15 * time.Minute
	defaultOneTimeTTL    = 10 * time.Minute
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
					ep := c.String("endpoint")
					if ep == "" {
						return usageErr("agent add needs --endpoint E (the endpoint the agent may call)")
					}
					prof, err := a.draftProfile()
					if err != nil {
						return err
					}
					e, ok := prof.Endpoints[ep]
					if !ok {
						names := slices.Sorted(maps.Keys(prof.Endpoints))
						return kernel.Errorf(kernel.CodeNotFound, "the profile has no endpoint %q", ep).
							WithHint(fmt.Sprintf("endpoints: %s; add one with 'rukh policy set'", strings.Join(names, ", ")))
					}
					m, err := a.h.Store.AddAgent(name, ep)
					if err != nil {
						return err
					}
					if !slices.Contains(e.Transports, policy.TransportHTTP) {
						fmt.Fprintf(a.stderr, "rukh: note: endpoint %s is not served over HTTP yet: add \"http\" to its transports for the agent to reach it\n", ep)
					}
					rep := tokenReport{Agent: name, Endpoint: ep, Kind: kernel.CredentialStatic, Token: m.Token, Note: shownOnce}
					return a.printToken(c, rep, fmt.Sprintf("agent %s added, bound to endpoint %s", name, ep))
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
					agents, err := a.h.Store.Agents()
					if err != nil {
						return err
					}
					if agents == nil {
						agents = []store.Agent{}
					}
					if c.Bool("json") {
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
				},
			},
			{
				Name:      "remove",
				Usage:     "remove an agent and revoke every key and token it has",
				ArgsUsage: "NAME",
				Flags:     []cli.Flag{jsonFlag()},
				Action: func(ctx context.Context, c *cli.Command) error {
					name, err := oneName(c, "agent remove")
					if err != nil {
						return err
					}
					n, err := a.h.Store.RemoveAgent(name)
					if err != nil {
						return err
					}
					if c.Bool("json") {
						return printJSON(a.stdout, map[string]any{"agent": name, "revoked": n})
					}
					fmt.Fprintf(a.stdout, "agent %s removed: %d credential(s) revoked\n", name, n)
					return nil
				},
			},
			{
				Name:      "rotate",
				Usage:     "give an agent a new static key; the old one stops working at once",
				ArgsUsage: "NAME",
				Flags:     []cli.Flag{jsonFlag()},
				Action: func(ctx context.Context, c *cli.Command) error {
					name, err := oneName(c, "agent rotate")
					if err != nil {
						return err
					}
					m, err := a.h.Store.RotateAgent(name)
					if err != nil {
						return err
					}
					rep := tokenReport{Agent: name, Endpoint: m.Credential.Endpoint, Kind: kernel.CredentialStatic, Token: m.Token, Note: shownOnce}
					return a.printToken(c, rep, fmt.Sprintf("agent %s has a new static key; the old one no longer works", name))
				},
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
					kind, ttl := kernel.CredentialShortLived, defaultShortLivedTTL
					if c.Bool("once") {
						kind, ttl = kernel.CredentialOneTime, defaultOneTimeTTL
					} else if c.IsSet("command") {
						return usageErr("--command binds a one-time token: add --once")
					}
					if c.IsSet("ttl") {
						ttl = c.Duration("ttl")
					}
					m, err := a.h.Store.MintToken(name, kind, ttl, c.String("command"))
					if err != nil {
						return err
					}
					cr := m.Credential
					rep := tokenReport{Agent: name, Endpoint: cr.Endpoint, Kind: kind, Command: cr.Command, ExpiresAt: cr.ExpiresAt, Token: m.Token, Note: shownOnce}
					what := fmt.Sprintf("%s token for agent %s (endpoint %s)", kind, name, cr.Endpoint)
					if cr.Command != "" {
						what += ", only for command " + cr.Command
					}
					what += fmt.Sprintf(", expires %s (in %s; tokens live at most %s)", cr.ExpiresAt.UTC().Format(time.RFC3339), fmtDuration(ttl), fmtDuration(store.MaxTokenTTL))
					return a.printToken(c, rep, what)
				},
			},
		},
	}
}

func (a *app) printToken(c *cli.Command, rep tokenReport, what string) error {
	if c.Bool("json") {
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
