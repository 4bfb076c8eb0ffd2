package store_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/store"
)

// The test binary doubles as the helper process: with helperEnv set it runs
// one helper role instead of the tests.
const (
	helperEnv     = "RUKH_STORE_TEST_HELPER"
	helperHomeEnv = "RUKH_STORE_TEST_HOME"
)

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "publish":
		publishForever(os.Getenv(helperHomeEnv))
	case "hold":
		holdUntilStdinCloses(os.Getenv(helperHomeEnv))
	case "hold-ref":
		holdRefForever(os.Getenv(helperHomeEnv))
	}
	fmt.Fprintln(os.Stderr, "unknown helper role")
	os.Exit(2)
}

// helper starts the test binary in a helper role and returns it with its
// stdout, so the parent can wait for a line.
func helper(t *testing.T, role, home string) (*exec.Cmd, *bufio.Reader, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+role, helperHomeEnv+"="+home)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if _, err := cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewReader(out), &stderr
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(3)
}

// bindingHeader starts every crash-test binding; the payload after the first
// newline must hash to Sum.
type bindingHeader struct {
	ID     string `json:"id"`
	Size   int    `json:"size"`
	Sum    string `json:"sha256"`
	Digest int    `json:"digests"`
}

func makeBinding(id string, payload []byte, digests int) []byte {
	sum := sha256.Sum256(payload)
	h, _ := json.Marshal(bindingHeader{ID: id, Size: len(payload), Sum: hex.EncodeToString(sum[:]), Digest: digests})
	return append(append(h, '\n'), payload...)
}

func verifyBinding(rev store.Revision) error {
	head, payload, ok := bytes.Cut(rev.Binding, []byte("\n"))
	if !ok {
		return fmt.Errorf("%s: binding of %d bytes has no header", rev.ID, len(rev.Binding))
	}
	var h bindingHeader
	if err := json.Unmarshal(head, &h); err != nil {
		return fmt.Errorf("%s: binding header: %v", rev.ID, err)
	}
	sum := sha256.Sum256(payload)
	switch {
	case h.ID != rev.ID:
		return fmt.Errorf("%s: binding was built for %s", rev.ID, h.ID)
	case h.Size != len(payload) || h.Sum != hex.EncodeToString(sum[:]):
		return fmt.Errorf("%s: binding payload is %d bytes with another hash, want %d bytes", rev.ID, len(payload), h.Size)
	case h.Digest != len(rev.Releases):
		return fmt.Errorf("%s: %d digests bound, binding says %d", rev.ID, len(rev.Releases), h.Digest)
	}
	return nil
}

// publishForever installs, activates and publishes in a tight loop until it
// is killed, and says "ready" once its first two publishes (the second
// indexed) are committed. A quarter of the bindings are ~1 MiB, to widen
// the window in which a kill lands inside a commit.
func publishForever(home string) {
	store.SetChunkBytesForTest(64 << 10)
	s := store.New(home)
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), uint64(time.Now().UnixNano())))
	src := rand.NewChaCha8([32]byte{byte(os.Getpid())})
	for i := 0; ; i++ {
		if i%3 == 0 {
			r := store.Release{Name: fmt.Sprintf("p%d", rng.Uint64()), Version: "1.0.0"}
			r.Digest = "h1:" + r.Name
			if _, err := s.PutRelease(r); err != nil {
				fail("PutRelease: %v", err)
			}
			if err := s.UpdateDraft(func(d *store.Draft) error { d.Active[r.Name] = r.Version; return nil }); err != nil {
				fail("UpdateDraft: %v", err)
			}
		}
		active, err := s.Active()
		if err != nil {
			fail("Active: %v", err)
		}
		rels, err := s.Releases()
		if err != nil {
			fail("Releases: %v", err)
		}
		var digests []string
		for _, r := range rels[:min(len(rels), 1+rng.IntN(4))] {
			digests = append(digests, r.Digest)
		}
		size := []int{100, 4 << 10, 64 << 10, 1 << 20}[rng.IntN(4)]
		payload := make([]byte, size)
		_, _ = src.Read(payload)
		indexed := i%2 == 1
		_, err = s.Publish(active, func(n uint64, id string, w *store.IndexWriter) (store.Revision, error) {
			if !indexed {
				return store.Revision{Releases: digests, Binding: makeBinding(id, payload, len(digests)), Note: "crash test"}, nil
			}
			// The same payload as an index: its header in the profile, the
			// bytes spread over many tool bodies and many chunks.
			if err := w.PutRevision(id, makeBinding(id, payload, len(digests)), []byte("[]")); err != nil {
				return store.Revision{}, err
			}
			if err := w.PutEndpoint("local", []byte("{}")); err != nil {
				return store.Revision{}, err
			}
			for j, off := 0, 0; off < len(payload); j, off = j+1, off+4096 {
				part := payload[off:min(off+4096, len(payload))]
				decl, err := w.PutCommand([]byte(fmt.Sprintf("decl %d of %s", j, id)))
				if err != nil {
					return store.Revision{}, err
				}
				body, err := w.PutBody(part)
				if err != nil {
					return store.Revision{}, err
				}
				name := fmt.Sprintf("t%06d", j)
				if err := w.PutRoute([]string{"g", name}, store.RouteCommand, name, decl, "a tool"); err != nil {
					return store.Revision{}, err
				}
				if err := w.PutTool(name, name, "p@1.0.0", decl, body, "", len(part), true); err != nil {
					return store.Revision{}, err
				}
			}
			if err := w.PutRoute([]string{"g"}, store.RouteGroup, "", "", "commands"); err != nil {
				return store.Revision{}, err
			}
			return store.Revision{Releases: digests, Note: "crash test (indexed)"}, nil
		})
		if err != nil {
			fail("Publish: %v", err)
		}
		if i == 1 {
			fmt.Println("ready")
		}
	}
}

