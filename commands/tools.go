package commands

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/serve"
	"github.com/rukh-dev/rukh/store"
	"github.com/urfave/cli/v3"
)

type toolsOptions struct {
	Endpoint string
	JSON     bool
	Search   string // rank the tools for this query instead of listing them
	Limit    int
}

func (a *app) toolsCmd() *cli.Command {
	return &cli.Command{
		Name:  "tools",
		Usage: "show the published MCP tools exactly as an endpoint's agents see them",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "endpoint", Value: "local", Usage: "the endpoint whose projection to show"},
			&cli.StringFlag{Name: "search", Usage: "rank the endpoint's tools for `QUERY`, as its search tool does for agents"},
			&cli.IntFlag{Name: "limit", Value: 10, Usage: "with --search, at most N tools (1 to 50)"},
			jsonFlag(),
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			if err := noArgs(c); err != nil {
				return err
			}
			opts := &toolsOptions{Endpoint: c.String("endpoint"), JSON: c.Bool("json"), Search: c.String("search"), Limit: c.Int("limit")}
			if c.IsSet("search") {
				return a.runToolsSearch(opts)
			}
			if c.IsSet("limit") {
				return kernel.Errorf(kernel.CodeUsage, "--limit goes with --search").WithHint("rukh tools --search QUERY --limit N")
			}
			return a.runTools(opts)
		},
	}
}

// taskTools names the tools of projection p whose calls may become tasks,
// and those among them whose calls may only run as tasks.
func taskTools(b *policy.Binding, p *policy.Projection) (tasks, only []string) {
	tp := b.TasksOf(p.Endpoint)
	for _, t := range p.Tools {
		if tp.Allows(t.Command) {
			tasks = append(tasks, t.Name)
			if tp.Requires(t.Command) {
				only = append(only, t.Name)
			}
		}
	}
	return tasks, only
}

