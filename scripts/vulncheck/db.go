package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/semver"
)

// entry is what the indexes need of an OSV entry.
type entry struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Aliases  []string  `json:"aliases,omitempty"`
	Affected []struct {
		Package struct {
			Name string `json:"name"`
		} `json:"package"`
		Ranges []osvRange `json:"ranges"`
	} `json:"affected"`
}

type osvRange struct {
	Type   string `json:"type"`
	Events []struct {
		Introduced string `json:"introduced,omitempty"`
		Fixed      string `json:"fixed,omitempty"`
	} `json:"events"`
}

type dbMeta struct {
	Modified time.Time `json:"modified"`
}

type moduleMeta struct {
	Path  string       `json:"path"`
	Vulns []moduleVuln `json:"vulns"`
}

type moduleVuln struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Fixed    string    `json:"fixed,omitempty"`
}

type vulnMeta struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Aliases  []string  `json:"aliases,omitempty"`
}

// build writes the database for the OSV entries in osvDir to out, in the
// layout govulncheck's file source reads (index/db.json, index/modules.json,
// index/vulns.json, ID/<id>.json), and returns how many entries it holds.
// The entries are copied as they are; the indexes follow the rules of the
// database's own index builder. modified is the snapshot's time: the
// entries of the module carry none. out must not exist yet: the database
// is written beside it and renamed into place, so an interrupted build
// never leaves a partial one where a cached one is looked for.
func build(osvDir, out string, modified time.Time) (int, error) {
	if _, err := os.Lstat(out); err == nil {
		return 0, fmt.Errorf("%s already exists", out)
	} else if !errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	names, err := filepath.Glob(filepath.Join(osvDir, "*.json"))
	if err != nil {
		return 0, err
	}
	if len(names) == 0 {
		return 0, fmt.Errorf("no OSV entries in %s", osvDir)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return 0, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(out), filepath.Base(out)+".tmp-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	for _, d := range []string{"index", "ID"} {
		if err := os.Mkdir(filepath.Join(tmp, d), 0o755); err != nil {
			return 0, err
		}
	}

	db := dbMeta{Modified: modified}
	modules := map[string]*moduleMeta{}
	var vulns []vulnMeta
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			return 0, err
		}
		var e entry
		if err := json.Unmarshal(b, &e); err != nil {
			return 0, fmt.Errorf("%s: %v", name, err)
		}
		// govulncheck fetches an entry by its id: the file must carry it.
		if e.ID == "" || filepath.Base(name) != e.ID+".json" {
			return 0, fmt.Errorf("%s: entry id %q does not match the file name", name, e.ID)
		}
		if err := os.WriteFile(filepath.Join(tmp, "ID", e.ID+".json"), b, 0o644); err != nil {
			return 0, err
		}
		if e.Modified.After(db.Modified) {
			db.Modified = e.Modified
		}
		vulns = append(vulns, vulnMeta{ID: e.ID, Modified: e.Modified, Aliases: e.Aliases})
		for _, a := range e.Affected {
			m := modules[a.Package.Name]
			if m == nil {
				m = &moduleMeta{Path: a.Package.Name, Vulns: []moduleVuln{}}
				modules[a.Package.Name] = m
			}
			m.Vulns = append(m.Vulns, moduleVuln{ID: e.ID, Modified: e.Modified, Fixed: latestFix(a.Ranges)})
		}
	}

	mods := make([]*moduleMeta, 0, len(modules))
	for _, m := range modules {
		slices.SortStableFunc(m.Vulns, func(a, b moduleVuln) int { return strings.Compare(a.ID, b.ID) })
		mods = append(mods, m)
	}
	slices.SortFunc(mods, func(a, b *moduleMeta) int { return strings.Compare(a.Path, b.Path) })
	slices.SortFunc(vulns, func(a, b vulnMeta) int { return strings.Compare(a.ID, b.ID) })
	for name, v := range map[string]any{"db": db, "modules": mods, "vulns": vulns} {
		if err := writeJSON(filepath.Join(tmp, "index", name+".json"), v); err != nil {
			return 0, err
		}
	}
	if err := os.Rename(tmp, out); err != nil {
		return 0, err
	}
	return len(vulns), nil
}

func writeJSON(name string, v any) error {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		return err
	}
	return os.WriteFile(name, buf.Bytes(), 0o644)
}

// latestFix is the version from which no SEMVER range is vulnerable any
// more, or "" when there is none (never fixed, or introduced again after
// its last fix). govulncheck skips an entry for a module at or above this
// version without reading it, so it must never be too low: the rule is
// govulncheck's own for a directory of bare entries.
func latestFix(ranges []osvRange) string {
	var latest string
	for _, r := range ranges {
		if r.Type != "SEMVER" {
			continue
		}
		for _, e := range r.Events {
			if e.Fixed != "" && less(latest, e.Fixed) {
				latest = e.Fixed
			}
		}
		for _, e := range r.Events {
			if e.Introduced != "" && e.Introduced != "0" && less(latest, e.Introduced) {
				latest = ""
				break
			}
		}
	}
	return latest
}

// less compares OSV versions, written without the "v" of Go's module
// versions (and "go" for the toolchain's own).
func less(a, b string) bool {
	return semver.Compare(canonical(a), canonical(b)) < 0
}

func canonical(v string) string {
	v = strings.TrimPrefix(strings.TrimPrefix(v, "v"), "go")
	return "v" + v
}
