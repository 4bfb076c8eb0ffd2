package mcpclients

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/rukh-dev/rukh/kernel"
)

// What Write did to the file.
const (
	Created   = "created"
	Added     = "added"
	Replaced  = "replaced"
	Unchanged = "unchanged"
)

// Change is what writing an entry did to a client's config file.
type Change struct {
	Path    string `json:"path"`
	Action  string `json:"action"` // Created, Added, Replaced or Unchanged
	Backup  string `json:"backup,omitempty"`
	Through string `json:"symlink,omitempty"` // the symbolic link written through
}

// Write puts the entry into the client's config file in place: every other
// member and server is kept as it was, an entry of the same key is
// replaced, the old file is copied aside first (named for now), and the
// new one is renamed over it so a reader never sees half a file.
func Write(file string, e *Entry, now time.Time) (*Change, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, kernel.Errorf(kernel.CodeInvalid, "cannot resolve %s", file).Wrap(err)
	}
	ch := &Change{Path: abs}
	// A config kept as a symbolic link (a dotfiles checkout) stays one:
	// the file it points to is what changes.
	if fi, err := os.Lstat(abs); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, kernel.Errorf(kernel.CodeInvalid, "the symbolic link leads nowhere rukh can write").AtPath(abs).Wrap(err).
				WithHint("fix the link, or name the file to write with --file")
		}
		ch.Through, ch.Path = abs, target
	}
	path := ch.Path
	refuse := func(msg, hint string, err error) error {
		return kernel.Errorf(kernel.CodeInvalid, "%s", msg+"; nothing was changed").AtPath(path).WithHint(hint).Wrap(err)
	}
	var old []byte
	mode := fs.FileMode(0o600) // a client's config may hold other servers' tokens
	fi, err := os.Stat(path)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		return nil, refuse("not a regular file", "name the file to write with --file", nil)
	case err == nil:
		mode = fi.Mode().Perm()
		if old, err = os.ReadFile(path); err != nil {
			return nil, refuse("cannot read it", "", err)
		}
	case errors.Is(err, fs.ErrNotExist):
		old = nil
	default:
		return nil, refuse("cannot read it", "", err)
	}
	out, action, err := merge(old, e)
	if err != nil {
		return nil, refuse(err.Error(), configHint(old), nil)
	}
	ch.Action = action
	if action == Unchanged {
		return ch, nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, refuse("cannot create its directory", "", err)
	}
	if old != nil {
		if ch.Backup, err = backupFile(path, old, now); err != nil {
			return nil, refuse("cannot save a backup of it", "", err)
		}
	}
	if err := replaceFile(path, old, out, mode); err != nil {
		if ch.Backup != "" {
			os.Remove(ch.Backup)
		}
		return nil, err
	}
	return ch, nil
}

// configHint says how to go on when a config file cannot be merged.
func configHint(old []byte) string {
	by := "add the entry by hand: the same command without --write prints it"
	if hasJSONComments(old) {
		return "the file has comments, which rukh will not rewrite away; " + by + ", or remove the comments and run again"
	}
	return "fix the file (or move it aside) and run again, or " + by
}

// backupFile copies the old content next to path, under a name no other
// backup has, readable by the owner only.
func backupFile(path string, old []byte, now time.Time) (string, error) {
	base := path + ".bak-" + now.Format("20060102150405")
	for i := 0; ; i++ {
		name := base
		if i > 0 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) && i < 100 {
			continue
		}
		if err != nil {
			return "", err
		}
		if err := writeSynced(f, old); err != nil {
			os.Remove(name)
			return "", err
		}
		return name, nil
	}
}

// writeSynced writes data to f, syncs and closes it.
func writeSynced(f *os.File, data []byte) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// replaceFile writes data to a temporary file beside path and renames it
// over path, unless path no longer holds old (the client wrote it
// meanwhile: its change is kept, and nothing of rukh's is).
func replaceFile(path string, old, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	fail := func(err error) error {
		return kernel.Errorf(kernel.CodeInvalid, "cannot write it; nothing was changed").AtPath(path).Wrap(err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".rukh-*")
	if err != nil {
		return fail(err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // gone after the rename; cleans up on every failure
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return fail(err)
	}
	if err := writeSynced(f, data); err != nil {
		return fail(err)
	}
	now, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fail(err)
	}
	if (err == nil) != (old != nil) || !bytes.Equal(now, old) {
		return kernel.Errorf(kernel.CodeConflict, "the file changed while rukh was writing it; nothing was changed").
			AtPath(path).
			WithHint("run the command again (quit the client first if it keeps rewriting the file)")
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync() // the rename survives a crash
		d.Close()
	}
	return nil
}
