package commands

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
	"github.com/urfave/cli/v3"
)

type statusReport struct {
	Active      string         `json:"active,omitempty"`
	PublishedAt time.Time      `json:"publishedAt,omitzero"`
	Pending     []string       `json:"pending"`
	DraftError  string         `json:"draftError,omitempty"`
	Tools       map[string]int `json:"tools,omitempty"`
	// Development lists the development releases (NAME@dev) the active
	// revision binds: live on the CLI and on endpoint dev only.
	Development []string `json:"development,omitempty"`
	// Damaged lists the releases of the active revision whose installed
	// copy was changed since it was installed: none of their calls run.
	Damaged []statusDamaged `json:"damaged,omitempty"`
	// Untrusted lists the releases of the active revision whose signing
	// key is no longer trusted: none of their calls run.
	Untrusted []statusDamaged `json:"untrusted,omitempty"`
}

type statusDamaged struct {
	Release string `json:"release"`
	Problem string `json:"problem"`
	Hint    string `json:"hint"`
}

func (a *app) statusCmd() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show the active revision and what publishing the draft would change",
		Flags: []cli.Flag{jsonFlag()},
		Action: func(ctx context.Context, c *cli.Command) error {
			if err := noArgs(c); err != nil {
				return err
			}
			rep, err := a.status()
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(a.stdout, rep)
			}
			if rep.Active == "" {
				fmt.Fprintln(a.stdout, "active revision: none (nothing published yet)")
			} else {
				fmt.Fprintf(a.stdout, "active revision: %s (published %s)\n", rep.Active, rep.PublishedAt.Format(time.RFC3339))
				eps := make([]string, 0, len(rep.Tools))
				for e := range rep.Tools {
					eps = append(eps, e)
				}
				sort.Strings(eps)
				for _, e := range eps {
					fmt.Fprintf(a.stdout, "  endpoint %s: %d tool(s)\n", e, rep.Tools[e])
				}
				for _, r := range rep.Development {
					fmt.Fprintf(a.stdout, "  %s (dev): development release, published only on endpoint %s\n", r, policy.DevEndpoint)
				}
				for _, d := range rep.Damaged {
					fmt.Fprintf(a.stdout, "  %s: damaged, its calls are refused: %s\n    hint: %s\n", d.Release, printable(d.Problem), printable(d.Hint))
				}
				for _, d := range rep.Untrusted {
					fmt.Fprintf(a.stdout, "  %s: %s, its calls are refused\n    hint: %s\n", d.Release, printable(d.Problem), printable(d.Hint))
				}
			}
			if len(rep.Pending) == 0 {
				fmt.Fprintln(a.stdout, "draft: no changes to publish")
			} else {
				fmt.Fprintln(a.stdout, "draft changes (run 'rukh publish' to make them live):")
				for _, p := range rep.Pending {
					fmt.Fprintf(a.stdout, "  %s\n", p)
				}
			}
			if rep.DraftError != "" {
				fmt.Fprintf(a.stdout, "draft would not publish: %s\n", rep.DraftError)
			}
			return nil
		},
	}
}

func (a *app) status() (*statusReport, error) {
	b, rev, err := a.h.ActiveBinding()
	if err != nil {
		return nil, err
	}
	rep := &statusReport{Pending: []string{}}
	live := map[string]string{}
	liveDigest := map[string]string{}
	var liveProfile []byte
	if b != nil {
		rep.Active, rep.PublishedAt = rev.ID, rev.CreatedAt
		rep.Tools = map[string]int{}
		for i := range b.Endpoints {
			rep.Tools[b.Endpoints[i].Endpoint] = len(policy.ServedToolNames(b, &b.Endpoints[i]))
		}
		for _, br := range b.Releases {
			live[br.Name] = br.Version
			liveDigest[br.Name] = br.Digest
			if br.Development {
				rep.Development = append(rep.Development, br.Name+"@"+br.Version)
			}
			if err := a.h.CopyProblem(br.Name, br.Version, br.Digest, br.Development); err != nil {
				rep.Damaged = append(rep.Damaged, statusDamaged{Release: br.Name + "@" + br.Version, Problem: home.ProblemDetail(err), Hint: kernel.ErrorHint(err)})
			}
		}
		liveProfile = b.Profile
		untrusted, err := a.h.UntrustedActive()
		if err != nil {
			return nil, err
		}
		for _, r := range untrusted {
			rep.Untrusted = append(rep.Untrusted, statusDamaged{Release: r.Name + "@" + r.Version,
				Problem: fmt.Sprintf("signed by key %s (%s), no longer trusted", r.Signer, r.KeyID), Hint: home.UntrustedHint(r.Name)})
		}
	}
	d, err := a.h.Store.Draft()
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for n := range live {
		names[n] = true
	}
	for n := range d.Active {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		was, is := live[n], d.Active[n]
		mark := yesno(is == store.DevVersion, " (dev)", "")
		switch {
		case was == is && is == store.DevVersion:
			// a development release changes in place: compare the copies
			if r, err := a.h.Store.Release(n, is); err == nil && r.Digest != liveDigest[n] {
				rep.Pending = append(rep.Pending, fmt.Sprintf("replace %s@%s (dev) %s with %s", n, is, liveDigest[n], r.Digest))
			}
		case was == is:
		case was == "":
			rep.Pending = append(rep.Pending, fmt.Sprintf("activate %s@%s%s", n, is, mark))
		case is == "":
			rep.Pending = append(rep.Pending, fmt.Sprintf("deactivate %s@%s%s", n, was, yesno(was == store.DevVersion, " (dev)", "")))
		default:
			rep.Pending = append(rep.Pending, fmt.Sprintf("switch %s from %s to %s%s", n, was, is, mark))
		}
	}
	prof, err := a.draftProfile()
	if err != nil {
		rep.DraftError = err.Error()
		return rep, nil
	}
	if !bytes.Equal(prof.Canonical(), liveProfile) && (b != nil || d.Profile != nil) {
		rep.Pending = append(rep.Pending, "profile changed (every tool gets a new name)")
	}
	if b == nil && len(rep.Pending) == 0 {
		rep.Pending = append(rep.Pending, "first publication")
	}
	if in, err := a.h.DraftInput("draft"); err != nil {
		rep.DraftError = err.Error()
	} else if _, _, err := policy.Build(in); err != nil {
		rep.DraftError = err.Error()
		if h := kernel.ErrorHint(err); h != "" {
			rep.DraftError += " (" + h + ")"
		}
	}
	return rep, nil
}
