package commands

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/serve"
	"github.com/urfave/cli/v3"
)

type toolsOptions struct {
	Endpoint string
	JSON     bool
}

func (a *app) toolsCmd() *cli.Command {
	return &cli.Command{
		Name:  "tools",
		Usage: "show the published MCP tools exactly as an endpoint's agents see them",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "endpoint", Value: "local", Usage: "the endpoint whose projection to show"},
			jsonFlag(),
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			if err := noArgs(c); err != nil {
				return err
			}
			return a.runTools(&toolsOptions{Endpoint: c.String("endpoint"), JSON: c.Bool("json")})
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
		return printJSON(a.stdout, out)
	}
	fmt.Fprintf(a.stdout, "revision %s, endpoint %s (namespace %s): %d tool(s)\n", rev.ID, p.Endpoint, p.Namespace, len(p.Tools)+len(jobs))
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
	for _, j := range jobs {
		var w struct {
			Title string `json:"title"`
		}
		_ = json.Unmarshal(j.Wire, &w, json.RejectUnknownMembers(false))
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", j.Name, j.ID, "(job family)", w.Title, "-")
	}
	return tw.Flush()
}
