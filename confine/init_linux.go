//go:build linux && !rukh_portable

package confine

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-json-experiment/json"
	"golang.org/x/sys/unix"

	"github.com/rukh-dev/rukh/kernel"
)

// Main runs the init and returns its exit code. Without a spec on
// kernel.InitSpecFD it only contains, as the machine-code init does;
// with one it confines itself first, and any step that fails stops it
// before the program starts (it never runs a program less confined than
// its spec says).
func Main() int {
	// Capabilities, ptrace and the fork are per thread: all of it happens
	// on this one.
	runtime.LockOSThread()
	if len(os.Args) < 2 {
		return 0 // nothing to run: the namespace probe
	}
	argv := os.Args[1:]
	if os.Args[0] == kernel.InitConfineArgv0 && !specGiven() {
		return setupFailed("rukh's confining init was started without its spec, and starts nothing less confined")
	}
	if !specGiven() {
		// As the machine-code init: no mount, for it may share the host's.
		_, _ = unix.FcntlInt(kernel.InitReportFD, unix.F_SETFD, unix.FD_CLOEXEC)
		return run(argv, &plan{})
	}
	p, err := setup()
	if err != nil {
		return setupFailed(err.Error())
	}
	return run(argv, p)
}

// plan is what the init applies to the program and watches while it runs.
type plan struct {
	spec  kernel.Confine
	procs *os.File // this PID namespace's /proc, for the process count
	tasks *os.File // the init's own threads (/proc/self/task)
	peak  atomic.Int64
	// threads is how many the init had when it set the program's
	// RLIMIT_NPROC; a thread it starts later takes one of the program's.
	threads int
	// cgroup: the processes limit is the pids cgroup's on
	// kernel.InitCgroupFD, not an rlimit.
	cgroup bool
	// confined: set up from a spec (not the init that only contains).
	confined bool
}

// specGiven reports whether kernel.InitSpecFD is the spec's pipe. Open
// is not enough: where it was not passed, the Go runtime may have opened
// a file of its own there (it keeps the cgroup's CPU quota files open).
func specGiven() bool {
	var st unix.Stat_t
	return unix.Fstat(kernel.InitSpecFD, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFIFO
}

func fdOpen(fd int) bool {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	return err == nil
}

// setup confines the init itself, in the order that keeps each step
// possible: mounts and the loopback need the capabilities the init drops
// last; everything the init must still open after Landlock is open
// before it.
func setup() (*plan, error) {
	spec, err := readSpec()
	if err != nil {
		return nil, err
	}
	c := spec.Confine
	if err := kernel.ValidateConfine(c); err != nil {
		return nil, err
	}
	if pid := unix.Getpid(); pid != 1 {
		return nil, fmt.Errorf("rukh's init runs as process %d, not as PID 1 of its own PID namespace, and refuses to touch the host's mounts", pid)
	}
	if spec.OwnProc {
		if err := privateProc(spec.HostMountNS); err != nil {
			return nil, err
		}
	}
	if c.Network == kernel.NetworkNone {
		if err := loopbackUp(); err != nil {
			return nil, err
		}
	}
	p := &plan{spec: c, cgroup: spec.ProcessesCgroup, confined: true}
	if p.cgroup {
		// The pids cgroup rukh made holds the program; rukh reads its
		// events after the call.
		if _, err := unix.FcntlInt(kernel.InitCgroupFD, unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
			return nil, os.NewSyscallError("fcntl on the cgroup descriptor", err)
		}
	} else if c.Processes > 0 {
		switch root, err := hostRoot(); {
		case err != nil:
			return nil, fmt.Errorf("processes cannot be enforced: %v", err)
		case root:
			return nil, errors.New("processes cannot be enforced: the kernel holds no process of the host's root to RLIMIT_NPROC, and this invocation runs as root; run rukh as another user")
		}
		if !spec.OwnProc {
			return nil, errors.New("processes is watched through the call's own /proc, and the init has none")
		}
		if p.procs, err = os.Open("/proc"); err != nil {
			return nil, err
		}
		if p.tasks, err = os.Open("/proc/self/task"); err != nil {
			return nil, err
		}
	}
	rules, err := kernel.PlanLandlock(c)
	if err != nil {
		return nil, err
	}
	if err := noNewPrivs(); err != nil {
		return nil, err
	}
	if err := restrictPaths(rules); err != nil {
		return nil, err
	}
	if rules.ABI < kernel.LandlockGovernsUnixSockets {
		if err := denyUnixSockets(); err != nil {
			return nil, err
		}
	}
	if err := dropCapabilities(); err != nil {
		return nil, err
	}
	// Not dumpable: the program, in the init's Landlock domain and with no
	// capabilities, could otherwise trace the init or write its memory,
	// and run code on one of its threads that Landlock does not hold.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return nil, os.NewSyscallError("prctl PR_SET_DUMPABLE", err)
	}
	if _, err := unix.FcntlInt(kernel.InitReportFD, unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
		return nil, os.NewSyscallError("fcntl on the report descriptor", err)
	}
	return p, nil
}

