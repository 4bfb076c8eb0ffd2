package home

import (
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
)

// ReleaseEntry is one installed release as the owner lists it.
type ReleaseEntry struct {
	Name          string `json:"name"`
	Version       string `json:"version"`
	Digest        string `json:"digest"`
	Trust         string `json:"trust"`
	Signer        string `json:"signer,omitempty"`
	AllowUnsigned bool   `json:"allowUnsigned"`
	Draft         bool   `json:"draftActive"`
	Published     bool   `json:"published"`
	Development   bool   `json:"development"` // a `rukh dev` working copy, NAME@dev
	// Damaged: the installed copy was changed since it was installed, so
	// no call of it runs; Problem says what, Hint how to repair it.
	Damaged bool   `json:"damaged"`
	Problem string `json:"problem,omitempty"`
	Hint    string `json:"hint,omitempty"`
}

// ListReleases lists the installed releases: their trust as of now,
// whether the draft activates them, whether the active revision publishes
// them, and whether their copy is damaged.
func (h *Home) ListReleases() ([]ReleaseEntry, error) {
	rels, err := h.Store.Releases()
	if err != nil {
		return nil, err
	}
	d, err := h.Store.Draft()
	if err != nil {
		return nil, err
	}
	b, _, err := h.ActiveBinding()
	if err != nil {
		return nil, err
	}
	trusted, err := h.TrustedKeys()
	if err != nil {
		return nil, err
	}
	published := map[string]bool{}
	if b != nil {
		for _, br := range b.Releases {
			published[store.ReleaseRef(br.Digest, br.Development)] = true
		}
	}
	entries := []ReleaseEntry{}
	for _, r := range rels {
		e := ReleaseEntry{
			Name: r.Name, Version: r.Version, Digest: r.Digest,
			Trust: CurrentTrust(r, trusted), Signer: r.Signer, AllowUnsigned: r.AllowUnsigned,
			Draft: d.Active[r.Name] == r.Version, Published: published[r.Ref()], Development: r.Development,
		}
		if err := h.CopyProblem(r.Name, r.Version, r.Digest, r.Development); err != nil {
			e.Damaged, e.Problem, e.Hint = true, ProblemDetail(err), kernel.ErrorHint(err)
		}
		entries = append(entries, e)
	}
	return entries, nil
}