func (a *app) runTools(opts *toolsOptions) error {
	b, rev, err := a.h.ActiveBinding()
	if err != nil {
		return err
	}
	if b == nil {
		return kernel.Errorf(kernel.CodeNotFound, "nothing is published yet").WithHint("run 'rukh publish'")
	}
	p, err := policy.Visible(b, opts.Endpoint)
	if err != nil {
		return err
	}
	// A progressive endpoint lists its direct tools and the discovery
	// tools; the rest are found through search.
	disc := b.DiscoveryOf(p.Endpoint)
	published := len(p.Tools)
	if disc.Progressive() {
		listed := *p
		listed.Tools = slices.DeleteFunc(slices.Clone(p.Tools), func(t policy.Tool) bool { return !disc.Lists(t.Command, t.Package()) })
		p = &listed
	}
	finders := policy.DiscoveryToolNames(b, p)
	dev := home.DevReleases(b)
	var devNames []string
	for _, t := range p.Tools {
		if dev[t.Release] {
			devNames = append(devNames, t.Name)
		}
	}
	jobs := serve.JobTools(b, p)
	a.warnEndpoint(b, p.Endpoint, policy.DefaultServerKey(p.Endpoint))
	if opts.JSON {
		wires := make([]jsontext.Value, 0, len(p.Tools)+len(jobs))
		for _, t := range p.Tools {
			wires = append(wires, t.Wire)
		}
		jobNames := make([]string, 0, len(jobs))
		for _, j := range jobs {
			wires = append(wires, j.Wire)
			jobNames = append(jobNames, j.Name)
		}
		levels := make(map[string]string, len(p.Tools)) // tool name → security level
		for _, t := range p.Tools {
			levels[t.Name] = t.Level()
		}
		out := map[string]any{"revision": rev.ID, "endpoint": p.Endpoint, "namespace": p.Namespace, "tools": wires, "security": levels}
		if tasks, only := taskTools(b, p); len(tasks) > 0 {
			out["tasks"] = tasks // tools whose calls may become tasks
			if len(only) > 0 {
				out["taskOnly"] = only // tools whose calls may only run as tasks
			}
		}
		if len(devNames) > 0 {
			out["development"] = devNames // tools from development releases (NAME@dev)
		}
		if len(jobNames) > 0 {
			out["jobTools"] = jobNames // the job family: status, result and cancel of a task
		}
		if len(finders) > 0 {
			out["discoveryTools"] = finders            // search, describe and call: listed after the tools
			out["unlisted"] = published - len(p.Tools) // published tools agents find through search
		}
		return printJSON(a.stdout, out)
	}
	fmt.Fprintf(a.stdout, "revision %s, endpoint %s (namespace %s): %d tool(s)\n", rev.ID, p.Endpoint, p.Namespace, len(p.Tools)+len(finders)+len(jobs))
	if len(finders) > 0 && published > len(p.Tools) {
		fmt.Fprintf(a.stdout, "progressive discovery: %d more published tool(s) are found through search; see them with 'rukh tools --search QUERY --endpoint %s'\n", published-len(p.Tools), p.Endpoint)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	tp := b.TasksOf(p.Endpoint)
	for _, t := range p.Tools {
		var w struct {
			Title string `json:"title"`
		}
		_ = json.Unmarshal(t.Wire, &w, json.RejectUnknownMembers(false))
		fmt.Fprintf(tw, "%s\t%s\t%s%s\t%s\t%s%s\n", t.Name, t.Command, t.Release, yesno(dev[t.Release], " (dev)", ""), w.Title, t.Level(),
			yesno(tp.Requires(t.Command), "\ttask-only", yesno(tp.Allows(t.Command), "\ttask", "")))
	}
	for i, n := range finders {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", n, policy.DiscoveryToolIDs[i], "(discovery)", "-", "-")
	}
	for _, j := range jobs {
		var w struct {
			Title string `json:"title"`
		}
		_ = json.Unmarshal(j.Wire, &w, json.RejectUnknownMembers(false))
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", j.Name, j.ID, "(job family)", w.Title, "-")
	}
	return tw.Flush()
}

// The bounds of the search tool's input, which --search and --limit share.
const (
	maxSearchQuery = 1024
	maxSearchLimit = 50
)

// searchHit is one ranked tool as 'rukh tools --search' shows it.
type searchHit struct {
	Name        string  `json:"name"`
	Command     string  `json:"command"`
	Title       string  `json:"title,omitempty"`
	Description string  `json:"description,omitempty"`
	Score       float64 `json:"score"`
}

// runToolsSearch ranks the endpoint's tools for a query from the active
// revision's search records: the ranking the endpoint's search tool gives
// agents, listed or not.
func (a *app) runToolsSearch(opts *toolsOptions) error {
	if strings.TrimSpace(opts.Search) == "" || len(opts.Search) > maxSearchQuery {
		return kernel.Errorf(kernel.CodeUsage, "--search needs a query of 1 to %d bytes", maxSearchQuery).WithHint(`rukh tools --search "send an email"`)
	}
	if opts.Limit < 1 || opts.Limit > maxSearchLimit {
		return kernel.Errorf(kernel.CodeUsage, "--limit %d: want 1 to %d", opts.Limit, maxSearchLimit)
	}
	var rev string
	var hits []searchHit
	published, err := a.h.ViewActive(func(ix *store.Index) error {
		rev = ix.Revision()
		if _, ok := ix.Endpoint(opts.Endpoint); !ok {
			return kernel.Errorf(kernel.CodeNotFound, "revision %s has no endpoint %q", rev, opts.Endpoint).WithHint("see the endpoints with 'rukh policy show'")
		}
		found, err := ix.SearchTools(opts.Endpoint, opts.Search, opts.Limit)
		if err != nil {
			return err
		}
		for _, f := range found {
			title, description := policy.ToolSummary(f.Body)
			hits = append(hits, searchHit{Name: f.Name, Command: f.Tool.Command, Title: title, Description: description, Score: math.Round(f.Score*1000) / 1000})
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !published {
		return kernel.Errorf(kernel.CodeNotFound, "nothing is published yet").WithHint("run 'rukh publish'")
	}
	if opts.JSON {
		if hits == nil {
			hits = []searchHit{}
		}
		return printJSON(a.stdout, map[string]any{"revision": rev, "endpoint": opts.Endpoint, "query": opts.Search, "tools": hits})
	}
	fmt.Fprintf(a.stdout, "revision %s, endpoint %s: %d tool(s) for %q\n", rev, opts.Endpoint, len(hits), opts.Search)
	if len(hits) == 0 {
		fmt.Fprintln(a.stdout, "no tool matches: try other words, fewer of them, or the words of a command's path")
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	for i, h := range hits {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%.3f\t%s\n", i+1, h.Name, h.Command, h.Score, cmp.Or(h.Title, h.Description))
	}
	return tw.Flush()
}
