package notes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/go-json-experiment/json"
)

// fileFormat names the layout of notes.json; a file with another format is
// refused rather than rewritten.
const fileFormat = "rukh-notes/1"

// Note is one stored note.
type Note struct {
	ID       int64     `json:"id"`
	Title    string    `json:"title"`
	Body     string    `json:"body"`
	Priority int64     `json:"priority"`
	Tags     []string  `json:"tags"`
	Created  time.Time `json:"created"`
}

type file struct {
	Format string `json:"format"`
	// NextID is never lowered, so a deleted note's id is never reused.
	NextID int64  `json:"nextId"`
	Notes  []Note `json:"notes"`
}

// Store is the notes file in one directory, shared by concurrent
// invocations: every change takes an exclusive lock on a lock file, reads,
// modifies, writes a temporary file and renames it over notes.json.
type Store struct {
	dir string
}

// NewStore returns the store kept in dir (created on first write).
func NewStore(dir string) *Store { return &Store{dir: dir} }

// HomeStore returns the store in $HOME/.rukh-notes, the only place an
// extension can rely on: rukh passes just PATH, HOME and LANG.
func HomeStore() (*Store, error) {
	home := os.Getenv("HOME")
	if home == "" || !filepath.IsAbs(home) {
		return nil, errors.New("HOME is not set to an absolute path; notes live in $HOME/.rukh-notes")
	}
	return NewStore(filepath.Join(home, ".rukh-notes")), nil
}

// Path is the notes file.
func (s *Store) Path() string { return filepath.Join(s.dir, "notes.json") }

// NotFoundError is a note id that is not in the store.
type NotFoundError struct{ ID int64 }

func (e *NotFoundError) Error() string { return fmt.Sprintf("no note with id %d", e.ID) }

// CorruptError is a notes file that cannot be read back.
type CorruptError struct {
	Path string
	Err  error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("the notes file %s is corrupted (%v); repair or move it away", e.Path, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// Add stores a new note and returns its id.
func (s *Store) Add(ctx context.Context, n Note) (int64, error) {
	var id int64
	err := s.update(ctx, func(f *file) error {
		n.ID = f.NextID
		f.NextID++
		if n.Tags == nil {
			n.Tags = []string{}
		}
		if n.Created.IsZero() {
			n.Created = time.Now().UTC().Truncate(time.Second)
		}
		f.Notes = append(f.Notes, n)
		id = n.ID
		return nil
	})
	return id, err
}

// List returns the notes carrying tag (all notes when tag is ""), newest
// first, at most limit of them (no limit when limit <= 0), and how many
// matched in all.
func (s *Store) List(ctx context.Context, tag string, limit int) ([]Note, int, error) {
	f, err := s.read(ctx)
	if err != nil {
		return nil, 0, err
	}
	var out []Note
	for i := len(f.Notes) - 1; i >= 0; i-- {
		if tag == "" || slices.Contains(f.Notes[i].Tags, tag) {
			out = append(out, f.Notes[i])
		}
	}
	total := len(out)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, total, nil
}

// Get returns one note.
func (s *Store) Get(ctx context.Context, id int64) (Note, error) {
	f, err := s.read(ctx)
	if err != nil {
		return Note{}, err
	}
	for _, n := range f.Notes {
		if n.ID == id {
			return n, nil
		}
	}
	return Note{}, &NotFoundError{ID: id}
}

// Delete removes one note.
func (s *Store) Delete(ctx context.Context, id int64) error {
	return s.update(ctx, func(f *file) error {
		i := slices.IndexFunc(f.Notes, func(n Note) bool { return n.ID == id })
		if i < 0 {
			return &NotFoundError{ID: id}
		}
		f.Notes = slices.Delete(f.Notes, i, i+1)
		return nil
	})
}

func (s *Store) read(ctx context.Context) (*file, error) {
	if _, err := os.Stat(s.dir); errors.Is(err, os.ErrNotExist) {
		return emptyFile(), nil // nothing written yet; do not create the directory to read
	}
	unlock, err := s.lock(ctx, false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return s.load()
}

func (s *Store) update(ctx context.Context, change func(*file) error) error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	unlock, err := s.lock(ctx, true)
	if err != nil {
		return err
	}
	defer unlock()
	f, err := s.load()
	if err != nil {
		return err
	}
	if err := change(f); err != nil {
		return err
	}
	return s.save(f)
}

func emptyFile() *file { return &file{Format: fileFormat, NextID: 1, Notes: []Note{}} }

func (s *Store) load() (*file, error) {
	b, err := os.ReadFile(s.Path())
	if errors.Is(err, os.ErrNotExist) {
		return emptyFile(), nil
	}
	if err != nil {
		return nil, err
	}
	f := new(file)
	if err := json.Unmarshal(b, f, json.RejectUnknownMembers(true)); err != nil {
		return nil, &CorruptError{Path: s.Path(), Err: err}
	}
	if err := f.check(); err != nil {
		return nil, &CorruptError{Path: s.Path(), Err: err}
	}
	return f, nil
}

// check refuses a file whose contents would break the ids' promises.
func (f *file) check() error {
	if f.Format != fileFormat {
		return fmt.Errorf("format is %q, want %q", f.Format, fileFormat)
	}
	if f.NextID < 1 {
		return fmt.Errorf("nextId %d is not positive", f.NextID)
	}
	var last int64
	for i, n := range f.Notes {
		if n.ID <= last || n.ID >= f.NextID {
			return fmt.Errorf("note %d has id %d out of order (ids increase and stay below nextId %d)", i, n.ID, f.NextID)
		}
		last = n.ID
		if f.Notes[i].Tags == nil {
			f.Notes[i].Tags = []string{}
		}
	}
	return nil
}

// save writes f to a temporary file in the same directory and renames it
// over notes.json, so a reader sees the old or the new file, never half.
func (s *Store) save(f *file) error {
	b, err := json.Marshal(f, json.Deterministic(true))
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.dir, "notes-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), s.Path()); err != nil {
		return err
	}
	if d, err := os.Open(s.dir); err == nil { // make the rename durable
		d.Sync()
		d.Close()
	}
	return nil
}
