//go:build unix

package kernel

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// underInit is how one start runs its program: directly (path ""), or as
// the child of an init (initproto.go) that is PID 1 of the invocation's
// namespaces.
type underInit struct {
	path    string   // the init's executable
	spec    []byte   // the InitSpec a confining init reads; nil: containment only
	cgroup  *os.File // the call's pids cgroup.procs, for the init; nil: none
	netNone bool     // a network namespace of its own
	ownProc bool     // a mount namespace of its own, with its own /proc
	report  *os.File // the parent's end of the report pipe, once started
	// machine: the steps of the machine-code confining init; nil: rukh's
	// own (package confine) confines, or none.
	machine *prepared
	// machineInit: the machine-code init confines this call, unless its
	// steps cannot be prepared (then rukh's own does, where it can).
	machineInit bool
	conf        *Confine // the template's, to name the limit that stopped the program
	// serve: the call is a serve process's, whose machine-code init is a
	// warm one (confinewarm_linux.go) where one can be; fresh is the spec
	// of the fresh init it falls back to.
	serve bool
	fresh InitSpec
}

// initFor chooses the init of an invocation under conf (template tmpl):
// a confined one needs rukh's own init and a host that enforces all of
// conf (refuse says why not: nothing ever runs less confined than its
// template says); an unconfined one gets the containment init where the
// host has PID namespaces, and none elsewhere (the recorded sweep).
func initFor(conf *Confine, tmpl string, noNamespaces bool) (u underInit, refuse string) {
	if conf != nil {
		h := ProbeHost()
		if machineConfines(conf) {
			// Where its executable cannot be made (memory files refused
			// exec), rukh's own init confines, if it can.
			if _, err := confiningInitPath(); err == nil {
				u.machineInit = true
				h.NoSelfInit = "" // the machine-code init needs none of rukh
			}
		}
		why := h.Unavailable(conf)
		if noNamespaces {
			why = "confinement needs namespaces, and this runner starts programs without them"
		}
		if why != "" {
			return u, fmt.Sprintf("template %q cannot be enforced on this host: %s", tmpl, why)
		}
		u.path = "/proc/self/exe"
		u.netNone = conf.Network == NetworkNone
		u.conf = conf
		return u, ""
	}
	if ok, _ := namespaced(); ok && !noNamespaces {
		u.path, _ = containmentInitPath()
	}
	return u, ""
}

// confineSpec makes what the confining init of an invocation reads: the
// template's paths with "release" and "scratch" resolved (scratch "" when
// none was made), as the steps of the machine-code init where it
// confines under conf, or else as the InitSpec rukh's own init reads.
func (u *underInit) confineSpec(conf *Confine, tmpl, release, scratch string, cgroup bool) error {
	spec, err := initSpec(conf, tmpl, release, scratch, cgroup, u.ownProc)
	if err != nil {
		return err
	}
	if u.machineInit {
		path, perr := confiningInitPath()
		var p *prepared
		if perr == nil && u.serve && warmConfines() && warmReady(conf) {
			u.fresh = spec
			p, perr = prepare(spec, true)
			if perr != nil {
				p, perr = prepare(spec, false)
			}
		} else if perr == nil {
			p, perr = prepare(spec, false)
		}
		if perr == nil {
			u.path, u.spec, u.machine = path, p.steps, p
			return nil
		}
		// Steps it cannot be given (too many, a grant only the call's own
		// /proc has): rukh's own init confines, and says why it cannot
		// when it cannot either.
		if !goInitConfines(conf) {
			return fmt.Errorf("cannot confine the program under template %q: %v", tmpl, perr)
		}
	}
	u.path = "/proc/self/exe"
	u.spec, err = json.Marshal(spec)
	return err
}

// goInitConfines reports whether rukh's own init can confine under conf.
var goInitConfines = func(conf *Confine) bool { return ProbeHost().Unavailable(conf) == "" }

// closeMachine closes rukh's copies of what the machine-code init
// inherits, whether or not it started (closing twice is harmless).
func (u *underInit) closeMachine() {
	if u.machine != nil {
		u.machine.close()
	}
}

