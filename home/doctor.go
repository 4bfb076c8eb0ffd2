package home

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rukh-dev/rukh/extpkg"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
)

// DoctorCheck is one check of the home, a line of `rukh doctor`.
type DoctorCheck struct {
	Check   string `json:"check"`
	OK      bool   `json:"ok"`
	Problem string `json:"problem,omitempty"`
	Hint    string `json:"hint,omitempty"`
}

// DoctorReport is every check of one home.
type DoctorReport struct {
	Home      string          `json:"home"`
	Healthy   bool            `json:"healthy"`
	Problems  int             `json:"problems"`
	Checks    []DoctorCheck   `json:"checks"`
	Processes ProcessesReport `json:"processes"`
	// Confinement is what this host can enforce of a template's confine.
	Confinement ConfinementReport `json:"confinement"`
}

// ProcessesReport says how the host contains an invocation's processes
// once rukh itself is killed, and what this process swept.
type ProcessesReport struct {
	// Containment is kernel.ContainNamespace ("pid-namespace": each call
	// in its own PID namespace under rukh's init) or kernel.ContainSweep
	// ("recorded-sweep": what a killed rukh leaves running is killed by
	// the next rukh process on the home, from its record).
	Containment string `json:"containment"`
	// NoNamespaces says why there is no PID namespace containment.
	NoNamespaces string      `json:"noNamespaces,omitempty"`
	Swept        SweepReport `json:"swept"`
}

// ConfinementReport says whether this host can enforce confined
// templates, and which templates of the active profile it cannot.
type ConfinementReport struct {
	Available bool   `json:"available"`
	Landlock  int    `json:"landlock"` // the Landlock ABI; 0: none
	Reason    string `json:"reason,omitempty"`
	// Unavailable are the active profile's confined templates this host
	// cannot enforce: their endpoints publish nothing.
	Unavailable []UnavailableTemplate `json:"unavailable,omitempty"`
}

// UnavailableTemplate is a confined template the host cannot enforce.
type UnavailableTemplate struct {
	Template string `json:"template"`
	Reason   string `json:"reason"`
}

// confinementReport is what host can enforce; the profile's templates are
// added by Doctor.
func confinementReport(host kernel.Host) ConfinementReport {
	r := ConfinementReport{Landlock: host.Landlock, Reason: host.Unavailable(&kernel.Confine{})}
	r.Available = r.Reason == ""
	return r
}

// confinementCheck is the doctor line of the confinement report.
func confinementCheck(r ConfinementReport) string {
	if r.Available {
		return fmt.Sprintf("confinement: Landlock ABI %d and namespaces available: confined templates are enforced", r.Landlock)
	}
	return "confinement: unavailable (" + r.Reason + "): a template with confine publishes nothing on this host"
}

// containmentCheck is the doctor line of the processes report.
func containmentCheck(p ProcessesReport) string {
	s := "processes: each call in its own PID namespace under rukh's init: nothing outlives it, even after kill -9"
	if p.Containment != kernel.ContainNamespace {
		s = "processes: recorded sweep after an unclean exit (no PID namespace containment on this host: " + p.NoNamespaces + ")"
	}
	if p.Swept.Records > 0 {
		s += fmt.Sprintf("; swept %d process(es) left by %d killed rukh process(es)", len(p.Swept.Killed), p.Swept.Records)
	}
	if len(p.Swept.Removed) > 0 {
		s += fmt.Sprintf("; removed %d scratch director(ies) and pids cgroup(s) confined calls of killed rukh processes left", len(p.Swept.Removed))
	}
	for _, w := range p.Swept.Warnings {
		s += "; warning: " + w
	}
	return s
}

