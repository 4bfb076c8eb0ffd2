//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// home is one fresh RUKH_HOME.
type home struct {
	c    config
	dir  string
	pkgs string // where its packages are generated
	// confine is the confine of the home's template; nil: unconfined.
	confine map[string]any
	// discovery is the endpoint's discovery block; nil: none (direct).
	discovery map[string]any
}

func newHome(c config, name string) (*home, error) {
	h := &home{c: c, dir: filepath.Join(c.dir, name, "home"), pkgs: filepath.Join(c.dir, name, "pkgs")}
	for _, d := range []string{h.dir, h.pkgs} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// env is the environment every rukh process of the bench gets: the home and
// nothing the caller's shell might add (PATH and HOME only).
func (h *home) env() []string {
	return []string{"RUKH_HOME=" + h.dir, "PATH=" + os.Getenv("PATH"), "HOME=" + h.dir, "LANG=C.UTF-8"}
}

// errBusy is exit 4: the store is busy; retry.
var errBusy = errors.New("store busy (exit 4)")

// rukh runs one owner verb and returns its stdout.
func (h *home) rukh(args ...string) (string, error) {
	cmd := exec.Command(h.c.rukh, args...)
	cmd.Env = h.env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 4 {
		return stdout.String(), errBusy
	}
	if err != nil {
		return stdout.String(), fmt.Errorf("rukh %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// rukhRetry retries a verb while the store is busy (parallel writers).
func (h *home) rukhRetry(retries *atomic.Int64, args ...string) error {
	for attempt := 0; ; attempt++ {
		_, err := h.rukh(args...)
		if !errors.Is(err, errBusy) || attempt == 50 {
			return err
		}
		retries.Add(1)
		time.Sleep(time.Duration(attempt+1) * time.Millisecond)
	}
}

// command is one generated command declaration.
type command struct {
	id, path0, path1 string
	params           bool // three realistic params, or none
}

func (cm command) manifest() map[string]any {
	params := []any{}
	if cm.params {
		params = []any{
			map[string]any{"id": "title", "type": "string", "flag": "title", "maxLength": 200, "description": "the item's title"},
			map[string]any{"id": "tags", "type": "list", "items": map[string]any{"type": "string", "maxLength": 32}, "flag": "tag", "maxItems": 16, "description": "a tag (repeat for several)"},
			map[string]any{"id": "priority", "type": "integer", "flag": "priority", "default": 3, "minimum": 1, "maximum": 5, "description": "1 (low) to 5 (urgent)"},
		}
	}
	return map[string]any{
		"id":          cm.id,
		"path":        []string{cm.path0, cm.path1},
		"summary":     "Bench command " + cm.id,
		"description": "A generated command for the Rukh benchmark; it answers ok.",
		"params":      params,
		"execute": map[string]any{
			"program":  "bin/prog",
			"args":     []string{cm.path1},
			"mode":     "managed",
			"lifetime": "foreground",
			"result":   map[string]any{"kind": "text"},
		},
		"machine": map[string]any{"eligible": true, "interaction": "none",
			"requiredFeatures": []any{map[string]any{"id": "command-result", "version": 1}}},
		"hints": map[string]any{"title": "Bench " + cm.id, "readOnly": true, "destructive": false, "idempotent": true, "openWorld": false},
	}
}

// writePackage writes a package directory: its manifest and bin/prog, a
// copy of program (or a tiny never-run script when program is "").
func writePackage(dir, name string, cmds []command, program string) error {
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		return err
	}
	var ms []any
	for _, cm := range cmds {
		ms = append(ms, cm.manifest())
	}
	m := map[string]any{
		"apiVersion":  "rukh.extension/2",
		"name":        name,
		"version":     "1.0.0",
		"publisher":   "bench",
		"description": "Rukh benchmark package " + name,
		"commands":    ms,
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "rukh-extension.json"), b, 0o644); err != nil {
		return err
	}
	var prog []byte
	if program == "" {
		prog = []byte("#!/bin/sh\nexit 2\n")
	} else if prog, err = os.ReadFile(program); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "bin", "prog"), prog, 0o755)
}

// setPolicy publishes the named packages on endpoint local.
func (h *home) setPolicy(packages []string) error { return h.setPolicyNS("bench", packages) }

// setPolicyNS is setPolicy with another endpoint namespace (which renames
// every tool: a new revision with a new projection).
func (h *home) setPolicyNS(namespace string, packages []string) error {
	p := map[string]any{
		"endpoints": map[string]any{
			"local": map[string]any{
				"namespace":  namespace,
				"transports": []string{"stdio", "http"},
				"subject":    "owner",
				"template":   "default",
				"toolNames":  "full",
				"publish":    map[string]any{"commands": []string{}, "packages": packages},
			},
		},
		"templates": map[string]any{
			"default": map[string]any{"timeoutMs": 30000, "maxConcurrent": maxClients, "maxHeld": 2 * maxClients,
				"diagnosticsBytes": 65536, "resultBytes": 131072},
		},
	}
	if h.discovery != nil {
		p["endpoints"].(map[string]any)["local"].(map[string]any)["discovery"] = h.discovery
	}
	if h.confine != nil {
		p["templates"].(map[string]any)["default"].(map[string]any)["confine"] = h.confine
	}
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	f := filepath.Join(h.pkgs, "..", "profile.json")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		return err
	}
	_, err = h.rukh("policy", "set", f)
	return err
}

