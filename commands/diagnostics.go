package commands

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/urfave/cli/v3"
)

// maxDiagnostics bounds how many invocations' diagnostics the home keeps.
const maxDiagnostics = 256

type diagnosticRecord struct {
	InvocationID  string    `json:"invocationId"`
	Command       string    `json:"command"`
	Endpoint      string    `json:"endpoint"`
	Outcome       string    `json:"outcome"`
	Reason        string    `json:"reason,omitempty"`
	At            time.Time `json:"at"`
	Stdout        string    `json:"stdout"`
	StdoutDropped int64     `json:"stdoutDropped,omitempty"`
	Stderr        string    `json:"stderr"`
	StderrDropped int64     `json:"stderrDropped,omitempty"`
}

func (a *app) diagDir() string { return filepath.Join(a.store.Home(), "diagnostics") }

// saveDiagnostics keeps what the owner needs to follow up on a served
// invocation an agent reported: its outcome and reason, and the child's
// bounded stdout and stderr, which agents never see. Every invocation that
// did not succeed or wrote anything is kept, the newest maxDiagnostics.
func (a *app) saveDiagnostics(endpoint string, inv *kernel.Invocation, res kernel.Result) error {
	rec := diagnosticRecord{InvocationID: inv.ID, Command: inv.Command.ID, Endpoint: endpoint,
		Outcome: string(res.Outcome), Reason: res.Reason, At: time.Now().UTC()}
	if d, ok := inv.Stdout.(*kernel.Diagnostics); ok {
		rec.Stdout, rec.StdoutDropped = text(d.Bytes()), d.Dropped()
	}
	if d, ok := inv.Stderr.(*kernel.Diagnostics); ok {
		rec.Stderr, rec.StderrDropped = text(d.Bytes()), d.Dropped()
	}
	if res.Outcome == kernel.Succeeded && rec.Stdout == "" && rec.Stderr == "" && rec.StdoutDropped == 0 && rec.StderrDropped == 0 {
		return nil // nothing to follow up on, and the common case stays cheap
	}
	id := inv.ID
	dir := a.diagDir()
	data, err := json.Marshal(rec)
	if err == nil {
		err = os.MkdirAll(dir, 0o700)
	}
	tmp := filepath.Join(dir, "."+id+".tmp")
	if err == nil {
		if err = os.WriteFile(tmp, data, 0o600); err == nil {
			err = os.Rename(tmp, filepath.Join(dir, id+".json"))
		}
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	pruneDiagnostics(dir)
	return nil
}

func pruneDiagnostics(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) <= maxDiagnostics {
		return
	}
	type file struct {
		name string
		mod  time.Time
	}
	var files []file
	for _, e := range entries {
		if info, err := e.Info(); err == nil && strings.HasSuffix(e.Name(), ".json") {
			files = append(files, file{e.Name(), info.ModTime()})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].mod.Before(files[j].mod) })
	for i := 0; i < len(files)-maxDiagnostics; i++ {
		os.Remove(filepath.Join(dir, files[i].name))
	}
}

func (a *app) loadDiagnostics() ([]diagnosticRecord, error) {
	entries, err := os.ReadDir(a.diagDir())
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var recs []diagnosticRecord
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(a.diagDir(), e.Name()))
		if err != nil {
			continue
		}
		var r diagnosticRecord
		if json.Unmarshal(data, &r) == nil {
			recs = append(recs, r)
		}
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].At.Before(recs[j].At) })
	return recs, nil
}

func (a *app) diagnosticsCmd() *cli.Command {
	return &cli.Command{
		Name:      "diagnostics",
		Usage:     "show what served invocations wrote to stdout and stderr (kept bounded in the home)",
		ArgsUsage: "[INVOCATION]",
		Flags:     []cli.Flag{jsonFlag()},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() > 1 {
				return usageErr("diagnostics takes at most one INVOCATION")
			}
			recs, err := a.loadDiagnostics()
			if err != nil {
				return err
			}
			if id := c.Args().First(); id != "" {
				for _, r := range recs {
					if r.InvocationID == id {
						if c.Bool("json") {
							return printJSON(a.stdout, r)
						}
						fmt.Fprintf(a.stdout, "invocation %s: %s on endpoint %s at %s\n", r.InvocationID, r.Command, r.Endpoint, r.At.Format(time.RFC3339))
						fmt.Fprintf(a.stdout, "outcome: %s%s\n", r.Outcome, withReason(r.Reason))
						fmt.Fprintf(a.stdout, "--- stdout (%d bytes kept, %d dropped)\n%s", len(r.Stdout), r.StdoutDropped, withNewline(r.Stdout))
						fmt.Fprintf(a.stdout, "--- stderr (%d bytes kept, %d dropped)\n%s", len(r.Stderr), r.StderrDropped, withNewline(r.Stderr))
						return nil
					}
				}
				return kernel.Errorf(kernel.CodeNotFound, "no diagnostics for invocation %q", id).
					WithHint("run 'rukh diagnostics' to list the kept invocations")
			}
			if c.Bool("json") {
				if recs == nil {
					recs = []diagnosticRecord{}
				}
				return printJSON(a.stdout, recs)
			}
			if len(recs) == 0 {
				fmt.Fprintln(a.stdout, "no diagnostics kept")
				return nil
			}
			for _, r := range recs {
				fmt.Fprintf(a.stdout, "%s  %s  %s  %s  stdout %d+%d  stderr %d+%d bytes\n", r.At.Format(time.RFC3339), r.InvocationID, r.Command,
					r.Outcome, len(r.Stdout), r.StdoutDropped, len(r.Stderr), r.StderrDropped)
			}
			return nil
		},
	}
}

func withNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// text makes captured bytes storable as JSON: the kept head may end inside
// a character, and programs may write binary.
func text(b []byte) string {
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func withReason(reason string) string {
	if reason == "" {
		return ""
	}
	return " (" + reason + ")"
}
