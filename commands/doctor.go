package commands

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rukh-dev/rukh/extpkg"
	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
	"github.com/urfave/cli/v3"
)

// doctorCheck is one line of `rukh doctor`.
type doctorCheck struct {
	Check   string `json:"check"`
	OK      bool   `json:"ok"`
	Problem string `json:"problem,omitempty"`
	Hint    string `json:"hint,omitempty"`
}

type doctorReport struct {
	Home     string        `json:"home"`
	Healthy  bool          `json:"healthy"`
	Problems int           `json:"problems"`
	Checks   []doctorCheck `json:"checks"`
}

func (a *app) doctorCmd() *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "check the home: permissions, the store's consistency, every installed release against its digest",
		Flags: []cli.Flag{jsonFlag()},
		Action: func(ctx context.Context, c *cli.Command) error {
			if err := noArgs(c); err != nil {
				return err
			}
			rep := a.doctor()
			if c.Bool("json") {
				if err := printJSON(a.stdout, rep); err != nil {
					return err
				}
			} else {
				for _, ch := range rep.Checks {
					if ch.OK {
						fmt.Fprintf(a.stdout, "ok    %s\n", ch.Check)
						continue
					}
					fmt.Fprintf(a.stdout, "FAIL  %s: %s\n", ch.Check, printable(ch.Problem))
					if ch.Hint != "" {
						fmt.Fprintf(a.stdout, "      hint: %s\n", printable(ch.Hint))
					}
				}
				if rep.Healthy {
					fmt.Fprintf(a.stdout, "home %s is healthy\n", rep.Home)
				}
			}
			if !rep.Healthy {
				return &exitError{code: ExitFailed, err: kernel.Errorf(kernel.CodeInvalid, "%d problem(s) in home %s", rep.Problems, rep.Home)}
			}
			return nil
		},
	}
}

// doctor runs every check it can: a failed one does not stop the others,
// except that nothing is read from a home that is not safe to read.
func (a *app) doctor() *doctorReport {
	rep := &doctorReport{Home: a.h.Store.Home(), Checks: []doctorCheck{}}
	add := func(check string, err error) bool {
		ch := doctorCheck{Check: check, OK: err == nil}
		if err != nil {
			ch.Problem, ch.Hint = err.Error(), kernel.ErrorHint(err)
			rep.Problems++
		}
		rep.Checks = append(rep.Checks, ch)
		return err == nil
	}
	defer func() { rep.Healthy = rep.Problems == 0 }()

	if !add("home permissions", a.h.Store.CheckHome()) {
		return rep
	}
	// Every bbolt file of the home, not only the store: a damaged one
	// fails whatever reads it.
	if files, err := a.h.Store.HomeFiles(); err != nil {
		add("store files", err)
	} else {
		for _, name := range files {
			add("store file "+name, a.h.Store.CheckFile(name))
		}
	}
	if ok, err := a.h.Store.Exists(); err != nil {
		add("store", err)
		return rep
	} else if !ok {
		add("store (none yet: nothing was installed in this home)", nil)
		return rep
	}
	if err := a.h.Store.Check(); !add("store consistency", err) && errors.Is(err, store.ErrDamaged) {
		return rep // everything else would read the damaged file again
	}
	rels, err := a.h.Store.Releases()
	if err != nil {
		add("release records", err)
		return rep
	}
	known := map[string]bool{} // copy directories the records name
	for _, r := range rels {
		dir := a.h.CopyDir(r.Digest, r.Development)
		known[dir] = true
		what := fmt.Sprintf("release %s@%s", r.Name, r.Version)
		if _, err := os.Lstat(dir); err != nil && a.h.Store.Shared() {
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
		ents, err := os.ReadDir(a.h.CopiesDir(dev))
		if err != nil {
			continue
		}
		for _, e := range ents {
			p := filepath.Join(a.h.CopiesDir(dev), e.Name())
			if known[p] || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			add("copies", kernel.Errorf(kernel.CodeConflict, "%s is not an installed release", p).
				WithHint(fmt.Sprintf("nothing runs it; remove it: chmod -R u+w %s && rm -rf %s", p, p)))
		}
	}
	if n, err := a.h.Store.PurgeCredentials(); err != nil {
		add("agent credentials", err)
	} else {
		add(fmt.Sprintf("agent credentials (%d ended long ago, purged)", n), nil)
	}
	if b, rev, err := a.h.ActiveBinding(); err != nil {
		add("active revision", err)
	} else if b != nil {
		add(fmt.Sprintf("active revision %s reads (%d command(s), %d endpoint(s))", rev.ID, len(b.Commands), len(b.Endpoints)), nil)
	}
	if untrusted, err := a.h.UntrustedActive(); err != nil {
		add("trust of the active releases", err)
	} else {
		for _, r := range untrusted {
			add(fmt.Sprintf("release %s@%s", r.Name, r.Version), kernel.Errorf(kernel.CodeDenied,
				"the active revision binds it, but its signer %s (%s) is no longer trusted: its calls are refused", r.Signer, r.KeyID).
				WithHint(home.UntrustedHint(r.Name)))
		}
	}
	return rep
}
