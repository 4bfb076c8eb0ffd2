package home

import (
	"bytes"
	"fmt"
	"sort"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
)

// StatusReport is what `rukh status` shows.
type StatusReport struct {
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
	Damaged []StatusProblem `json:"damaged,omitempty"`
	// Untrusted lists the releases of the active revision whose signing
	// key is no longer trusted: none of their calls run.
	Untrusted []StatusProblem `json:"untrusted,omitempty"`
	// MissingSettings are the required settings the active revision's
	// calls lack: those calls are rejected until the owner sets them.
	MissingSettings []MissingSetting `json:"missingSettings,omitempty"`
}

// StatusProblem is a release of the active revision whose calls are refused.
type StatusProblem struct {
	Release string `json:"release"`
	Problem string `json:"problem"`
	Hint    string `json:"hint"`
}

// Status reports the active revision, what is wrong with what it binds,
// and what publishing the draft would change.
func (h *Home) Status() (*StatusReport, error) {
	b, rev, err := h.ActiveBinding()
	if err != nil {
		return nil, err
	}
	rep := &StatusReport{Pending: []string{}}
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
			if err := h.CopyProblem(br.Name, br.Version, br.Digest, br.Development); err != nil {
				rep.Damaged = append(rep.Damaged, StatusProblem{Release: br.Name + "@" + br.Version, Problem: ProblemDetail(err), Hint: kernel.ErrorHint(err)})
			}
		}
		liveProfile = b.Profile
		if rep.MissingSettings, err = h.MissingSettings(b.Releases, endpointNames(b)); err != nil {
			return nil, err
		}
		untrusted, err := h.UntrustedActive()
		if err != nil {
			return nil, err
		}
		for _, r := range untrusted {
			rep.Untrusted = append(rep.Untrusted, StatusProblem{Release: r.Name + "@" + r.Version,
				Problem: fmt.Sprintf("signed by key %s (%s), no longer trusted", r.Signer, r.KeyID), Hint: UntrustedHint(r.Name)})
		}
	}
	d, err := h.Store.Draft()
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
		mark := devMark(is)
		switch {
		case was == is && is == store.DevVersion:
			// a development release changes in place: compare the copies
			if r, err := h.Store.Release(n, is); err == nil && r.Digest != liveDigest[n] {
				rep.Pending = append(rep.Pending, fmt.Sprintf("replace %s@%s (dev) %s with %s", n, is, liveDigest[n], r.Digest))
			}
		case was == is:
		case was == "":
			rep.Pending = append(rep.Pending, fmt.Sprintf("activate %s@%s%s", n, is, mark))
		case is == "":
			rep.Pending = append(rep.Pending, fmt.Sprintf("deactivate %s@%s%s", n, was, devMark(was)))
		default:
			rep.Pending = append(rep.Pending, fmt.Sprintf("switch %s from %s to %s%s", n, was, is, mark))
		}
	}
	prof, err := h.DraftProfile()
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
	if in, err := h.DraftInput("draft"); err != nil {
		rep.DraftError = err.Error()
	} else if _, _, err := policy.Build(in); err != nil {
		rep.DraftError = err.Error()
		if hint := kernel.ErrorHint(err); hint != "" {
			rep.DraftError += " (" + hint + ")"
		}
	}
	return rep, nil
}

// devMark marks a development release's version.
func devMark(version string) string {
	if version == store.DevVersion {
		return " (dev)"
	}
	return ""
}