// hostRoot reports whether this process is the host's root (its uid
// maps to uid 0 outside).
func hostRoot() (bool, error) {
	b, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return false, err
	}
	uid := uint64(unix.Getuid())
	for _, l := range strings.Split(string(b), "\n") {
		var in, out, n uint64
		if _, err := fmt.Sscan(l, &in, &out, &n); err == nil && uid >= in && uid-in < n {
			return out+uid-in == 0, nil
		}
	}
	return false, fmt.Errorf("uid %d is not in the user namespace's map", uid)
}

func readSpec() (kernel.InitSpec, error) {
	var spec kernel.InitSpec
	f := os.NewFile(kernel.InitSpecFD, "spec")
	defer f.Close() // through f: its finalizer would close the number later
	b, err := io.ReadAll(f)
	if err != nil {
		return spec, fmt.Errorf("reading the confinement spec: %v", err)
	}
	// An unknown member would be a restriction this init cannot apply.
	if err := json.Unmarshal(b, &spec, json.RejectUnknownMembers(true)); err != nil {
		return spec, fmt.Errorf("the confinement spec is not one this init understands: %v", err)
	}
	return spec, nil
}

// privateProc keeps the invocation's mounts from reaching the host's
// (and the host's from reaching it), then mounts a /proc of this PID
// namespace over the host's, so /proc shows the invocation's processes
// only.
func privateProc(hostMountNS uint64) error {
	// Only in a mount namespace of its own: a mount in the host's would
	// hide the host's /proc.
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/ns/mnt", &st); err != nil {
		return fmt.Errorf("reading the init's mount namespace: %v", err)
	}
	if hostMountNS == 0 || st.Ino == hostMountNS {
		return errors.New("rukh's init is not in a mount namespace of its own, and refuses to mount a /proc")
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making / private in the invocation's mount namespace: %v", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting the invocation's /proc: %v", err)
	}
	return nil
}

// loopbackUp brings up lo of the invocation's own network namespace, so
// 127.0.0.1 works inside and reaches nothing outside.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("bringing up the loopback: %v", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("bringing up the loopback: %v", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bringing up the loopback: %v", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bringing up the loopback: %v", err)
	}
	return nil
}

// setupFailed reports msg and returns the init's exit code for it.
func setupFailed(msg string) int {
	report(append(kernel.AppendRecord(nil, kernel.ReportSetup, uint32(len(msg))), msg...))
	return 126
}

func report(b []byte) {
	for len(b) > 0 {
		n, err := unix.Write(kernel.InitReportFD, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return
		}
		b = b[n:]
	}
}

// run starts the program, reaps every process of the namespace until the
// program has exited, and reports how it ended.
func run(argv []string, p *plan) int {
	// As PID 1 the init gets only the signals it handles; the kernel
	// signals the whole process group, and these are the program's to
	// act on. Notify, not Ignore: an ignored disposition would survive
	// the program's exec.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	go func() {
		for range sigs {
		}
	}()
	done, sampled := make(chan struct{}), make(chan struct{})
	if p.procs != nil {
		go p.sample(done, sampled)
	} else {
		close(sampled)
	}
	// stop ends the sampling; p.procs is the caller's after it.
	stop := sync.OnceFunc(func() { close(done); <-sampled })
	defer stop()
	runtime.Gosched()

	lims, err := p.rlimits()
	if err != nil {
		return setupFailed(err.Error())
	}
	files := make([]uintptr, kernel.ChannelFD+1)
	for fd := range files {
		files[fd] = uintptr(fd)
		if !fdOpen(fd) {
			files[fd] = ^uintptr(0)
		}
	}
	// Nothing from kernel.InitReportFD on reaches the program: neither
	// the init's own descriptors nor any rukh inherited without
	// close-on-exec. Confinement needs Landlock, whose kernels all have
	// this; an init that only contains goes on without it.
	if err := unix.CloseRange(kernel.InitReportFD, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil && p.confined {
		return setupFailed(fmt.Sprintf("closing the init's descriptors at the program's exec: %v", err))
	}
	stopAtExec := len(lims) > 0 || p.cgroup
	attr := &syscall.ProcAttr{Env: os.Environ(), Files: files, Sys: &syscall.SysProcAttr{Ptrace: stopAtExec}}
	pid, err := syscall.ForkExec(argv[0], argv, attr)
	if err != nil {
		var errno syscall.Errno
		if !errors.As(err, &errno) {
			errno = syscall.EINVAL
		}
		if errno == syscall.EAGAIN {
			report(kernel.AppendRecord(nil, kernel.ReportFork, uint32(errno)))
			return 126
		}
		// As the machine-code init reports it: the child exits 127.
		report(kernel.AppendRecord(kernel.AppendRecord(nil, kernel.ReportExec, uint32(errno)), kernel.ReportStatus, 127<<8))
		return 0
	}
	if stopAtExec {
		if err := p.limit(pid, lims); err != nil {
			_ = unix.Kill(pid, unix.SIGKILL)
			var ws unix.WaitStatus
			_, _ = unix.Wait4(pid, &ws, 0, nil)
			return setupFailed(err.Error())
		}
	}
	var ws unix.WaitStatus
	var ru unix.Rusage
	for {
		wpid, err := unix.Wait4(-1, &ws, 0, &ru)
		if err == unix.EINTR {
			continue
		}
		if err != nil || wpid == pid {
			break
		}
	}
	stop()
	if p.procs != nil {
		// What is alive as the program ends ran beside it: one last
		// sample, with the program counted.
		if n, err := count(p.procs); err == nil && int64(n) > p.peak.Load() {
			p.peak.Store(int64(n))
		}
	}
	var rec []byte
	if l := p.stoppedBy(ws, &ru); l != 0 {
		rec = kernel.AppendRecord(rec, kernel.ReportLimit, l)
	}
	report(kernel.AppendRecord(rec, kernel.ReportStatus, uint32(ws)))
	return 0
}