func holdUntilStdinCloses(home string) {
	release, err := store.HoldForTest(store.New(home))
	if err != nil {
		fail("hold: %v", err)
	}
	fmt.Println("held")
	_, _ = io.Copy(io.Discard, os.Stdin)
	release()
	os.Exit(0)
}

// TestCrashWhilePublishing SIGKILLs a publishing process at random instants
// and reopens the store each time: it must pass Check, and its active
// revision must be complete and never older than one seen before.
func TestCrashWhilePublishing(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: kills 80 publishing processes")
	}
	const homes, killsPerHome = 8, 10
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	start := time.Now()
	kills, published, indexed := 0, uint64(0), 0
	for h := range homes {
		home := filepath.Join(t.TempDir(), "home")
		var lastSeen uint64
		for k := range killsPerHome {
			cmd, out, stderr := helper(t, "publish", home)
			if k == 0 {
				// The first kill in a fresh home may land while the file is created.
				time.Sleep(time.Duration(rng.IntN(15_000)) * time.Microsecond)
			} else {
				// Killed only once it has published: however slow the host,
				// every kill after the first in a home follows real work.
				if line, err := out.ReadString('\n'); line != "ready\n" {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatalf("helper said %q (%v); stderr: %s", line, err, stderr)
				}
				time.Sleep(time.Duration(rng.IntN(120_000)) * time.Microsecond)
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("home %d kill %d: helper ended with %v, not by SIGKILL; stderr: %s", h, k, err, stderr)
			}
			kills++

			s := store.New(home)
			if err := s.Check(); err != nil {
				t.Fatalf("home %d kill %d: %v", h, k, err)
			}
			active, err := s.Active()
			if err != nil {
				t.Fatalf("home %d kill %d: Active: %v", h, k, err)
			}
			if active < lastSeen {
				t.Fatalf("home %d kill %d: active revision went back from %d to %d", h, k, lastSeen, active)
			}
			if active > 0 {
				rev, err := s.ActiveRevision()
				if err != nil {
					t.Fatalf("home %d kill %d: ActiveRevision: %v", h, k, err)
				}
				if rev.Indexed {
					indexed++
					if _, err := s.ViewActive(func(ix *store.Index) error {
						rev.Binding = ix.Profile()
						return verifyBinding(rev)
					}); err != nil {
						t.Fatalf("home %d kill %d: %v", h, k, err)
					}
				}
				if err := verifyBinding(rev); err != nil {
					t.Fatalf("home %d kill %d: %v", h, k, err)
				}
				for _, d := range rev.Releases {
					if _, err := s.ReleaseByDigest(d); err != nil {
						t.Fatalf("home %d kill %d: %s binds %s: %v", h, k, rev.ID, d, err)
					}
				}
			}
			lastSeen = active
		}
		published += lastSeen
	}
	t.Logf("%d kills, %d revisions published in total, %d kills found an indexed revision active, %v", kills, published, indexed, time.Since(start).Round(time.Millisecond))
	if indexed == 0 {
		t.Fatalf("no kill found an indexed revision active")
	}
	if kills < 60 {
		t.Fatalf("only %d kills", kills)
	}
	// Every helper after a home's first published twice before it was
	// killed, so what it committed must have survived the kill.
	if published < uint64(2*homes*(killsPerHome-1)) {
		t.Fatalf("only %d revisions published across %d kills: the helper did too little to test anything", published, kills)
	}
}

// TestSecondProcessHoldingTheStore: another process holding the file makes
// reads and writes here fail as unavailable within the timeout, then work
// again once it lets go.
func TestSecondProcessHoldingTheStore(t *testing.T) {
	s := fileStore(t)
	s.Timeout = 300 * time.Millisecond
	cmd, out, stderr := helper(t, "hold", s.Home())
	if line, err := out.ReadString('\n'); line != "held\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper said %q (%v); stderr: %s", line, err, stderr)
	}
	for name, op := range map[string]func() error{
		"read":  func() error { _, err := s.Releases(); return err },
		"write": func() error { _, err := s.Secret(); return err },
	} {
		started := time.Now()
		err := op()
		if kernel.ErrorCode(err) != kernel.CodeUnavailable {
			t.Errorf("%s while another process holds the store: %v", name, err)
		}
		// well under the default timeout, which a timeout not applied takes
		if d := time.Since(started); d > store.DefaultTimeout*3/4 {
			t.Errorf("%s gave up after %v with a 300ms timeout", name, d)
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := s.Secret(); err != nil {
		t.Fatalf("after the other process ended: %v", err)
	}
}
