package store

import (
	"os"
	"path/filepath"
	"runtime"

	"github.com/rukh-dev/rukh/kernel"
)

// DefaultHome resolves the home on this platform (see HomeFor). A nil env
// reads the process environment.
func DefaultHome(env func(string) string) (string, error) {
	if env == nil {
		env = os.Getenv
	}
	return HomeFor(runtime.GOOS, env)
}

// HomeFor is the home rule for platform goos, from the environment alone
// (HOME is the user's home directory, as on every Unix): $RUKH_HOME, else
// $XDG_DATA_HOME/rukh, else where the platform keeps an application's data
// (macOS: ~/Library/Application Support/rukh, where Finder and backups look;
// Linux, the BSDs and the rest: ~/.local/share/rukh).
func HomeFor(goos string, env func(string) string) (string, error) {
	if h := env("RUKH_HOME"); h != "" {
		abs, err := filepath.Abs(h)
		if err != nil {
			return "", kernel.Errorf(kernel.CodeInvalid, "cannot resolve RUKH_HOME").AtPath(h).Wrap(err)
		}
		return abs, nil
	}
	// The XDG spec says a relative XDG_DATA_HOME is invalid and must be ignored.
	if x := env("XDG_DATA_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "rukh"), nil
	}
	h := env("HOME")
	if h == "" || !filepath.IsAbs(h) {
		return "", kernel.Errorf(kernel.CodeInvalid, "cannot find a home for rukh: RUKH_HOME, XDG_DATA_HOME and HOME are unset").
			WithHint("set RUKH_HOME to a directory rukh may use")
	}
	if goos == "darwin" || goos == "ios" {
		return filepath.Join(h, "Library", "Application Support", "rukh"), nil
	}
	return filepath.Join(h, ".local", "share", "rukh"), nil
}
