package home

import (
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/rukh-dev/rukh/kernel"
)

// maxDiagnostics bounds how many invocations' diagnostics the home keeps.
const maxDiagnostics = 256

// DiagnosticRecord is what the home keeps of one served invocation.
type DiagnosticRecord struct {
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

func (h *Home) diagDir() string { return filepath.Join(h.Store.Home(), "diagnostics") }

// SaveDiagnostics keeps what the owner needs to follow up on a served
// invocation an agent reported: its outcome and reason, and the child's
// bounded stdout and stderr, which agents never see. Every invocation that
// did not succeed or wrote anything is kept, the newest maxDiagnostics.
func (h *Home) SaveDiagnostics(endpoint string, inv *kernel.Invocation, res kernel.Result) error {
	rec := DiagnosticRecord{InvocationID: inv.ID, Command: inv.Command.ID, Endpoint: endpoint,
		Outcome: string(res.Outcome), Reason: res.Reason, At: time.Now().UTC()}
	if d, ok := inv.Stdout.(*kernel.Diagnostics); ok {
		rec.Stdout, rec.StdoutDropped = text(d.Bytes()), d.Dropped()
	}
	if d, ok := inv.Stderr.(*kernel.Diagnostics); ok {
		rec.Stderr, rec.StderrDropped = text(d.Bytes()), d.Dropped()
	}
	if QuietDiagnostics(inv, res) {
		return nil // nothing to follow up on, and the common case stays cheap
	}
	id := inv.ID
	dir := h.diagDir()
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

// QuietDiagnostics reports whether SaveDiagnostics keeps nothing of inv: it
// succeeded and its child wrote nothing.
func QuietDiagnostics(inv *kernel.Invocation, res kernel.Result) bool {
	return res.Outcome == kernel.Succeeded && wroteNothing(inv.Stdout) && wroteNothing(inv.Stderr)
}

func wroteNothing(w io.Writer) bool {
	d, ok := w.(*kernel.Diagnostics)
	return !ok || (len(d.Bytes()) == 0 && d.Dropped() == 0)
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

// LoadDiagnostics reads the kept records, oldest first; unreadable ones
// are skipped.
func (h *Home) LoadDiagnostics() ([]DiagnosticRecord, error) {
	entries, err := os.ReadDir(h.diagDir())
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var recs []DiagnosticRecord
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(h.diagDir(), e.Name()))
		if err != nil {
			continue
		}
		var r DiagnosticRecord
		if json.Unmarshal(data, &r) == nil {
			recs = append(recs, r)
		}
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].At.Before(recs[j].At) })
	return recs, nil
}

// text makes captured bytes storable as JSON: the kept head may end inside
// a character, and programs may write binary.
func text(b []byte) string {
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