// initSpec is the InitSpec of an invocation.
func initSpec(conf *Confine, tmpl, release, scratch string, cgroup, ownProc bool) (InitSpec, error) {
	resolve := func(paths []string) ([]string, error) {
		var out []string
		for _, p := range paths {
			switch {
			case p == PathRelease:
				p = release
			case p == PathScratch:
				p = scratch
			case !filepath.IsAbs(p):
				return nil, fmt.Errorf("path %q of template %q is not absolute", p, tmpl)
			}
			out = append(out, filepath.Clean(p))
		}
		return out, nil
	}
	c := *conf
	var err error
	if c.Read, err = resolve(conf.Read); err != nil {
		return InitSpec{}, err
	}
	if c.Write, err = resolve(conf.Write); err != nil {
		return InitSpec{}, err
	}
	spec := InitSpec{Template: tmpl, Confine: c, ProcessesCgroup: cgroup, OwnProc: ownProc}
	if ownProc {
		spec.HostMountNS = mountNamespace()
	}
	return spec, nil
}

// grantsProc reports whether conf lets a program reach /proc: then it
// gets one of its own, showing only its invocation's processes.
func grantsProc(conf *Confine) bool {
	return grants(conf, func(p string) bool { return p == "/" || p == "/proc" || strings.HasPrefix(p, "/proc/") })
}

// wantsScratch reports whether conf grants a per-invocation scratch dir.
func wantsScratch(conf *Confine) bool {
	return grants(conf, func(p string) bool { return p == PathScratch })
}

// grants reports whether one of conf's read or write paths satisfies ok.
func grants(conf *Confine, ok func(string) bool) bool {
	return slices.ContainsFunc(conf.Read, ok) || slices.ContainsFunc(conf.Write, ok)
}

