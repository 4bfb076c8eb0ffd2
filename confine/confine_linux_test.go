//go:build linux && !rukh_portable

package confine_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"golang.org/x/sys/unix"

	"github.com/rukh-dev/rukh/confine"
	"github.com/rukh-dev/rukh/kernel"
)

// The test binary is also the init (argv[0] kernel.InitArgv0) and the
// programs it runs (started through a symlink named probe).
func TestMain(m *testing.M) {
	if len(os.Args) > 0 && (os.Args[0] == kernel.InitArgv0 || os.Args[0] == kernel.InitConfineArgv0) {
		os.Exit(confine.Main())
	}
	if filepath.Base(os.Args[0]) == "probe" {
		os.Exit(probe(os.Args[1:]))
	}
	code := m.Run()
	if code == 0 && os.Getenv(initEnv) == "" {
		// Every test again, its confined starts under the machine-code
		// init wherever it confines.
		cmd := exec.Command(os.Args[0], os.Args[1:]...)
		cmd.Env = append(os.Environ(), initEnv+"=machine")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			code = 1
		}
	}
	os.Exit(code)
}

// initEnv set to "machine" runs the tests' confined starts under the
// machine-code init (kernel.PrepareMachineInit), as rukh does for every
// template it confines; unset, under this package's init.
const initEnv = "RUKH_CONFINE_TEST_INIT"

// probe is a program to confine: args[0] says what it tries.
func probe(args []string) int {
	fail := func(err error) int { fmt.Println("error:", err); return 1 }
	switch args[0] {
	case "env":
		for _, e := range os.Environ() {
			fmt.Println(e)
		}
	case "procs":
		names, err := os.ReadDir("/proc")
		if err != nil {
			return fail(err)
		}
		for _, n := range names {
			if _, err := strconv.Atoi(n.Name()); err == nil {
				fmt.Println(n.Name())
			}
		}
		fmt.Println("self", os.Getpid())
	case "status":
		b, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return fail(err)
		}
		os.Stdout.Write(b)
	case "unix": // connect to a named UNIX socket
		c, err := net.DialTimeout("unix", args[1], 2*time.Second)
		if err != nil {
			return fail(err)
		}
		c.Close()
		fmt.Println("connected")
	case "ptrace": // attach to the init
		if err := unix.PtraceSeize(1); err != nil { // seize: the init is not stopped
			return fail(err)
		}
		fmt.Println("attached")
	case "connect":
		c, err := net.DialTimeout("tcp", args[1], 2*time.Second)
		if err != nil {
			return fail(err)
		}
		c.Close()
		fmt.Println("connected")
	case "read":
		if _, err := os.ReadFile(args[1]); err != nil {
			return fail(err)
		}
		fmt.Println("read")
	case "netns":
		ns, err := os.Readlink("/proc/self/ns/net")
		if err != nil {
			return fail(err)
		}
		fmt.Println(ns)
	case "read-out":
		b, err := os.ReadFile(args[1])
		if err != nil {
			return fail(err)
		}
		os.Stdout.Write(b)
	case "write":
		if err := os.WriteFile(args[1], []byte("x"), 0o644); err != nil {
			return fail(err)
		}
		fmt.Println("wrote")
	case "fds": // every descriptor open beyond the channel
		n := 0
		for fd := kernel.ChannelFD + 1; fd < 1<<16; fd++ {
			var st unix.Stat_t
			if unix.Fstat(fd, &st) == nil {
				// The probe's own runtime keeps its cgroup's CPU quota
				// open where it can read it.
				to, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
				if strings.HasPrefix(to, "/sys/fs/cgroup/") {
					continue
				}
				fmt.Printf("fd %d (mode %#o) %s\n", fd, st.Mode, to)
				n++
			}
		}
		if n == 0 {
			fmt.Println("none")
		}
	case "hog":
		var keep [][]byte
		for i := 1; i <= 1024; i++ {
			b := make([]byte, 1<<20)
			for j := range b {
				b[j] = byte(j)
			}
			keep = append(keep, b)
			fmt.Println(len(keep))
		}
	}
	return 0
}

type outcome struct {
	stdout, stderr string
	code           int // the init's exit code
	records        [][2]uint32
	setup          string // the ReportSetup message
	started        bool   // the init ran (rukh did not refuse first)
}

func (o outcome) record(kind uint32) (uint32, bool) {
	for _, r := range o.records {
		if r[0] == kind {
			return r[1], true
		}
	}
	return 0, false
}