type rlimit struct {
	resource int
	lim      unix.Rlimit
}

// rlimits are the program's limits. They are set on the program (not the
// init, whose runtime needs threads and memory of its own) while it is
// stopped at its exec, before any of its code runs.
func (p *plan) rlimits() ([]rlimit, error) {
	c := p.spec
	var ls []rlimit
	if c.Processes > 0 && !p.cgroup {
		// limit adds the init's threads (see there).
		v := uint64(c.Processes)
		ls = append(ls, rlimit{unix.RLIMIT_NPROC, unix.Rlimit{Cur: v, Max: v}})
	}
	for _, l := range kernel.ProgramLimits(c) {
		ls = append(ls, rlimit{l.Resource, l.Rlimit})
	}
	return ls, nil
}

// limit sets lims on the program, which the kernel stopped at its exec
// (it was started traced), and lets it go.
func (p *plan) limit(pid int, lims []rlimit) error {
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("waiting for the program's exec: %v", err)
		}
		break
	}
	if !ws.Stopped() || ws.StopSignal() != unix.SIGTRAP {
		return fmt.Errorf("the program did not stop at its exec (status %#x)", uint32(ws))
	}
	for _, l := range lims {
		if l.resource == unix.RLIMIT_NPROC {
			// RLIMIT_NPROC counts the tasks (threads) of this uid in
			// the invocation's user namespace, and the init's threads
			// are among them: the program may have processes of its
			// own up to the template's number.
			n, err := count(p.tasks)
			if err != nil {
				return fmt.Errorf("counting the init's threads: %v", err)
			}
			p.threads = n
			l.lim.Cur += uint64(n)
			l.lim.Max += uint64(n)
		}
		if err := unix.Prlimit(pid, l.resource, &l.lim, nil); err != nil {
			return fmt.Errorf("setting the program's limits: %v", err)
		}
	}
	if p.cgroup {
		if _, err := unix.Write(kernel.InitCgroupFD, []byte(strconv.Itoa(pid))); err != nil {
			return fmt.Errorf("putting the program in its pids cgroup: %v", err)
		}
	}
	if err := unix.PtraceDetach(pid); err != nil {
		return fmt.Errorf("letting the program run: %v", err)
	}
	return nil
}

// count is the number of entries of a directory of /proc that are
// processes (or threads).
func count(dir *os.File) (int, error) {
	if _, err := dir.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range names {
		if _, err := strconv.Atoi(name); err == nil {
			n++
		}
	}
	return n, nil
}

// sample records the peak number of processes the program runs at once
// (the init excluded), until done.
func (p *plan) sample(done <-chan struct{}, sampled chan<- struct{}) {
	defer close(sampled)
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for {
		if n, err := count(p.procs); err == nil && int64(n-1) > p.peak.Load() {
			p.peak.Store(int64(n - 1))
		}
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
}

// stoppedBy names the limit that stopped the program, or 0: the CPU,
// file and memory limits by kernel.UsageLimit's rule (the one rukh
// applies to the machine-code init's reports), the processes limit when
// the program failed and the init saw the invocation run as many
// processes as the limit at once (sampled while it runs, and as it ends,
// the program with what is left), less the threads the init started
// after it set the limit, which took some of the program's share.
// Threads count towards the limit too; a program stopped by its threads
// goes unnamed.
func (p *plan) stoppedBy(ws unix.WaitStatus, ru *unix.Rusage) uint32 {
	c := p.spec
	if ws.Exited() && ws.ExitStatus() == 0 {
		return 0
	}
	peak := ru.Maxrss
	var all unix.Rusage
	if unix.Getrusage(unix.RUSAGE_CHILDREN, &all) == nil && all.Maxrss > peak {
		peak = all.Maxrss
	}
	if l := kernel.UsageLimit(c, syscall.WaitStatus(ws), time.Duration(ru.Utime.Nano()+ru.Stime.Nano()), peak); l != 0 {
		return l
	}
	if c.Processes > 0 && !p.cgroup {
		allowed := c.Processes
		if n, err := count(p.tasks); err == nil && n > p.threads {
			allowed -= n - p.threads
		}
		if p.peak.Load() >= int64(allowed) {
			return kernel.LimitProcesses
		}
	}
	return 0
}
