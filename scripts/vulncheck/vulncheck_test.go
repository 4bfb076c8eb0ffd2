package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLatestFix(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events string
		want   string
	}{
		{"fixed once", `[{"introduced":"0"},{"fixed":"1.2.3"}]`, "1.2.3"},
		{"never fixed", `[{"introduced":"0"}]`, ""},
		{"two lines fixed", `[{"introduced":"0"},{"fixed":"1.26.9"},{"introduced":"1.27.0-0"},{"fixed":"1.27.2"}]`, "1.27.2"},
		{"introduced again after the last fix", `[{"introduced":"0"},{"fixed":"1.5.0"},{"introduced":"2.0.0"}]`, ""},
		{"pseudo-version fix", `[{"introduced":"0"},{"fixed":"0.58.1-0.20261009181718-2f1f834330b2"}]`, "0.58.1-0.20261009181718-2f1f834330b2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r osvRange
			if err := json.Unmarshal([]byte(`{"type":"SEMVER","events":`+tc.events+`}`), &r); err != nil {
				t.Fatal(err)
			}
			if got := latestFix([]osvRange{r}); got != tc.want {
				t.Errorf("latestFix = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBuild(t *testing.T) {
	src := t.TempDir()
	entries := map[string]string{
		"GO-2026-0002": `{"id":"GO-2026-0002","modified":"2026-03-01T00:00:00Z","affected":[{"package":{"name":"example.com/a"},"ranges":[{"type":"SEMVER","events":[{"introduced":"0"},{"fixed":"1.1.0"}]}]}]}`,
		"GO-2026-0001": `{"id":"GO-2026-0001","modified":"2026-01-01T00:00:00Z","aliases":["CVE-2026-1"],"affected":[{"package":{"name":"example.com/a"},"ranges":[{"type":"SEMVER","events":[{"introduced":"0"}]}]},{"package":{"name":"stdlib"},"ranges":[{"type":"SEMVER","events":[{"introduced":"0"},{"fixed":"1.26.9"}]}]}]}`,
	}
	for id, e := range entries {
		if err := os.WriteFile(filepath.Join(src, id+".json"), []byte(e), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "db")
	n, err := build(src, out, time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
	if err != nil || n != 2 {
		t.Fatalf("build = %d, %v", n, err)
	}
	for name, want := range map[string]string{
		"index/db.json":        `{"modified":"2026-03-01T00:00:00Z"}`,
		"index/modules.json":   `[{"path":"example.com/a","vulns":[{"id":"GO-2026-0001","modified":"2026-01-01T00:00:00Z"},{"id":"GO-2026-0002","modified":"2026-03-01T00:00:00Z","fixed":"1.1.0"}]},{"path":"stdlib","vulns":[{"id":"GO-2026-0001","modified":"2026-01-01T00:00:00Z","fixed":"1.26.9"}]}]`,
		"index/vulns.json":     `[{"id":"GO-2026-0001","modified":"2026-01-01T00:00:00Z","aliases":["CVE-2026-1"]},{"id":"GO-2026-0002","modified":"2026-03-01T00:00:00Z"}]`,
		"ID/GO-2026-0001.json": entries["GO-2026-0001"],
	} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(string(b)); got != want {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
	if _, err := build(src, out, time.Time{}); err == nil {
		t.Error("a second build into an existing database succeeded")
	}
	left, _ := filepath.Glob(out + ".tmp-*")
	if len(left) != 0 {
		t.Errorf("build left %v behind", left)
	}
}

func TestVerdict(t *testing.T) {
	const config = `{"config":{"scanner_version":"v1.9.0","go_version":"go1.26.8","db":"file:///db"}}`
	call := func(id, module string) string {
		return `{"finding":{"osv":"` + id + `","fixed_version":"v1.0.1","trace":[{"module":"` + module + `","version":"v1.0.0","package":"p","function":"F"},{"module":"github.com/rukh-dev/rukh","package":"github.com/rukh-dev/rukh/x","function":"G","position":{"filename":"x/x.go","line":7}}]}}`
	}
	for _, tc := range []struct {
		name               string
		stream             string
		fails, failsStrict bool
		report             string
	}{
		{"clean", config, false, false, "reached: 0 in modules, 0 in the Go standard library"},
		{"module only required", config + `{"osv":{"id":"GO-1","summary":"s"}}{"finding":{"osv":"GO-1","trace":[{"module":"example.com/m","version":"v1.0.0"}]}}`,
			false, false, "required, not imported: 1"},
		{"entry without a finding", config + `{"osv":{"id":"GO-1","summary":"s"}}`, false, false, "required, not imported: 0"},
		{"module called", config + `{"osv":{"id":"GO-1","summary":"bad"}}` + call("GO-1", "example.com/m"),
			true, true, "GO-1 in example.com/m@v1.0.0, fixed in v1.0.1: bad\n    p.F, reached from github.com/rukh-dev/rukh/x.G at x/x.go:7"},
		{"stdlib called", config + call("GO-2", "stdlib"), false, true, "1 in the Go standard library"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := readReport(strings.NewReader(tc.stream))
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			r.print(&b)
			if !strings.Contains(b.String(), tc.report) {
				t.Errorf("report:\n%s\nwants %q", b.String(), tc.report)
			}
			if got := r.fails(false); got != tc.fails {
				t.Errorf("fails(stdlib warns) = %v, want %v", got, tc.fails)
			}
			if got := r.fails(true); got != tc.failsStrict {
				t.Errorf("fails(stdlib fails) = %v, want %v", got, tc.failsStrict)
			}
		})
	}
	if _, err := readReport(strings.NewReader("")); err == nil {
		t.Error("an empty stream read as a report")
	}
}