func (o outcome) status(t *testing.T) unix.WaitStatus {
	t.Helper()
	v, ok := o.record(kernel.ReportStatus)
	if !ok {
		t.Fatalf("no status reported: %+v", o)
	}
	return unix.WaitStatus(v)
}

// fixture is a directory with the probe program and what a template
// grants it to read.
type fixture struct {
	dir   string
	probe string
	read  []string // the probe and the system's programs and libraries
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(bin, "probe")
	if err := os.Symlink(exe, probe); err != nil {
		t.Fatal(err)
	}
	f := fixture{dir: dir, probe: probe, read: []string{exe, bin}}
	for _, d := range []string{"/bin", "/usr", "/lib", "/lib64"} {
		if _, err := os.Stat(d); err == nil {
			f.read = append(f.read, d)
		}
	}
	return f
}

func (f fixture) mkdir(t *testing.T, name string) string {
	t.Helper()
	d := filepath.Join(f.dir, name)
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// start runs the init as the kernel starts it: with c, confined (a spec
// on kernel.InitSpecFD, the namespaces and capabilities of a confined
// start); without, contained only.
func start(t *testing.T, c *kernel.Confine, env []string, argv ...string) outcome {
	t.Helper()
	return startWith(t, c, env, 0, nil, argv...)
}

// startSignalled is start that sends sig to the init's process group
// once the program runs.
func startSignalled(t *testing.T, c *kernel.Confine, sig unix.Signal, argv ...string) outcome {
	t.Helper()
	return startWith(t, c, nil, sig, nil, argv...)
}

// startWith is start, with sig as startSignalled; the init inherits
// inherited after its own descriptors, as rukh passes on what it was
// itself given without close-on-exec.
func startWith(t *testing.T, c *kernel.Confine, env []string, sig unix.Signal, inherited []*os.File, argv ...string) outcome {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	channel, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer channel.Close()
	reportR, reportW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer reportR.Close()
	var stdout, stderr bytes.Buffer
	argv0 := kernel.InitArgv0
	if c != nil {
		argv0 = kernel.InitConfineArgv0
	}
	cmd := &exec.Cmd{Path: exe, Args: append([]string{argv0}, argv...), Env: env, Stdout: &stdout, Stderr: &stderr}
	cmd.ExtraFiles = []*os.File{channel, reportW}
	a := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	cmd.SysProcAttr = a
	ownProc := c != nil && (grantsProc(c) || c.Processes > 0)
	containAttr(a, c != nil && c.Network == kernel.NetworkNone, c != nil, ownProc)
	var specW *os.File
	var specBytes []byte
	var mi *kernel.MachineInit
	if c != nil {
		spec := kernel.InitSpec{Template: "test", Confine: *c, OwnProc: ownProc}
		if ownProc {
			var st unix.Stat_t
			if err := unix.Stat("/proc/self/ns/mnt", &st); err != nil {
				t.Fatal(err)
			}
			spec.HostMountNS = st.Ino
		}
		if os.Getenv(initEnv) == "machine" {
			if mi, err = kernel.PrepareMachineInit(spec); err != nil {
				// Prepared in rukh: the call fails as a setup failure does.
				// Prepared in rukh: the call fails as a setup failure does,
				// and no init starts.
				return outcome{code: 126, setup: err.Error(), records: [][2]uint32{{kernel.ReportSetup, uint32(len(err.Error()))}}}
			}
		}
		if mi != nil {
			defer mi.Close()
			specBytes = mi.Steps
			cmd.Path, cmd.Args[0] = mi.Path, kernel.InitMachineArgv0
			mi.StartAttr(a) // as rukh starts it
		} else if specBytes, err = json.Marshal(spec); err != nil {
			t.Fatal(err)
		}
		var specR *os.File
		specR, specW, err = os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer specR.Close()
		cmd.ExtraFiles = append(cmd.ExtraFiles, specR)
		if mi != nil {
			cmd.ExtraFiles = append(cmd.ExtraFiles, mi.Files()...)
		}
	}
	if inherited != nil {
		for len(cmd.ExtraFiles) < 6 {
			cmd.ExtraFiles = append(cmd.ExtraFiles, nil)
		}
		cmd.ExtraFiles = append(cmd.ExtraFiles, inherited...)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	reportW.Close()
	if specW != nil {
		specW.Write(specBytes)
		specW.Close()
	}
	if sig != 0 {
		time.AfterFunc(500*time.Millisecond, func() { _ = unix.Kill(-cmd.Process.Pid, sig) })
	}
	rep, _ := io.ReadAll(reportR)
	err = cmd.Wait()
	o := outcome{stdout: stdout.String(), stderr: stderr.String(), started: true}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		o.code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	var cpu time.Duration
	var peak int64
	for len(rep) >= 8 {
		r := [2]uint32{binary.LittleEndian.Uint32(rep), binary.LittleEndian.Uint32(rep[4:])}
		rep = rep[8:]
		switch {
		case r[0] == kernel.ReportSetup && int(r[1]) <= len(rep):
			o.setup, rep = string(rep[:r[1]]), rep[r[1]:]
		case r[0] == kernel.ReportStep && mi != nil: // named in rukh
			o.setup = mi.Failed(r[1])
			r = [2]uint32{kernel.ReportSetup, uint32(len(o.setup))}
		case r[0] == kernel.ReportPeakKiB:
			peak = max(peak, int64(r[1]))
		case r[0] == kernel.ReportCPUMillis:
			cpu = time.Duration(r[1]) * time.Millisecond
		case r[0] == kernel.ReportStatus && mi != nil && o.setup == "":
			// The limit that stopped the program is named in rukh.
			if l := kernel.UsageLimit(*c, syscall.WaitStatus(r[1]), cpu, peak); l != 0 {
				o.records = append(o.records, [2]uint32{kernel.ReportLimit, l})
			}
		}
		o.records = append(o.records, r)
	}
	if len(rep) != 0 {
		t.Errorf("report has %d bytes left over", len(rep))
	}
	return o
}

// grantsProc is the kernel's (kernel/contain.go), replicated.
func grantsProc(c *kernel.Confine) bool {
	for _, p := range slices.Concat(c.Read, c.Write) {
		if p == "/" || p == "/proc" || strings.HasPrefix(p, "/proc/") {
			return true
		}
	}
	return false
}

// containAttr is the kernel's (kernel/init_linux.go), replicated.
func containAttr(a *syscall.SysProcAttr, netNone, confined, ownProc bool) {
	a.Cloneflags |= syscall.CLONE_NEWPID
	if netNone {
		a.Cloneflags |= syscall.CLONE_NEWNET
	}
	uid, gid := os.Getuid(), os.Getgid()
	if uid == 0 && !confined {
		return
	}
	a.Cloneflags |= syscall.CLONE_NEWUSER
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	a.GidMappingsEnableSetgroups = false
	if confined {
		if ownProc {
			a.Cloneflags |= syscall.CLONE_NEWNS
		}
		if uid != 0 {
			a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP}
		}
	}
}

func exitedZero(t *testing.T, o outcome) {
	t.Helper()
	if ws := o.status(t); !ws.Exited() || ws.ExitStatus() != 0 || o.code != 0 {
		t.Fatalf("the program did not exit 0 (status %#x, init %d): %+v", uint32(ws), o.code, o)
	}
}

func TestProcShowsTheInvocationOnly(t *testing.T) {
	f := newFixture(t)
	// Not granted, /proc is out of reach.
	if o := start(t, &kernel.Confine{Read: f.read}, nil, f.probe, "procs"); !strings.Contains(o.stdout, "permission denied") {
		t.Errorf("/proc without a grant: %+v", o)
	}
	for _, c := range []*kernel.Confine{{Read: slices.Concat(f.read, []string{"/proc"})}, {Read: f.read, Write: []string{"/proc"}}} {
		t.Run(fmt.Sprintf("read=%v,write=%v", c.Read, c.Write), func(t *testing.T) {
			o := start(t, c, nil, f.probe, "procs")
			exitedZero(t, o)
			lines := strings.Fields(strings.ReplaceAll(o.stdout, "self ", "self="))
			var self string
			for _, l := range lines {
				if s, ok := strings.CutPrefix(l, "self="); ok {
					self = s
				}
			}
			for _, l := range lines {
				if l != "1" && l != self && !strings.HasPrefix(l, "self=") {
					t.Errorf("/proc shows process %s beyond the init and the program (%s): %s", l, self, o.stdout)
				}
			}
			if !slices.Contains(lines, "1") || self == "" {
				t.Errorf("/proc does not show the init and the program: %s", o.stdout)
			}
		})
	}
}

// listen opens a listener of the host that accepts and closes every
// connection until the test ends.
func listen(t *testing.T, network, addr string) net.Listener {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln
}

// TestNoWayOut: a confined program can neither reach a named UNIX socket
// of the host (a session bus, a container daemon) nor trace its init, whose
// other threads Landlock does not hold.
func TestNoWayOut(t *testing.T) {
	f := newFixture(t)
	sock := filepath.Join(f.dir, "host.sock")
	listen(t, "unix", sock)
	if o := start(t, nil, nil, f.probe, "unix", sock); !strings.Contains(o.stdout, "connected") {
		t.Fatalf("unconfined, the socket is not reached: %+v", o)
	}
	c := &kernel.Confine{Network: kernel.NetworkNone, Read: slices.Concat(f.read, []string{f.dir})}
	if o := start(t, c, nil, f.probe, "unix", sock); strings.Contains(o.stdout, "connected") {
		t.Errorf("a confined program reached a named UNIX socket it was granted only to read: %+v", o)
	}
	if o := start(t, c, nil, f.probe, "ptrace"); strings.Contains(o.stdout, "attached") || !strings.Contains(o.stdout, "not permitted") {
		t.Errorf("a confined program traced its init: %+v", o)
	}
}

func TestNetwork(t *testing.T) {
	f := newFixture(t)
	ln := listen(t, "tcp4", "127.0.0.1:0")
	for _, tc := range []struct {
		network string
		connect bool
	}{{kernel.NetworkNone, false}, {kernel.NetworkHost, true}, {"", true}} {
		t.Run(tc.network, func(t *testing.T) {
			o := start(t, &kernel.Confine{Network: tc.network, Read: f.read}, nil, f.probe, "connect", ln.Addr().String())
			if got := strings.Contains(o.stdout, "connected"); got != tc.connect {
				t.Fatalf("connected = %v, want %v: %+v", got, tc.connect, o)
			}
		})
	}
	t.Run("loopback inside", func(t *testing.T) {
		// Refused, not unreachable: the namespace's own lo is up. Several
		// times: rukh makes later calls' namespaces ahead of them.
		for range 4 {
			o := start(t, &kernel.Confine{Network: kernel.NetworkNone, Read: f.read}, nil, f.probe, "connect", "127.0.0.1:1")
			if !strings.Contains(o.stdout, "connection refused") {
				t.Fatalf("the loopback inside is not up (want connection refused, not unreachable): %+v", o)
			}
		}
	})
	t.Run("a namespace per call", func(t *testing.T) {
		own, err := os.Readlink("/proc/self/ns/net")
		if err != nil {
			t.Skip(err)
		}
		seen := map[string]bool{own: true}
		for range 4 {
			o := start(t, &kernel.Confine{Network: kernel.NetworkNone, Read: slices.Concat(f.read, []string{"/proc"})}, nil, f.probe, "netns")
			exitedZero(t, o)
			ns := strings.TrimSpace(o.stdout)
			if !strings.HasPrefix(ns, "net:[") || seen[ns] {
				t.Fatalf("the call's network namespace %q is rukh's or an earlier call's (%v)", ns, seen)
			}
			seen[ns] = true
		}
	})
}

// TestUserNamespace: the program runs in a user namespace of the call's
// own, where only the owner's ids are mapped (under the machine-code init
// as root, one it makes itself), and with no capability there.
func TestUserNamespace(t *testing.T) {
	f := newFixture(t)
	c := &kernel.Confine{Read: slices.Concat(f.read, []string{"/proc"})}
	o := start(t, c, nil, f.probe, "read-out", "/proc/self/uid_map")
	exitedZero(t, o)
	want := fmt.Sprintf("%d %d 1", os.Getuid(), os.Getuid())
	if got := strings.Join(strings.Fields(o.stdout), " "); got != want {
		t.Errorf("uid_map %q, want %q", got, want)
	}
	o = start(t, c, nil, f.probe, "status")
	exitedZero(t, o)
	for _, l := range strings.Split(o.stdout, "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.HasPrefix(k, "Cap") && strings.Trim(strings.TrimSpace(v), "0") != "" {
			t.Errorf("the program has capabilities: %s", l)
		}
	}
}

