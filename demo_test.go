//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDemo runs scripts/demo.sh, the main job end to end, as a new user
// would. The demo checks every step it shows and exits non-zero with
// "demo: FAILED: <reason>" when one is not what it shows.
func TestDemo(t *testing.T) {
	runDemo(t, "scripts/demo.sh")
}

// TestDemoScale runs scripts/demo-scale.sh: a local etcd, two replicas
// sharing it, and the audit log that records the calls of both.
func TestDemoScale(t *testing.T) {
	runDemo(t, "scripts/demo-scale.sh")
}

// runDemo runs a demo script with bash from a fresh HOME and TMPDIR, and
// with RUKH_HOME and RUKH_STORE pointing at what the demo must never touch
// (it makes its own home and store). Go keeps its caches, so the demo's
// builds are quick after the first.
func runDemo(t *testing.T, script string) {
	if testing.Short() {
		t.Skipf("builds rukh and runs %s end to end; not under -short", script)
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatalf("%s is a bash script; bash is needed", script)
	}
	tmp := removableTempDir(t)
	home := filepath.Join(tmp, "home")
	tmpdir := filepath.Join(tmp, "tmp")
	goConfig := filepath.Join(tmp, "config") // Go's telemetry counters, not the demo's
	for _, d := range []string{home, tmpdir, goConfig} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	userHome := filepath.Join(tmp, "users-rukh-home") // must stay absent
	env := []string{"HOME=" + home, "TMPDIR=" + tmpdir, "XDG_CONFIG_HOME=" + goConfig, "LANG=C.UTF-8", "PATH=" + os.Getenv("PATH"),
		"RUKH_HOME=" + userHome, "RUKH_STORE=etcd://127.0.0.1:9/users-store"}
	env = append(env, goEnv(t)...)

	ctx := t.Context()
	if dl, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-time.Minute)) // time left to report
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// The demo's own group: a stop reaches the servers it started, and its
	// EXIT trap stops them and removes its directory.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // whatever outlived it
	}
	got := out.String()
	if err != nil {
		reason := "(no FAILED line)"
		for _, l := range strings.Split(got, "\n") {
			if strings.Contains(l, ": FAILED: ") {
				reason = l
			}
		}
		t.Fatalf("%s failed (%v): %s\nits last lines:\n%s", script, err, reason, lastLines(got, 60))
	}
	if !strings.Contains(got, "\n== done: ") {
		t.Errorf("%s exited 0 without reaching its last step:\n%s", script, lastLines(got, 60))
	}

	// It cleaned up after itself and left the user's things alone.
	if _, err := os.Stat(userHome); !os.IsNotExist(err) {
		t.Errorf("%s touched RUKH_HOME (%s): %v", script, userHome, err)
	}
	for dir, what := range map[string]string{home: "HOME", tmpdir: "TMPDIR"} {
		if left, _ := os.ReadDir(dir); len(left) > 0 {
			t.Errorf("%s left %s in %s (%s)", script, left[0].Name(), what, dir)
		}
	}
}

// lastLines is the end of s, at most n lines.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
