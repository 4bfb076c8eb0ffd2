package commands

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rukh-dev/rukh/serve"
	"github.com/rukh-dev/rukh/store"
	"github.com/urfave/cli/v3"
)

// taskView is a task as the owner verbs show it. A working task has no
// expiresAt: it is kept until ttlMs after it ends.
type taskView struct {
	store.Task
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
}

func viewTask(t store.Task) taskView { return taskView{Task: t, ExpiresAt: t.ExpiresAt()} }

func (a *app) tasksCmd() *cli.Command {
	return &cli.Command{
		Name:  "tasks",
		Usage: "list the background tasks of served calls (running, and ended within their ttl); show or cancel one",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "endpoint", Usage: "only this endpoint's tasks"},
			jsonFlag(),
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			if err := noArgs(c); err != nil {
				return err
			}
			if _, err := a.h.Store.RecoverTasks(""); err != nil {
				return err
			}
			ts, err := a.h.Store.Tasks(c.String("endpoint"))
			if err != nil {
				return err
			}
			views := make([]taskView, 0, len(ts))
			for _, t := range ts {
				views = append(views, viewTask(t))
			}
			if c.Bool("json") {
				return printJSON(a.stdout, map[string]any{"tasks": views})
			}
			if len(ts) == 0 {
				fmt.Fprintln(a.stdout, "no tasks")
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTATE\tENDPOINT\tAGENT\tTOOL\tCOMMAND\tCREATED\tSTATUS")
			for _, t := range ts {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, taskState(t), t.Endpoint, dash(t.Agent), t.Tool, t.Command,
					t.CreatedAt.UTC().Format(time.RFC3339), dash(oneLine(t.StatusMessage)))
			}
			return tw.Flush()
		},
		Commands: []*cli.Command{
			{
				Name:      "show",
				Usage:     "show one task: its state, status message, owner process, outcome and result",
				ArgsUsage: "ID",
				Flags:     []cli.Flag{jsonFlag()},
				Action: func(ctx context.Context, c *cli.Command) error {
					id, err := oneName(c, "tasks show")
					if err != nil {
						return err
					}
					// Task records the task cancelled if its process is gone.
					t, err := a.h.Store.Task(id)
					if err != nil {
						return err
					}
					if c.Bool("json") {
						return printJSON(a.stdout, viewTask(t))
					}
					a.printTask(t)
					return nil
				},
			},
			{
				Name:      "cancel",
				Usage:     "stop a running task, whichever process runs it (it notices within a second)",
				ArgsUsage: "ID",
				Flags:     []cli.Flag{jsonFlag()},
				Action: func(ctx context.Context, c *cli.Command) error {
					id, err := oneName(c, "tasks cancel")
					if err != nil {
						return err
					}
					t, err := a.h.Store.RequestTaskCancel(id)
					if err != nil {
						return err
					}
					if !t.Final() {
						// The owner notices the flag on its next look (tasks.PollInterval).
						t, _ = serve.AwaitFinal(ctx, a.h.Store, t, 5*time.Second) // a failed read: what it read before
					}
					if c.Bool("json") {
						return printJSON(a.stdout, viewTask(t))
					}
					switch {
					case t.State == store.TaskCancelled:
						fmt.Fprintf(a.stdout, "cancelled task %s\n", id)
					case t.Final():
						fmt.Fprintf(a.stdout, "task %s had already ended: %s\n", id, t.State)
					default:
						fmt.Fprintf(a.stdout, "asked task %s to stop; its process (pid %d) has not recorded it yet: 'rukh tasks show %s' tells\n", id, t.Owner.PID, id)
					}
					return nil
				},
			},
		},
	}
}

func taskState(t store.Task) string {
	if t.State == store.TaskWorking && t.CancelRequested {
		return "working (cancel requested)"
	}
	return t.State
}

func (a *app) printTask(t store.Task) {
	w := a.stdout
	fmt.Fprintf(w, "task       %s\n", t.ID)
	fmt.Fprintf(w, "state      %s\n", taskState(t))
	fmt.Fprintf(w, "endpoint   %s\n", t.Endpoint)
	fmt.Fprintf(w, "agent      %s\n", dash(t.Agent))
	fmt.Fprintf(w, "tool       %s (%s)\n", t.Tool, t.Command)
	fmt.Fprintf(w, "created    %s\n", t.CreatedAt.UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "updated    %s\n", t.UpdatedAt.UTC().Format(time.RFC3339))
	if t.Final() {
		if !t.EndedAt.IsZero() {
			fmt.Fprintf(w, "ended      %s\n", t.EndedAt.UTC().Format(time.RFC3339))
		}
		fmt.Fprintf(w, "expires    %s\n", t.ExpiresAt().UTC().Format(time.RFC3339))
	} else {
		fmt.Fprintf(w, "expires    %s after it ends\n", time.Duration(t.TTLMs)*time.Millisecond)
	}
	fmt.Fprintf(w, "process    pid %d, started %s\n", t.Owner.PID, t.Owner.Started.UTC().Format(time.RFC3339))
	if t.StatusMessage != "" {
		fmt.Fprintf(w, "status     %s\n", oneLine(t.StatusMessage))
	}
	if t.Outcome != "" {
		fmt.Fprintf(w, "outcome    %s\n", t.Outcome)
	}
	if t.Reason != "" {
		fmt.Fprintf(w, "reason     %s\n", t.Reason)
	}
	if len(t.CommandResult) > 0 {
		fmt.Fprintf(w, "result     %s\n", t.CommandResult)
	}
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
