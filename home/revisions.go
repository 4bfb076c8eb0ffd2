package home

import (
	"slices"
	"time"

	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
)

// RevisionEntry is one published revision as the owner lists it.
type RevisionEntry struct {
	Revision    string    `json:"revision"`
	Active      bool      `json:"active"`
	CreatedAt   time.Time `json:"createdAt"`
	Parent      string    `json:"parent,omitempty"`
	RollbackOf  string    `json:"rollbackOf,omitempty"`
	Releases    int       `json:"releases"`
	Development bool      `json:"development"` // binds a development release (NAME@dev)
	Note        string    `json:"note,omitempty"`
}

func revisionEntry(r store.Revision, active uint64) RevisionEntry {
	e := RevisionEntry{Revision: r.ID, Active: r.Number == active, CreatedAt: r.CreatedAt, Releases: len(r.Releases), Note: r.Note}
	if r.Parent != 0 {
		e.Parent = store.RevisionID(r.Parent)
	}
	if r.RollbackOf != 0 {
		e.RollbackOf = store.RevisionID(r.RollbackOf)
	}
	return e
}

// RevisionList lists the published revisions, newest first.
func (h *Home) RevisionList() ([]RevisionEntry, error) {
	revs, err := h.Store.Revisions()
	if err != nil {
		return nil, err
	}
	active, err := h.Store.Active()
	if err != nil {
		return nil, err
	}
	entries := []RevisionEntry{}
	for i := len(revs) - 1; i >= 0; i-- {
		e := revisionEntry(revs[i], active)
		e.Development = slices.ContainsFunc(revs[i].Releases, store.IsDevRef)
		entries = append(entries, e)
	}
	return entries, nil
}

// RevisionDetail is what one revision binds: releases and tools per
// endpoint, so an owner can see what a rollback would bring back.
type RevisionDetail struct {
	RevisionEntry
	Bound     []string       `json:"bound"`     // name@version digest
	Endpoints map[string]int `json:"endpoints"` // tools per endpoint
	// DevReleases are the bound development releases (NAME@dev).
	DevReleases []string `json:"developmentReleases"`

	Binding *policy.Binding `json:"-"` // what the revision binds, read back
}

// ShowRevision reads revision ref ("r3") back.
func (h *Home) ShowRevision(ref string) (*RevisionDetail, error) {
	n, err := store.ParseRevisionID(ref)
	if err != nil {
		return nil, err
	}
	rev, err := h.Store.Revision(n)
	if err != nil {
		return nil, err
	}
	b, err := h.RevisionBinding(rev)
	if err != nil {
		return nil, err
	}
	active, err := h.Store.Active()
	if err != nil {
		return nil, err
	}
	d := &RevisionDetail{
		RevisionEntry: revisionEntry(rev, active),
		Bound:         []string{},
		Endpoints:     map[string]int{},
		DevReleases:   []string{},
		Binding:       b,
	}
	for _, r := range b.Releases {
		d.Bound = append(d.Bound, r.Name+"@"+r.Version+" "+r.Digest)
		if r.Development {
			d.DevReleases = append(d.DevReleases, r.Name+"@"+r.Version)
			d.Development = true
		}
	}
	for _, p := range b.Endpoints {
		d.Endpoints[p.Endpoint] = len(p.Tools)
	}
	return d, nil
}