// Doctor runs every check it can: a failed one does not stop the others,
// except that nothing is read from a home that is not safe to read.
func (h *Home) Doctor() *DoctorReport {
	rep := &DoctorReport{Home: h.Store.Home(), Checks: []DoctorCheck{}}
	add := func(check string, err error) bool {
		ch := DoctorCheck{Check: check, OK: err == nil}
		if err != nil {
			ch.Problem, ch.Hint = err.Error(), kernel.ErrorHint(err)
			rep.Problems++
		}
		rep.Checks = append(rep.Checks, ch)
		return err == nil
	}
	defer func() { rep.Healthy = rep.Problems == 0 }()

	if !add("home permissions", h.Store.CheckHome()) {
		return rep
	}
	h.SweepProcesses()
	host := kernel.ProbeHost()
	rep.Processes = ProcessesReport{Containment: host.Containment, NoNamespaces: host.NoNamespaces, Swept: h.swept}
	add(containmentCheck(rep.Processes), nil)
	rep.Confinement = confinementReport(host)
	add(confinementCheck(rep.Confinement), nil)
	// Every bbolt file of the home, not only the store: a damaged one
	// fails whatever reads it.
	if files, err := h.Store.HomeFiles(); err != nil {
		add("store files", err)
	} else {
		for _, name := range files {
			add("store file "+name, h.Store.CheckFile(name))
		}
	}
	if ok, err := h.Store.Exists(); err != nil {
		add("store", err)
		return rep
	} else if !ok {
		add("store (none yet: nothing was installed in this home)", nil)
		return rep
	}
	if err := h.Store.Check(); !add("store consistency", err) && errors.Is(err, store.ErrDamaged) {
		return rep // everything else would read the damaged file again
	}
	rels, err := h.Store.Releases()
	if err != nil {
		add("release records", err)
		return rep
	}
	known := map[string]bool{} // copy directories the records name
	for _, r := range rels {
		dir := h.CopyDir(r.Digest, r.Development)
		known[dir] = true
		what := fmt.Sprintf("release %s@%s", r.Name, r.Version)
		if _, err := os.Lstat(dir); err != nil && h.Store.Shared() {
			// On a shared store a machine makes its copy on first use.
			add(fmt.Sprintf("%s (no copy on this machine yet: made from the store on first use)", what), nil)
			continue
		}
		if err := extpkg.CheckInstalled(dir, r.Digest); err != nil {
			hint := "install the original package again ('rukh install PATH') to repair it"
			if r.Development {
				hint = "run 'rukh dev PATH' on the package again to replace it"
			}
			add(what, kernel.Errorf(kernel.CodeConflict, "the installed copy was changed or damaged").Wrap(err).WithHint(hint))
			continue
		}
		add(fmt.Sprintf("%s matches %s", what, r.Digest), nil)
	}
	// Copies no record names: left by an older rukh or put there by hand.
	for _, dev := range []bool{false, true} {
		ents, err := os.ReadDir(h.CopiesDir(dev))
		if err != nil {
			continue
		}
		for _, e := range ents {
			p := filepath.Join(h.CopiesDir(dev), e.Name())
			if known[p] || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			add("copies", kernel.Errorf(kernel.CodeConflict, "%s is not an installed release", p).
				WithHint(fmt.Sprintf("nothing runs it; remove it: chmod -R u+w %s && rm -rf %s", p, p)))
		}
	}
	if n, err := h.Store.PurgeCredentials(); err != nil {
		add("agent credentials", err)
	} else {
		add(fmt.Sprintf("agent credentials (%d ended long ago, purged)", n), nil)
	}
	if b, rev, err := h.ActiveBinding(); err != nil {
		add("active revision", err)
	} else if b != nil {
		add(fmt.Sprintf("active revision %s reads (%d command(s), %d endpoint(s))", rev.ID, len(b.Commands), len(b.Endpoints)), nil)
		h.doctorTemplates(rep, host, b.Profile, add)
		h.doctorSettings(b, add)
	} else {
		h.doctorSettings(nil, add)
	}
	if untrusted, err := h.UntrustedActive(); err != nil {
		add("trust of the active releases", err)
	} else {
		for _, r := range untrusted {
			add(fmt.Sprintf("release %s@%s", r.Name, r.Version), kernel.Errorf(kernel.CodeDenied,
				"the active revision binds it, but its signer %s (%s) is no longer trusted: its calls are refused", r.Signer, r.KeyID).
				WithHint(UntrustedHint(r.Name)))
		}
	}
	return rep
}

// doctorTemplates adds a failed check for each confined template of the
// active profile that host cannot enforce.
func (h *Home) doctorTemplates(rep *DoctorReport, host kernel.Host, profile []byte, add func(string, error) bool) {
	prof, err := policy.ParseProfile(profile)
	if err != nil {
		add("active profile", err)
		return
	}
	for _, name := range slices.Sorted(maps.Keys(prof.Templates)) {
		c := prof.Templates[name].Confine
		why := host.Unavailable(c)
		if why == "" {
			continue
		}
		rep.Confinement.Unavailable = append(rep.Confinement.Unavailable, UnavailableTemplate{Template: name, Reason: why})
		add("template "+name, kernel.Errorf(kernel.CodeUnsupported, "unavailable on this host: %s; its endpoints publish none of their commands", why).
			WithHint("give those endpoints a template this host can enforce, or serve them on a host that has what it lacks ("+policy.ConfinementDoc+")"))
	}
}
