package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
)

// TestUnsafeHomeIsRefused sets up each way another user, or a link, could
// change what rukh runs, and expects every operation, read or write, to be
// refused with the command that fixes it, touching nothing.
func TestUnsafeHomeIsRefused(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, s *store.Store)
		code  kernel.Code
		msg   string
		hint  string
	}{
		{"world-writable home", func(t *testing.T, s *store.Store) {
			chmod(t, s.Home(), 0o777)
		}, kernel.CodeDenied, "the rukh home is writable by other users (mode 0777)", "chmod 700 "},
		{"group-writable home", func(t *testing.T, s *store.Store) {
			chmod(t, s.Home(), 0o770)
		}, kernel.CodeDenied, "writable by other users (mode 0770)", "chmod 700 "},
		{"world-writable store file", func(t *testing.T, s *store.Store) {
			chmod(t, s.Path(), 0o666)
		}, kernel.CodeDenied, "the store file is writable by other users (mode 0666)", "chmod 600 "},
		{"world-writable releases", func(t *testing.T, s *store.Store) {
			mkdir(t, s.ReleasesDir(), 0o777)
		}, kernel.CodeDenied, "the releases directory is writable by other users", "chmod 700 "},
		{"releases is a link", func(t *testing.T, s *store.Store) {
			other := t.TempDir()
			if err := os.Symlink(other, s.ReleasesDir()); err != nil {
				t.Fatal(err)
			}
		}, kernel.CodeDenied, "the releases directory is a symbolic link", "cp -a "},
		{"empty store file", func(t *testing.T, s *store.Store) {
			if err := os.Remove(s.Path()); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(s.Path(), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, kernel.CodeInvalid, "the store file is empty (0 bytes): it is not a rukh store", "rm "},
		{"store file is a directory", func(t *testing.T, s *store.Store) {
			if err := os.Remove(s.Path()); err != nil {
				t.Fatal(err)
			}
			mkdir(t, s.Path(), 0o700)
		}, kernel.CodeInvalid, "the store file is not a regular file", "move it aside"},
		{"dangling store link", func(t *testing.T, s *store.Store) {
			if err := os.Remove(s.Path()); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(t.TempDir(), "elsewhere.db"), s.Path()); err != nil {
				t.Fatal(err)
			}
		}, kernel.CodeDenied, "the store file is a symbolic link", "remove the link (rm "},
		{"store link to a real store", func(t *testing.T, s *store.Store) {
			real := filepath.Join(t.TempDir(), "real.db")
			if err := os.Rename(s.Path(), real); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(real, s.Path()); err != nil {
				t.Fatal(err)
			}
		}, kernel.CodeDenied, "never follows a link out of its home", "cp -a "},
		{"group-readable settings key", func(t *testing.T, s *store.Store) {
			writeKey(t, s, 0o640)
		}, kernel.CodeDenied, "the settings key file is readable by other users (mode 0640)", "chmod 600 "},
		{"world-readable settings key", func(t *testing.T, s *store.Store) {
			writeKey(t, s, 0o604)
		}, kernel.CodeDenied, "the settings key file is readable by other users (mode 0604)", "chmod 600 "},
		{"group-writable settings key", func(t *testing.T, s *store.Store) {
			writeKey(t, s, 0o620)
		}, kernel.CodeDenied, "the settings key file is writable by other users", "chmod 600 "},
		{"settings key is a link", func(t *testing.T, s *store.Store) {
			other := filepath.Join(t.TempDir(), "key")
			if err := os.WriteFile(other, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(other, s.SettingsKeyPath()); err != nil {
				t.Fatal(err)
			}
		}, kernel.CodeDenied, "the settings key file is a symbolic link", "cp -a "},
		{"settings key is a directory", func(t *testing.T, s *store.Store) {
			mkdir(t, s.SettingsKeyPath(), 0o700)
		}, kernel.CodeInvalid, "the settings key file is not a regular file", "move it aside"},
		{"empty settings key", func(t *testing.T, s *store.Store) {
			if err := os.WriteFile(s.SettingsKeyPath(), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, kernel.CodeInvalid, "the settings key file is empty", "restore the key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			setup := store.New(home)
			if _, err := setup.Secret(); err != nil { // creates a healthy store
				t.Fatal(err)
			}
			tt.setup(t, setup)
			before := listing(t, home)

			s := store.New(home) // a fresh handle, as a new process has
			ops := map[string]func() error{
				"read":  func() error { _, err := s.Active(); return err },
				"write": func() error { return s.UpdateDraft(func(*store.Draft) error { return nil }) },
				"check": s.Check,
			}
			for op, fn := range ops {
				err := fn()
				wantCode(t, err, tt.code, tt.msg)
				if h := kernel.ErrorHint(err); !strings.Contains(h, tt.hint) {
					t.Errorf("%s: hint %q does not contain %q", op, h, tt.hint)
				}
			}
			if after := listing(t, home); after != before {
				t.Errorf("the refused operations changed the home:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// TestHomeOwnedByAnotherUser needs root to give a home away.
func TestHomeOwnedByAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown")
	}
	home := filepath.Join(t.TempDir(), "home")
	mkdir(t, home, 0o700)
	if err := os.Chown(home, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	_, err := store.New(home).Active()
	wantCode(t, err, kernel.CodeDenied, "belongs to")
	if h := kernel.ErrorHint(err); !strings.Contains(h, "chown -R root ") {
		t.Errorf("hint %q does not name the chown", h)
	}
}

func TestPrivateHomeCreatedFromNothing(t *testing.T) {
	s := fileStore(t)
	if _, err := s.Secret(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(s.Home())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("home mode %04o, want 0700", fi.Mode().Perm())
	}
}

// writeKey writes a settings key into s's home with mode.
func writeKey(t *testing.T, s *store.Store, mode os.FileMode) {
	t.Helper()
	k, err := store.NewSettingsKey()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.SettingsKeyPath(), k.Text(), 0o600); err != nil {
		t.Fatal(err)
	}
	chmod(t, s.SettingsKeyPath(), mode)
}

// A private settings key file passes the home's check.
func TestPrivateSettingsKeyIsAccepted(t *testing.T) {
	s := store.New(filepath.Join(t.TempDir(), "home"))
	if _, err := s.Secret(); err != nil {
		t.Fatal(err)
	}
	writeKey(t, s, 0o600)
	for _, s := range []*store.Store{s, store.New(s.Home())} {
		if err := s.CheckHome(); err != nil {
			t.Fatal(err)
		}
		if err := s.Check(); err != nil {
			t.Fatal(err)
		}
	}
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Mkdir(path, mode); err != nil {
		t.Fatal(err)
	}
	chmod(t, path, mode)
}

// listing is every name, mode and size under dir, to prove nothing changed.
func listing(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %s %d\n", p, fi.Mode(), fi.Size())
		return nil
	})
	return b.String()
}
