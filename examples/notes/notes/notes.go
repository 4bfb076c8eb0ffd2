// Package notes is the example.notes extension: add, list, show and delete
// notes kept in $HOME/.rukh-notes/notes.json. It is a complete extension
// written with the rukhext SDK; examples/notes/main.go only calls Main.
//
// Input is already checked by rukh against the manifest (types, bounds,
// defaults), so the handlers read it without re-validating; they fail with
// command_failed only for what the manifest cannot know: a missing note or
// a notes file that cannot be read. It imports rukhext and nothing else
// from Rukh, as any third-party extension would.
package notes

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/rukh-dev/rukh/rukhext"
)

// Main serves one invocation on the rukh channel and exits.
func Main() { NewExtension(HomeStore).Main() }

// NewExtension registers the four commands of the manifest; open is called
// once per invocation to find the store.
func NewExtension(open func() (*Store, error)) *rukhext.Extension {
	h := &handlers{open: open}
	ext := rukhext.New()
	ext.Handle("notes.add", h.add)
	ext.Handle("notes.list", h.list)
	ext.Handle("notes.show", h.show)
	ext.Handle("notes.delete", h.delete)
	return ext
}

type handlers struct {
	open func() (*Store, error)
}

// listItem is a note as notes.list returns it: no body, no timestamp.
type listItem struct {
	ID       int64    `json:"id"`
	Title    string   `json:"title"`
	Priority int64    `json:"priority"`
	Tags     []string `json:"tags"`
}

type listResult struct {
	Notes []listItem `json:"notes"`
	Total int        `json:"total"`
}

// shown is a note as notes.show returns it.
type shown struct {
	ID       int64    `json:"id"`
	Title    string   `json:"title"`
	Body     string   `json:"body"`
	Priority int64    `json:"priority"`
	Tags     []string `json:"tags"`
}

func (h *handlers) add(ctx context.Context, call *rukhext.Call) (rukhext.Result, error) {
	s, err := h.open()
	if err != nil {
		return rukhext.Result{}, err
	}
	id, err := s.Add(ctx, Note{
		Title:    call.String("title"),
		Body:     call.String("body"),
		Priority: call.Int("priority"),
		Tags:     dedupe(call.Strings("tags")),
	})
	if err != nil {
		return rukhext.Result{}, failure("cannot save the note", err)
	}
	return rukhext.Structured(struct {
		ID int64 `json:"id"`
	}{id}), nil
}

func (h *handlers) list(ctx context.Context, call *rukhext.Call) (rukhext.Result, error) {
	s, err := h.open()
	if err != nil {
		return rukhext.Result{}, err
	}
	notes, total, err := s.List(ctx, call.String("tag"), int(call.Int("limit")))
	if err != nil {
		return rukhext.Result{}, failure("cannot read the notes", err)
	}
	res := listResult{Notes: make([]listItem, 0, len(notes)), Total: total}
	members, size := 2, 64
	for _, n := range notes {
		it := listItem{ID: n.ID, Title: n.Title, Priority: n.Priority, Tags: n.Tags}
		// rukh refuses, never truncates, a result over its limits: stop
		// early instead, and let total say how many there are.
		b, _ := json.Marshal(it)
		members += 1 + 4 + len(it.Tags)
		size += len(b) + 1
		if members > listMaxMembers || size > listMaxBytes {
			break
		}
		res.Notes = append(res.Notes, it)
	}
	return rukhext.Structured(res), nil
}

// Result limits of rukh (docs/manifest.md, Limits: 2,048 members plus
// elements and 128 KiB per commandResult), with room for the envelope.
const (
	listMaxMembers = 2000
	listMaxBytes   = 120 << 10
)

func (h *handlers) show(ctx context.Context, call *rukhext.Call) (rukhext.Result, error) {
	s, err := h.open()
	if err != nil {
		return rukhext.Result{}, err
	}
	id := call.Int("id")
	n, err := s.Get(ctx, id)
	if err != nil {
		return rukhext.Result{}, failure("cannot read the notes", err)
	}
	return rukhext.Structured(shown{ID: n.ID, Title: n.Title, Body: n.Body, Priority: n.Priority, Tags: n.Tags}), nil
}

func (h *handlers) delete(ctx context.Context, call *rukhext.Call) (rukhext.Result, error) {
	s, err := h.open()
	if err != nil {
		return rukhext.Result{}, err
	}
	id := call.Int("id")
	if err := s.Delete(ctx, id); err != nil {
		return rukhext.Result{}, failure("cannot delete the note", err)
	}
	return rukhext.Text(fmt.Sprintf("deleted note %d", id)), nil
}

// failure turns a store error into the reason the user or agent sees.
func failure(doing string, err error) error {
	var missing *NotFoundError
	var corrupt *CorruptError
	switch {
	case errors.As(err, &missing), errors.As(err, &corrupt):
		return err
	default:
		return fmt.Errorf("%s: %w", doing, err)
	}
}

// dedupe keeps the first occurrence of each tag, in order.
func dedupe(tags []string) []string {
	out := make([]string, 0, len(tags))
	seen := map[string]bool{}
	for _, t := range tags {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
