package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/rukh-dev/rukh/kernel"
)

// The home holds the programs rukh runs, so whoever can write it can run
// code as the owner. Before any operation the home, the store file and the
// releases directory must belong to the user running rukh and be writable
// by nobody else, and the store file and releases directory must not be
// symbolic links: rukh never follows a link out of its home. The settings
// key file, when there is one, must also be readable by nobody else.

// CheckHome reports whether the home is safe to use (what every operation
// checks first), for `rukh doctor`.
func (s *Store) CheckHome() error {
	s.safe.Store(false)
	return s.checkHome()
}

// checkHome verifies the home before an operation. A home that does not
// exist yet passes: rukh creates it private.
func (s *Store) checkHome() error {
	if s.safe.Load() {
		return nil
	}
	fi, err := os.Stat(s.home)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return s.statError(s.home, err)
	}
	if !fi.IsDir() {
		return kernel.Errorf(kernel.CodeInvalid, "the rukh home is not a directory").AtPath(s.home).
			WithHint("point RUKH_HOME at a directory")
	}
	if err := s.checkOwned(s.home, fi, "the rukh home", "700"); err != nil {
		return err
	}
	for _, f := range []struct {
		path, what, mode string
		dir              bool
	}{
		{s.path, "the store file", "600", false},
		{s.ReleasesDir(), "the releases directory", "700", true},
		{s.DevReleasesDir(), "the development releases directory", "700", true},
	} {
		fi, err := os.Lstat(f.path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return s.statError(f.path, err)
		}
		if err := s.checkEntry(f.path, fi, f.what, f.mode, f.dir); err != nil {
			return err
		}
	}
	if err := s.CheckSettingsKeyFile(); err != nil {
		return err
	}
	s.safe.Store(true)
	return nil
}

// SettingsKeyPath is the home's settings key file (SettingsKeyName).
func (s *Store) SettingsKeyPath() string { return filepath.Join(s.home, SettingsKeyName) }

// CheckSettingsKeyFile refuses a settings key file in the home that is a
// link, not a regular file, another user's, or readable or writable by
// anyone else; a missing one passes. Every operation checks it with the
// home; whoever reads the key checks it again, as its mode may have
// changed since.
func (s *Store) CheckSettingsKeyFile() error {
	path := s.SettingsKeyPath()
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return s.statError(path, err)
	}
	const what = "the settings key file"
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return s.checkEntry(path, fi, what, "600", false) // names the link and how to replace it
	case !fi.Mode().IsRegular():
		return kernel.Errorf(kernel.CodeInvalid, "%s", what+" is not a regular file").AtPath(path).
			WithHint("move it aside: rukh reads the key that seals sensitive settings from there")
	case fi.Size() == 0:
		return kernel.Errorf(kernel.CodeInvalid, "%s", what+" is empty").AtPath(path).
			WithHint("restore the key the settings were sealed with into it, or, if no sensitive setting is stored, remove it (rm " + shellQuote(path) + ")")
	}
	if err := s.checkOwned(path, fi, what, "600"); err != nil {
		return err
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return kernel.Errorf(kernel.CodeDenied, "%s is readable by other users (mode %04o); whoever reads it can open the sensitive settings", what, perm).
			AtPath(path).
			WithHint(fmt.Sprintf("chmod 600 %s; if another user may have read it, set the sensitive settings again under a new key", shellQuote(path)))
	}
	return nil
}

// checkEntry refuses links, the wrong kind of file, an empty store file and
// unsafe ownership or modes.
func (s *Store) checkEntry(path string, fi fs.FileInfo, what, mode string, dir bool) error {
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, _ := os.Readlink(path)
		hint := fmt.Sprintf("remove the link (rm %s); rukh then creates what it needs inside the home", shellQuote(path))
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		if _, err := os.Stat(target); err == nil {
			hint = fmt.Sprintf("replace the link with what it points to: rm %s && cp -a %s %s", shellQuote(path), shellQuote(target), shellQuote(path))
		}
		return kernel.Errorf(kernel.CodeDenied, "%s is a symbolic link (to %q); rukh never follows a link out of its home", what, target).
			AtPath(path).
			WithHint(hint)
	}
	switch {
	case dir && !fi.IsDir():
		return kernel.Errorf(kernel.CodeInvalid, "%s", what+" is not a directory").AtPath(path).
			WithHint("move it aside: rukh keeps installed releases there")
	case !dir && !fi.Mode().IsRegular():
		return kernel.Errorf(kernel.CodeInvalid, "%s", what+" is not a regular file").AtPath(path).
			WithHint("move it aside; rukh creates a new store on the next install")
	case !dir && fi.Size() == 0:
		return kernel.Errorf(kernel.CodeInvalid, "%s", what+" is empty (0 bytes): it is not a rukh store").AtPath(path).
			WithHint(fmt.Sprintf("if nothing else uses it, remove it (rm %s); rukh creates a new store on the next install", shellQuote(path)))
	}
	return s.checkOwned(path, fi, what, mode)
}

// checkOwned refuses a file or directory owned by another user or writable
// by group or others, naming the exact command that fixes it.
func (s *Store) checkOwned(path string, fi fs.FileInfo, what, mode string) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil // no ownership to check on this platform
	}
	uid := os.Geteuid()
	if int(st.Uid) != uid {
		return kernel.Errorf(kernel.CodeDenied, "%s belongs to %s, not to %s who runs rukh; another user could change what rukh runs", what, userName(int(st.Uid)), userName(uid)).
			AtPath(path).
			WithHint(fmt.Sprintf("if it is yours, take it: chown -R %s %s; otherwise point RUKH_HOME at your own home", userName(uid), shellQuote(path)))
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return kernel.Errorf(kernel.CodeDenied, "%s is writable by other users (mode %04o); another user could change what rukh runs", what, perm).
			AtPath(path).
			WithHint(fmt.Sprintf("chmod %s %s", mode, shellQuote(path)))
	}
	return nil
}

func (s *Store) statError(path string, err error) error {
	if errors.Is(err, fs.ErrPermission) {
		return kernel.Errorf(kernel.CodeUnavailable, "cannot read the rukh home: permission denied").AtPath(path).Wrap(err).
			WithHint("check who owns the rukh home, or point RUKH_HOME at a home you can write")
	}
	return s.internal("cannot read the rukh home", err)
}

func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && u.Username != "" {
		return u.Username
	}
	return strconv.Itoa(uid)
}

// shellQuote quotes a path for a hint a person may paste into a shell.
func shellQuote(p string) string {
	if p == "" {
		return "''"
	}
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '/' || r == '.' || r == '_' || r == '-' || r == '+' || r == ':' || r == '@') {
			return "'" + replaceQuote(p) + "'"
		}
	}
	return p
}

func replaceQuote(p string) string {
	out := make([]byte, 0, len(p))
	for i := 0; i < len(p); i++ {
		if p[i] == '\'' {
			out = append(out, `'\''`...)
			continue
		}
		out = append(out, p[i])
	}
	return string(out)
}
