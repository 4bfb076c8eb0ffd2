package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// The parts of govulncheck's JSON stream (one message after another) that
// the verdict reads.
type message struct {
	Config *struct {
		ScannerVersion string     `json:"scanner_version"`
		DB             string     `json:"db"`
		DBLastModified *time.Time `json:"db_last_modified"`
		GoVersion      string     `json:"go_version"`
	} `json:"config"`
	OSV *struct {
		ID      string `json:"id"`
		Summary string `json:"summary"`
	} `json:"osv"`
	Finding *struct {
		OSV          string  `json:"osv"`
		FixedVersion string  `json:"fixed_version"`
		Trace        []frame `json:"trace"`
	} `json:"finding"`
}

// frame is one step of a finding's trace: the first is the vulnerable
// module, package or symbol, the last (for a called symbol) our call site.
type frame struct {
	Module   string `json:"module"`
	Version  string `json:"version"`
	Package  string `json:"package"`
	Function string `json:"function"`
	Receiver string `json:"receiver"`
	Position *struct {
		Filename string `json:"filename"`
		Line     int    `json:"line"`
	} `json:"position"`
}

// How close the code comes to a vulnerability.
const (
	required = iota // a module in the build list
	imported        // a package of it imported
	called          // a vulnerable symbol reachable
)

type vuln struct {
	id, summary            string
	module, version, fixed string
	found                  bool // a finding names it, not only an entry
	level                  int
	trace                  []frame // of the first called finding
}

// stdlib says whether the vulnerability is in the Go release itself (its
// library or its go command), which go.mod does not choose.
func (v *vuln) stdlib() bool { return v.module == "stdlib" || v.module == "toolchain" }

type report struct {
	header string
	vulns  []*vuln
}

func readReport(r io.Reader) (*report, error) {
	rep := &report{}
	byID := map[string]*vuln{}
	get := func(id string) *vuln {
		v := byID[id]
		if v == nil {
			v = &vuln{id: id}
			byID[id] = v
			rep.vulns = append(rep.vulns, v)
		}
		return v
	}
	dec := json.NewDecoder(r)
	for {
		var m message
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("reading govulncheck's output: %v", err)
		}
		switch {
		case m.Config != nil:
			c := m.Config
			rep.header = fmt.Sprintf("govulncheck %s, %s, database %s", c.ScannerVersion, c.GoVersion, c.DB)
			if c.DBLastModified != nil {
				rep.header += " (modified " + c.DBLastModified.Format(time.DateOnly) + ")"
			}
		case m.OSV != nil:
			get(m.OSV.ID).summary = m.OSV.Summary
		case m.Finding != nil && len(m.Finding.Trace) > 0:
			f := m.Finding
			v := get(f.OSV)
			top := f.Trace[0]
			v.found = true
			v.module, v.version, v.fixed = top.Module, top.Version, f.FixedVersion
			level := required
			switch {
			case top.Function != "":
				level = called
			case top.Package != "":
				level = imported
			}
			if level == called && v.trace == nil {
				v.trace = f.Trace
			}
			v.level = max(v.level, level)
		}
	}
	if rep.header == "" {
		return nil, errors.New("govulncheck's output has no config message: did it run?")
	}
	slices.SortFunc(rep.vulns, func(a, b *vuln) int { return strings.Compare(a.id, b.id) })
	return rep, nil
}

func (r *report) print(w io.Writer) {
	fmt.Fprintln(w, r.header)
	var inModules, inStdlib, importedOnly, requiredOnly int
	for _, v := range r.vulns {
		switch {
		case !v.found:
			continue
		case v.level == required:
			requiredOnly++
			continue
		case v.level == imported:
			importedOnly++
			continue
		case v.stdlib():
			inStdlib++
		default:
			inModules++
		}
		fixed := "no fixed version"
		if v.fixed != "" {
			fixed = "fixed in " + v.fixed
		}
		fmt.Fprintf(w, "%s in %s@%s, %s: %s\n", v.id, v.module, v.version, fixed, v.summary)
		fmt.Fprintf(w, "    %s\n", callSite(v.trace))
	}
	fmt.Fprintf(w, "reached: %d in modules, %d in the Go standard library; imported, not called: %d; required, not imported: %d\n",
		inModules, inStdlib, importedOnly, requiredOnly)
}

// callSite says which vulnerable symbol the code reaches and from where.
func callSite(trace []frame) string {
	s := symbol(trace[0])
	last := trace[len(trace)-1]
	if len(trace) == 1 || last.Position == nil {
		return s
	}
	return fmt.Sprintf("%s, reached from %s at %s:%d", s, symbol(last), last.Position.Filename, last.Position.Line)
}

func symbol(f frame) string {
	if f.Receiver != "" {
		return f.Package + "." + strings.TrimPrefix(f.Receiver, "*") + "." + f.Function
	}
	return f.Package + "." + f.Function
}

// fails says whether the step fails: a vulnerability the code reaches in a
// module fails it always, one in the Go release when stdlib is set.
func (r *report) fails(stdlib bool) bool {
	for _, v := range r.vulns {
		if v.found && v.level == called && (stdlib || !v.stdlib()) {
			return true
		}
	}
	return false
}