// wrap makes cmd start its program under u's init: argv [InitArgv0,
// program, args...], the report pipe as descriptor InitReportFD and the
// spec as InitSpecFD, and u's namespaces. It returns the child's ends,
// for the caller to close once the child started.
func (u *underInit) wrap(cmd *exec.Cmd) (childEnds []*os.File, err error) {
	rp, err := cloexecPipe()
	if err != nil {
		return nil, os.NewSyscallError("pipe", err)
	}
	u.report = os.NewFile(uintptr(rp[0]), "rukh-init-report")
	reportW := os.NewFile(uintptr(rp[1]), "rukh-init-report-child")
	childEnds = append(childEnds, reportW)
	files := cmd.ExtraFiles
	for len(files) < InitReportFD-3 {
		files = append(files, nil) // closed in the child
	}
	files = append(files[:InitReportFD-3:InitReportFD-3], reportW)
	if u.spec != nil {
		sp, err := cloexecPipe()
		if err != nil {
			closeAll(append(childEnds, u.report))
			return nil, os.NewSyscallError("pipe", err)
		}
		specR, specW := os.NewFile(uintptr(sp[0]), "rukh-init-spec"), os.NewFile(uintptr(sp[1]), "")
		// The init reads the spec to EOF; a spec larger than the pipe
		// holds is written as it reads. If the init never starts, its end
		// closes and the write fails.
		go func(spec []byte) {
			specW.Write(spec)
			specW.Close()
		}(u.spec)
		childEnds = append(childEnds, specR)
		files = append(files, specR)
		if u.machine != nil {
			// The init enters the ruleset (and the network namespace) and
			// closes them; rukh's copies close once it started, or as the
			// call ends (closeMachine).
			childEnds = append(childEnds, u.machine.startedEnds()...)
			files = append(files, u.machine.files(u.cgroup)...)
		} else if u.cgroup != nil {
			files = append(files, u.cgroup)
		}
	}
	cmd.ExtraFiles = files
	argv0 := InitArgv0
	switch {
	case u.machine != nil:
		argv0 = InitMachineArgv0
	case u.spec != nil:
		argv0 = InitConfineArgv0
	}
	cmd.Args = append([]string{argv0, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = u.path
	containAttr(cmd.SysProcAttr, u.netNone, u.spec != nil, u.ownProc)
	if u.machine != nil {
		u.machine.startAttr(cmd.SysProcAttr)
	}
	return childEnds, nil
}

// contains reports whether the program started under u's init, in a PID
// namespace of its own: the kernel kills and reaps everything in it before
// the init's exit is reported, so once the leader has ended nothing of the
// invocation is left to look for, and the scan of rukh's processes (which
// holds starts off while it runs) is not needed.
func (u *underInit) contains() bool { return u.path != "" }

// startContained starts cmd under u's init, or directly when u has none.
// An unconfined start the kernel refused namespaces for starts again
// without them (the recorded sweep, with rec, then contains it), and so do
// later ones; a confined one fails. It returns the command that started.
func startContained(u *underInit, cmd *exec.Cmd, id string, files []*os.File, rec ProcessRecorder) (*tracked, *exec.Cmd, error) {
	if u.path == "" {
		t, err := startTracked(cmd, id, files, rec)
		return t, cmd, err
	}
	if u.machine != nil && u.machine.warm {
		t, wcmd, err := startWarm(u, cmd)
		if err == nil {
			return t, wcmd, nil
		}
		// A fresh init of the call's own, with steps for one.
		u.machine.close()
		p, perr := prepare(u.fresh, false)
		if perr != nil {
			*u = underInit{}
			return nil, cmd, fmt.Errorf("%v; then %v", err, perr)
		}
		u.spec, u.machine = p.steps, p
	}
	plain, attr := *cmd, *cmd.SysProcAttr
	plain.SysProcAttr = &attr
	orig := *u
	ends, err := u.wrap(cmd)
	if err != nil {
		return nil, cmd, err
	}
	// The kernel contains a program in namespaces: nothing to record.
	t, err := startTracked(cmd, id, files, nil)
	closeAll(ends)
	if err != nil && u.spec == nil && freeSlotNamespaces(err) {
		// The idle slots held the namespaces the kernel refused: again.
		u.report.Close()
		*u = orig
		again, againAttr := plain, attr
		again.SysProcAttr = &againAttr
		cmd = &again
		if ends, err = u.wrap(cmd); err != nil {
			return nil, cmd, err
		}
		t, err = startTracked(cmd, id, files, nil)
		closeAll(ends)
	}
	if err == nil {
		return t, cmd, nil
	}
	u.report.Close()
	u.closeMachine() // the call's end finds nothing left to close
	confined := u.spec != nil
	*u = underInit{}
	if confined || !namespaceRefused(err) {
		return nil, cmd, err
	}
	t, err = startTracked(&plain, id, files, rec)
	return t, &plain, err
}

func closeAll(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// initEnd is what an init's records say about the program's end.
type initEnd struct {
	ws       syscall.WaitStatus
	exited   bool   // ws is the program's (a ReportStatus came)
	startErr string // the program never ran: exec, fork or setup failed
	limit    uint32 // the limit that stopped it, if any
	// From the machine-code confining init: the program's CPU time and the
	// largest peak resident size of a process of the invocation.
	cpu     time.Duration
	peakKiB int64
}

// readReport reads the init's records to EOF (the init and everything in
// its namespace are gone by now) and closes the pipe. prog names the
// program in an exec failure, tmpl the template in a setup failure.
func (u *underInit) readReport(prog, tmpl string) initEnd {
	var e initEnd
	if u.report == nil {
		return e
	}
	b, _ := io.ReadAll(io.LimitReader(u.report, 1<<16))
	u.report.Close()
	for len(b) >= 8 {
		kind, v := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:])
		b = b[8:]
		switch kind {
		case ReportStatus:
			e.ws, e.exited = syscall.WaitStatus(v), true
		case ReportExec:
			e.startErr = fmt.Sprintf("cannot start program: fork/exec %s: %v", prog, syscall.Errno(v))
		case ReportFork:
			e.startErr = fmt.Sprintf("cannot start program: fork: %v", syscall.Errno(v))
		case ReportSetup:
			n := min(int(v), len(b))
			e.startErr = fmt.Sprintf("cannot confine the program under template %q: %s", tmpl, strings.ToValidUTF8(string(b[:n]), "?"))
			b = b[n:]
		case ReportLimit:
			e.limit = v
		case ReportStep:
			if u.machine != nil {
				e.startErr = fmt.Sprintf("cannot confine the program under template %q: %s", tmpl, u.machine.failed(v))
			}
		case ReportPeakKiB:
			e.peakKiB = max(e.peakKiB, int64(v))
		case ReportCPUMillis:
			e.cpu = time.Duration(v) * time.Millisecond
		}
	}
	if u.machine != nil && u.conf != nil && e.exited && e.startErr == "" && e.limit == 0 {
		e.limit = UsageLimit(*u.conf, e.ws, e.cpu, e.peakKiB)
	}
	return e
}

// UsageLimit names the limit of c that stopped a program that ended with
// ws after cpu of CPU time, peakKiB the largest peak resident size of a
// process of its invocation, or 0. The rule, so that a limit is named
// only when it is sure enough:
//   - cpuSeconds: the program was killed by SIGXCPU or SIGKILL and its
//     CPU time reached three quarters of the limit (SIGXCPU comes at the
//     limit, SIGKILL a second later; the CPU time rusage reports is
//     sampled and can fall a little short of what the limit counted);
//   - fileMiB: the program was killed by SIGXFSZ;
//   - memoryMiB: the program failed (a signal or a non-zero exit) and a
//     process of the invocation reached a peak resident size of three
//     quarters of the limit (the data the limit counts is most of what
//     a process that hits it has resident; the rest is code and stack).
//     A runtime that maps far more than it touches (Go maps its heap in
//     large arenas) can be stopped well short of that, and then the
//     limit goes unnamed: the status still says the program failed.
//
// A program that hit a limit and then exited 0 ran to its own end, and
// no limit is named. The processes limit is named by its pids cgroup, or
// by the Go init's watch of the call's processes.
func UsageLimit(c Confine, ws syscall.WaitStatus, cpu time.Duration, peakKiB int64) uint32 {
	if ws.Exited() && ws.ExitStatus() == 0 {
		return 0
	}
	if c.CPUSeconds > 0 && ws.Signaled() && (ws.Signal() == syscall.SIGXCPU || ws.Signal() == syscall.SIGKILL) {
		if cpu >= time.Duration(c.CPUSeconds)*time.Second*3/4 {
			return LimitCPU
		}
	}
	if c.FileMiB > 0 && ws.Signaled() && ws.Signal() == syscall.SIGXFSZ {
		return LimitFile
	}
	if c.MemoryMiB > 0 && peakKiB<<10 >= int64(c.MemoryMiB)<<20*3/4 {
		return LimitMemory
	}
	return 0
}

// ValidateConfine refuses what no init can enforce: a network that is
// neither none nor host, a negative limit.
func ValidateConfine(c Confine) error {
	switch c.Network {
	case "", NetworkHost, NetworkNone:
	default:
		return fmt.Errorf("network %q is neither %q nor %q", c.Network, NetworkNone, NetworkHost)
	}
	for _, l := range []struct {
		name string
		v    int
	}{{"processes", c.Processes}, {"memoryMiB", c.MemoryMiB}, {"cpuSeconds", c.CPUSeconds}, {"fileMiB", c.FileMiB}} {
		if l.v < 0 {
			return fmt.Errorf("%s is %d; a limit is a positive number (or absent)", l.name, l.v)
		}
	}
	return nil
}

// limitReason names the limit that stopped a confined program.
func limitReason(conf *Confine, tmpl string, l uint32) string {
	v := 0
	if conf != nil {
		switch l {
		case LimitProcesses:
			v = conf.Processes
		case LimitMemory:
			v = conf.MemoryMiB
		case LimitCPU:
			v = conf.CPUSeconds
		case LimitFile:
			v = conf.FileMiB
		}
	}
	return fmt.Sprintf("program stopped by the %s limit (%d) of template %q", LimitName(l), v, tmpl)
}

// describeConfine is one line saying what a template allows, for the
// diagnostics of a confined call that did not succeed.
func describeConfine(conf *Confine, tmpl string) string {
	net := conf.Network
	if net == "" {
		net = NetworkHost
	}
	parts := []string{"network " + net}
	list := func(name string, ps []string) {
		if len(ps) == 0 {
			parts = append(parts, name+" nothing")
		} else {
			parts = append(parts, name+" "+strings.Join(ps, ", "))
		}
	}
	list("read", conf.Read)
	list("write", conf.Write)
	for _, l := range []struct {
		name string
		v    int
	}{{"processes", conf.Processes}, {"memoryMiB", conf.MemoryMiB}, {"cpuSeconds", conf.CPUSeconds}, {"fileMiB", conf.FileMiB}} {
		if l.v > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", l.name, l.v))
		}
	}
	return fmt.Sprintf("rukh: this call ran confined by template %q (%s): a file, connection or process it was refused is that confinement\n", tmpl, strings.Join(parts, "; "))
}