func TestPaths(t *testing.T) {
	f := newFixture(t)
	r, w, out := f.mkdir(t, "r"), f.mkdir(t, "w"), f.mkdir(t, "out")
	for _, d := range []string{r, out} {
		if err := os.WriteFile(filepath.Join(d, "f"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(w, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &kernel.Confine{Read: slices.Concat(f.read, []string{r}), Write: []string{w}}
	for _, tc := range []struct {
		op, path string
		ok       bool
	}{
		{"read", filepath.Join(r, "f"), true},
		{"read", filepath.Join(w, "f"), true},
		{"write", filepath.Join(w, "new"), true},
		{"read", filepath.Join(out, "f"), false},
		{"write", filepath.Join(out, "new"), false},
		{"write", filepath.Join(r, "new"), false},
		{"read", "/etc/passwd", false},
	} {
		t.Run(tc.op+" "+tc.path, func(t *testing.T) {
			o := start(t, c, nil, f.probe, tc.op, tc.path)
			if tc.ok {
				exitedZero(t, o)
				return
			}
			if !strings.Contains(o.stdout, "permission denied") {
				t.Fatalf("want EACCES: %+v", o)
			}
		})
	}
}

func TestEnvironmentPassedUnchanged(t *testing.T) {
	f := newFixture(t)
	env := []string{"RUKH_CHANNEL=3", "B=two words", "A=1"}
	for _, c := range []*kernel.Confine{nil, {Read: f.read}} {
		o := start(t, c, env, f.probe, "env")
		exitedZero(t, o)
		if got := strings.Split(strings.TrimSuffix(o.stdout, "\n"), "\n"); !slices.Equal(got, env) {
			t.Errorf("confined=%v: environment %q, want %q", c != nil, got, env)
		}
	}
}

func TestNoCapabilitiesNoNewPrivs(t *testing.T) {
	f := newFixture(t)
	o := start(t, &kernel.Confine{Read: slices.Concat(f.read, []string{"/proc"})}, nil, f.probe, "status")
	exitedZero(t, o)
	want := map[string]string{"CapInh": "0000000000000000", "CapPrm": "0000000000000000", "CapEff": "0000000000000000",
		"CapBnd": "0000000000000000", "CapAmb": "0000000000000000", "NoNewPrivs": "1"}
	for _, l := range strings.Split(o.stdout, "\n") {
		k, v, _ := strings.Cut(l, ":")
		if w, ok := want[k]; ok {
			if v = strings.TrimSpace(v); v != w {
				t.Errorf("%s is %s, want %s", k, v, w)
			}
			delete(want, k)
		}
	}
	if len(want) != 0 {
		t.Errorf("/proc/self/status lacks %v:\n%s", want, o.stdout)
	}
}

func TestForkBombStopsAtProcesses(t *testing.T) {
	f := newFixture(t)
	w := f.mkdir(t, "w")
	pids := filepath.Join(w, "pids")
	const processes = 6
	script := `i=0; while [ $i -lt 50 ]; do sleep 10 & echo $! >> ` + pids + `; i=$((i+1)); done; wait`
	// The shell gives a background job /dev/null for its input.
	o := start(t, &kernel.Confine{Read: f.read, Write: []string{w, os.DevNull}, Processes: processes}, nil, "/bin/sh", "-c", script)
	if os.Getuid() == 0 {
		// RLIMIT_NPROC does not hold the host's root: the Go init refuses;
		// rukh refuses the machine-code init before it starts, which
		// limits processes only with the call's pids cgroup (that step is
		// the root package's TestConfine/forkbomb, through rukh).
		if o.code != 126 || !strings.Contains(o.setup, "processes cannot be enforced") {
			t.Fatalf("as root, want a setup failure: %+v", o)
		}
		if machine := os.Getenv(initEnv) == "machine"; o.started == machine {
			t.Fatalf("as root, the init started %v under the machine-code rerun %v: %+v", o.started, machine, o)
		}
		return
	}
	b, _ := os.ReadFile(pids)
	started := strings.Count(string(b), "\n")
	if started > processes-1 || started == 0 {
		t.Errorf("the shell started %d processes besides itself; the template allows %d in all: %+v", started, processes, o)
	}
	if l, ok := o.record(kernel.ReportLimit); !ok || l != kernel.LimitProcesses {
		t.Errorf("limit %v (%v), want processes (the shell started %d): %+v", kernel.LimitName(l), ok, started, o)
	}
}

func TestMemoryHogStopsAtMemoryMiB(t *testing.T) {
	f := newFixture(t)
	// The Go probe maps its heap in large arenas, so it is stopped well
	// short of the limit and the init does not name it; a hog that
	// touches what it maps is named.
	t.Run("go", func(t *testing.T) {
		const mib = 128
		o := start(t, &kernel.Confine{Read: f.read, MemoryMiB: mib}, nil, f.probe, "hog")
		ws := o.status(t)
		if n := len(strings.Fields(o.stdout)); ws.Exited() && ws.ExitStatus() == 0 || n > mib {
			t.Fatalf("the hog allocated %d MiB under a limit of %d (status %#x)", n, mib, uint32(ws))
		}
	})
	t.Run("python", func(t *testing.T) {
		py := "/usr/bin/python3"
		if _, err := os.Stat(py); err != nil {
			t.Skip("no " + py)
		}
		const mib = 64
		script := "a = []\nwhile len(a) < 1024:\n    a.append(bytearray(1 << 20))\n    print(len(a), flush=True)\n"
		o := start(t, &kernel.Confine{Read: f.read, MemoryMiB: mib}, nil, py, "-c", script)
		ws := o.status(t)
		lines := strings.Fields(o.stdout)
		if ws.Exited() && ws.ExitStatus() == 0 || len(lines) > mib {
			t.Fatalf("the hog allocated %d MiB under a limit of %d (status %#x): %s", len(lines), mib, uint32(ws), o.stderr)
		}
		if l, ok := o.record(kernel.ReportLimit); !ok || l != kernel.LimitMemory {
			t.Errorf("limit %v (%v), want memoryMiB: %+v after %d MiB", kernel.LimitName(l), ok, o.records, len(lines))
		}
	})
}

func TestBusyLoopStopsAtCPUSeconds(t *testing.T) {
	f := newFixture(t)
	begin := time.Now()
	o := start(t, &kernel.Confine{Read: f.read, CPUSeconds: 1}, nil, "/bin/sh", "-c", "while :; do :; done")
	ws := o.status(t)
	if !ws.Signaled() || ws.Signal() != unix.SIGXCPU && ws.Signal() != unix.SIGKILL {
		t.Fatalf("status %#x, want SIGXCPU or SIGKILL", uint32(ws))
	}
	if l, ok := o.record(kernel.ReportLimit); !ok || l != kernel.LimitCPU {
		t.Errorf("limit %v (%v), want cpuSeconds: %+v %s", kernel.LimitName(l), ok, o.records, o.stderr)
	}
	if d := time.Since(begin); d > 10*time.Second {
		t.Errorf("a 1 s limit took %v", d)
	}
}

func TestBigFileStopsAtFileMiB(t *testing.T) {
	f := newFixture(t)
	w := f.mkdir(t, "w")
	o := start(t, &kernel.Confine{Read: slices.Concat(f.read, []string{"/dev/zero"}), Write: []string{w}, FileMiB: 1}, nil,
		"/bin/sh", "-c", "exec head -c 5000000 /dev/zero > "+filepath.Join(w, "big"))
	if ws := o.status(t); !ws.Signaled() || ws.Signal() != unix.SIGXFSZ {
		t.Fatalf("status %#x, want SIGXFSZ: %+v", uint32(ws), o)
	}
	if l, ok := o.record(kernel.ReportLimit); !ok || l != kernel.LimitFile {
		t.Errorf("limit %v (%v), want fileMiB: %+v", kernel.LimitName(l), ok, o.records)
	}
	if fi, err := os.Stat(filepath.Join(w, "big")); err != nil || fi.Size() > 1<<20 {
		t.Errorf("the file grew past 1 MiB: %v %v", fi.Size(), err)
	}
}

func TestDaemonDiesWithTheProgram(t *testing.T) {
	f := newFixture(t)
	mark := fmt.Sprintf("%d.%d", 1000+os.Getpid()%1000, time.Now().UnixNano()%1000)
	for _, c := range []*kernel.Confine{nil, {Read: f.read}} {
		o := start(t, c, nil, "/bin/sh", "-c", "setsid sleep "+mark+" & sleep 0.3; exit 0")
		exitedZero(t, o)
		deadline := time.Now().Add(2 * time.Second)
		for alive(mark) {
			if time.Now().After(deadline) {
				t.Fatalf("confined=%v: the setsid daemon outlived the program", c != nil)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// alive reports whether a process of the host runs sleep arg.
func alive(arg string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Equal(b, []byte("sleep\x00"+arg+"\x00")) {
			return true
		}
	}
	return false
}

// TestSetupFailures: a setup that fails starts no program and says why.
// Under the machine-code init, rukh itself refuses what it can tell
// before the start (started false); a grant beneath /proc names the
// call's own /proc, which only the init sees, so that one fails in it.
func TestSetupFailures(t *testing.T) {
	f := newFixture(t)
	// As kernel's machineConfines: a processes limit is the Go init's
	// but for root.
	machine := func(c kernel.Confine) bool {
		return os.Getenv(initEnv) == "machine" && (c.Processes == 0 || os.Getuid() == 0)
	}
	gone := fmt.Sprintf("/proc/%d", os.Getpid())
	for _, tc := range []struct {
		name   string
		c      kernel.Confine
		want   string
		inInit bool // the failure is the init's even under the machine-code one
	}{
		{"missing read path", kernel.Confine{Read: slices.Concat(f.read, []string{"/nonexistent/rukh"})}, "/nonexistent/rukh", false},
		{"relative path", kernel.Confine{Read: slices.Concat(f.read, []string{"rel"})}, `"rel"`, false},
		{"unknown network", kernel.Confine{Network: "some", Read: f.read}, `"some"`, false},
		{"negative limit", kernel.Confine{Read: f.read, Processes: -1}, "processes", false},
		{"grant beneath the call's /proc", kernel.Confine{Read: slices.Concat(f.read, []string{gone})}, gone, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := start(t, &tc.c, nil, f.probe, "env")
			if o.code != 126 || !strings.Contains(o.setup, tc.want) || o.stdout != "" {
				t.Fatalf("want a setup failure naming %s and no program: %+v", tc.want, o)
			}
			if want := tc.inInit || !machine(tc.c); o.started != want {
				t.Errorf("the init started %v, want %v: %+v", o.started, want, o)
			}
			if _, ok := o.record(kernel.ReportStatus); ok {
				t.Errorf("a status was reported: %+v", o.records)
			}
		})
	}
}

// TestRefusesWhenNotPID1: either init, started with no namespace of its
// own (as root: nothing else stops its mounts), refuses before any step,
// and the host's mounts are as they were.
func TestRefusesWhenNotPID1(t *testing.T) {
	exe, _ := os.Executable()
	f := newFixture(t)
	c := kernel.Confine{Read: slices.Concat(f.read, []string{"/proc"})}
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/ns/mnt", &st); err != nil {
		t.Fatal(err)
	}
	spec := kernel.InitSpec{Template: "t", Confine: c, OwnProc: true, HostMountNS: st.Ino}
	js, _ := json.Marshal(spec)
	mi, err := kernel.PrepareMachineInit(spec)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path, argv0 string
		steps             []byte
		want              string
	}{{"go", exe, kernel.InitConfineArgv0, js, "not as PID 1"}}
	if mi != nil {
		defer mi.Close()
		cases = append(cases, struct {
			name, path, argv0 string
			steps             []byte
			want              string
		}{"machine", mi.Path, kernel.InitMachineArgv0, mi.Steps, "rukh's init is not PID 1 of its own PID namespace, and refuses to touch the host's mounts"})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := mountinfo(t)
			specR, specW, _ := os.Pipe()
			reportR, reportW, _ := os.Pipe()
			devnull, _ := os.Open(os.DevNull)
			defer devnull.Close()
			files := []*os.File{devnull, reportW, specR}
			if tc.name == "machine" {
				files = append(files, mi.Files()...)
			}
			cmd := &exec.Cmd{Path: tc.path, Args: []string{tc.argv0, "/bin/true"}, ExtraFiles: files}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			reportW.Close()
			specR.Close()
			specW.Write(tc.steps)
			specW.Close()
			rep, _ := io.ReadAll(reportR)
			_ = cmd.Wait()
			msg := string(rep)
			if tc.name == "machine" && len(rep) == 8 && binary.LittleEndian.Uint32(rep) == kernel.ReportStep {
				msg = mi.Failed(binary.LittleEndian.Uint32(rep[4:]))
			}
			if cmd.ProcessState.ExitCode() != 126 || !strings.Contains(msg, tc.want) {
				t.Fatalf("exit %d, report %q", cmd.ProcessState.ExitCode(), msg)
			}
			if after := mountinfo(t); after != before {
				t.Fatalf("the init changed the test's mounts:\nbefore %s\nafter %s", before, after)
			}
		})
	}
}

// mountinfo is this process's mounts, with their propagation.
func mountinfo(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMountsStayInTheCall: a call with a /proc of its own mounts it in a
// mount namespace of its own; the caller's mounts are unchanged (the
// machine-code init makes that namespace itself, whatever it was started
// with).
func TestMountsStayInTheCall(t *testing.T) {
	f := newFixture(t)
	before := mountinfo(t)
	o := start(t, &kernel.Confine{Read: slices.Concat(f.read, []string{"/proc"})}, nil, f.probe, "procs")
	exitedZero(t, o)
	if after := mountinfo(t); after != before {
		t.Fatalf("the call changed the caller's mounts:\nbefore %s\nafter %s", before, after)
	}
}

// TestNothingBeyondTheChannel: the program gets its streams and the
// channel, nothing at a descriptor above: not the init's report, steps,
// ruleset or network namespace, nor what the init itself inherited.
func TestNothingBeyondTheChannel(t *testing.T) {
	f := newFixture(t)
	leak, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer leak.Close()
	for _, tc := range []struct {
		name string
		c    *kernel.Confine
	}{
		{"contained", nil},
		{"confined", &kernel.Confine{Read: f.read}},
		{"own proc", &kernel.Confine{Read: slices.Concat(f.read, []string{"/proc"})}},
		{"network none", &kernel.Confine{Network: kernel.NetworkNone, Read: f.read}},
		{"limits", &kernel.Confine{Read: f.read, MemoryMiB: 512, CPUSeconds: 30, FileMiB: 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := startWith(t, tc.c, nil, 0, []*os.File{leak, leak}, f.probe, "fds")
			exitedZero(t, o)
			if strings.TrimSpace(o.stdout) != "none" {
				t.Fatalf("the program has descriptors beyond the channel:\n%s", o.stdout)
			}
		})
	}
}

func TestExecOutsideTheGrantsIsRefused(t *testing.T) {
	f := newFixture(t)
	o := start(t, &kernel.Confine{Read: []string{"/usr"}}, nil, f.probe, "env")
	if e, ok := o.record(kernel.ReportExec); !ok || syscall.Errno(e) != syscall.EACCES {
		t.Fatalf("want ReportExec EACCES: %+v", o)
	}
}

// The kernel signals the init's process group: the init outlives the
// signal and reports, and the program gets it with its own disposition
// (not an ignored one inherited from the init).
func TestGroupSignalReachesTheProgram(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name string
		argv []string
		want func(unix.WaitStatus) bool
	}{
		{"default", []string{"/bin/sleep", "5"}, func(ws unix.WaitStatus) bool { return ws.Signaled() && ws.Signal() == unix.SIGTERM }},
		{"trapped", []string{"/bin/sh", "-c", `trap "exit 7" TERM; sleep 5 & wait`}, func(ws unix.WaitStatus) bool { return ws.Exited() && ws.ExitStatus() == 7 }},
	} {
		// The shell gives its background job /dev/null for input.
		for _, c := range []*kernel.Confine{nil, {Read: f.read, Write: []string{os.DevNull}}} {
			t.Run(fmt.Sprintf("%s confined=%v", tc.name, c != nil), func(t *testing.T) {
				o := startSignalled(t, c, unix.SIGTERM, tc.argv...)
				if ws := o.status(t); !tc.want(ws) || o.code != 0 {
					t.Fatalf("status %#x, init %d: %+v", uint32(ws), o.code, o)
				}
			})
		}
	}
}

// BenchmarkStart is the cost of one start of /bin/true under the init:
// contained only, confined, and confined with limits (the program is
// stopped at its exec to set them).
func BenchmarkStart(b *testing.B) {
	read := []string{"/usr", "/bin", "/lib", "/lib64"}
	for _, bc := range []struct {
		name string
		c    *kernel.Confine
	}{
		{"contained", nil},
		{"confined-host-network", &kernel.Confine{Read: read}},
		{"confined", &kernel.Confine{Network: kernel.NetworkNone, Read: read}},
		{"limited", &kernel.Confine{Network: kernel.NetworkNone, Read: read, MemoryMiB: 256, CPUSeconds: 10, FileMiB: 10}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			t := &testing.T{}
			for b.Loop() {
				if o := start(t, bc.c, nil, "/bin/true"); o.code != 0 {
					b.Fatalf("%+v", o)
				}
			}
		})
	}
}