// smallHome has bench.trivial (one command, trivial.ping, no params, the
// bench/trivial program) and, when built, bench.trivialsdk (trivial.sdk).
type smallHome struct {
	*home
	sdk bool
}

func setupSmall(c config) (*smallHome, error) { return setupSmallHome(c, "small", nil) }

// benchConfine is the confined template of the confined small home: no
// network, its release (the static trivial program needs nothing else) and
// a scratch directory.
var benchConfine = map[string]any{"network": "none", "read": []string{"release"}, "write": []string{"scratch"}}

// benchConfineName says what benchConfine allows, for the report.
const benchConfineName = "network none, read release, write scratch"

// setupConfined is a small home of bench.trivial alone whose template is
// benchConfine.
func setupConfined(c config) (*smallHome, error) { return setupSmallHome(c, "confined", benchConfine) }

func setupSmallHome(c config, name string, confine map[string]any) (*smallHome, error) {
	h, err := newHome(c, name)
	if err != nil {
		return nil, err
	}
	h.confine = confine
	s := &smallHome{home: h, sdk: c.trivialSDK != "" && confine == nil}
	type pkg struct{ name, id, prog string }
	pkgs := []pkg{{"bench.trivial", "trivial.ping", c.trivial}}
	if s.sdk {
		pkgs = append(pkgs, pkg{"bench.trivialsdk", "trivial.sdk", c.trivialSDK})
	}
	var names []string
	for _, p := range pkgs {
		dir := filepath.Join(h.pkgs, p.name)
		path1 := strings.TrimPrefix(p.id, "trivial.")
		if err := writePackage(dir, p.name, []command{{id: p.id, path0: "trivial", path1: path1}}, p.prog); err != nil {
			return nil, err
		}
		if _, err := h.rukh("install", "--allow-unsigned", dir); err != nil {
			return nil, err
		}
		if _, err := h.rukh("activate", p.name); err != nil {
			return nil, err
		}
		names = append(names, p.name)
	}
	if err := h.setPolicy(names); err != nil {
		return nil, err
	}
	if _, err := h.rukh("publish"); err != nil {
		return nil, err
	}
	return s, nil
}

// largeHome has c.packages packages of c.commands commands each, all
// installed, activated and named by the draft profile, but not published
// (benchPublish times that). Package bench.p0000 carries the bench/trivial
// program so its tools can be called; the others carry a tiny script.
type largeHome struct {
	*home
	names []string
}

func setupLarge(c config) (*largeHome, []string, error) {
	h, err := newHome(c, fmt.Sprintf("large-%d", c.packages*c.commands))
	if err != nil {
		return nil, nil, err
	}
	l := &largeHome{home: h}
	t := time.Now()
	dirs := make([]string, c.packages)
	for i := range c.packages {
		name := fmt.Sprintf("bench.p%04d", i)
		var cmds []command
		for j := range c.commands {
			cmds = append(cmds, command{id: fmt.Sprintf("p%04d.c%02d", i, j), path0: fmt.Sprintf("p%04d", i), path1: fmt.Sprintf("c%02d", j), params: true})
		}
		prog := ""
		if i == 0 {
			prog = c.trivial
		}
		dirs[i] = filepath.Join(h.pkgs, name)
		if err := writePackage(dirs[i], name, cmds, prog); err != nil {
			return nil, nil, err
		}
		l.names = append(l.names, name)
	}
	gen := time.Since(t)

	// One install and one activation alone first, for the per-process cost
	// without contention.
	t = time.Now()
	if _, err := h.rukh("install", "--allow-unsigned", dirs[0]); err != nil {
		return nil, nil, err
	}
	oneInstall := time.Since(t)
	t = time.Now()
	if _, err := h.rukh("activate", l.names[0]); err != nil {
		return nil, nil, err
	}
	oneActivate := time.Since(t)
	// Activations name the version: `activate NAME` alone reads every
	// release (benchContext times both forms), which is what made this setup
	// step take minutes.

	var retries atomic.Int64
	t = time.Now()
	if err := parallel(c.jobs, len(dirs)-1, func(i int) error {
		return h.rukhRetry(&retries, "install", "--allow-unsigned", dirs[i+1])
	}); err != nil {
		return nil, nil, err
	}
	installs := time.Since(t)
	t = time.Now()
	if err := parallel(c.jobs, len(dirs)-1, func(i int) error {
		return h.rukhRetry(&retries, "activate", l.names[i+1]+"@1.0.0")
	}); err != nil {
		return nil, nil, err
	}
	activations := time.Since(t)
	t = time.Now()
	if err := h.setPolicy(l.names); err != nil {
		return nil, nil, err
	}
	policy := time.Since(t)

	n := len(dirs) - 1
	notes := []string{
		fmt.Sprintf("large-home setup (untimed for the targets): generate %d packages %s; one install alone %s, one activate alone %s; "+
			"%d more installs with %d jobs %s (%.0f/s), %d activations (NAME@VERSION) %s (%.0f/s), %d busy-store retries; policy set %s",
			len(dirs), gen.Round(time.Millisecond), ms(oneInstall), ms(oneActivate),
			n, c.jobs, installs.Round(time.Millisecond), float64(n)/installs.Seconds(),
			n, activations.Round(time.Millisecond), float64(n)/activations.Seconds(), retries.Load(), ms(policy)),
	}
	return l, notes, nil
}

// parallel runs f(0..n-1) on jobs workers and returns the first error.
func parallel(jobs, n int, f func(i int) error) error {
	var (
		next  atomic.Int64
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	for range max(jobs, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					next.Store(int64(n))
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}
