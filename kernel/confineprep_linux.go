//go:build linux && !rukh_portable

package kernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The machine-code confining init runs steps rukh prepares here, in its
// own process, for one confined call: every decision, path lookup and
// structure is made here, and the init only makes the system calls in
// order (scripts/init/confine_amd64.s says how it reads them). The steps
// are the Go init's setup, the same calls with the same arguments in the
// same order, with the Landlock ruleset made and filled here (its rules
// name the same inodes: the init shares rukh's mounts but for a /proc of
// its own, whose rules it adds itself once it has mounted it).

// prepared is one call's steps for the machine-code init.
type prepared struct {
	steps   []byte
	words   []string // what each step does, for the message of its failure
	ruleset *os.File // InitRulesetFD
	// userNS: the init makes the call's user namespace itself, once it has
	// mounted and brought the loopback up, and rukh starts it without one
	// (as root: the start needs none). A start in a new user namespace
	// is a full fork of rukh (the Go runtime cannot share its memory with
	// the child then), which costs more than the whole init.
	userNS bool
	// netNS: a network namespace made ahead (netns_linux.go), which the
	// init enters (InitNetNSFD); nil: it gets a new one at its start.
	// rukh's copy stays open until the call ends (close).
	netNS *os.File
	// pooled: the call asked the pool of namespaces for netNS, and hands
	// it back as it ends.
	pooled bool
	// ownNS: the init makes the call's mount namespace itself.
	ownNS bool
	// warm: the steps are for a warm init (confinewarm_linux.go), which
	// receives the call's descriptors (recvFDs: what they become) and,
	// at execAt, the exec block that warmMessage appends.
	warm     bool
	warmKind int
	recvFDs  []int
	execAt   int
}

// InitNetNSFD is the network namespace the machine-code init enters.
const InitNetNSFD = 8

// files are the descriptors from InitCgroupFD on (cgroup is the call's
// cgroup.procs or nil).
func (p *prepared) files(cgroup *os.File) []*os.File {
	fs := []*os.File{cgroup, p.ruleset}
	if p.netNS != nil {
		fs = append(fs, p.netNS)
	}
	return fs
}

// startedEnds are rukh's copies of what the init inherits that close once
// it started: the ruleset. The network namespace's stays open until the
// call ends (close), so that its teardown comes after the call.
func (p *prepared) startedEnds() []*os.File { return []*os.File{p.ruleset} }

// close closes rukh's copies of what the init inherits (closing twice is
// harmless): the call has ended, or its init started.
func (p *prepared) close() {
	p.ruleset.Close()
	if p.pooled {
		doneNetNS(p.netNS)
		p.netNS, p.pooled = nil, false
	}
	if p.warm {
		refillWarm(p.warmKind) // the next calls' warm inits, made as this one ends
	}
}

// stepArg is an argument of a step: as is, an offset into the steps'
// data, or the result of an earlier step.
type stepArg struct {
	v    uint64
	mode uint8
}

func imm(v uint64) stepArg   { return stepArg{v, 0} }
func at(off int) stepArg     { return stepArg{uint64(off), 1} }
func result(k int) stepArg   { return stepArg{uint64(k), 2} }
func fd(n int) stepArg       { return imm(uint64(n)) }
func recvd(k int) stepArg    { return stepArg{uint64(k), 3} }
func bits(n uintptr) stepArg { return imm(uint64(n)) }

// Pseudo-calls of a step, made by the init itself.
const (
	stepStore  = 0xffff // *arg0 = arg1
	stepOr     = 0xfffe // *arg0 |= arg1
	stepExpect = 0xfffd // fail (errno 0) unless arg0 == arg1
	stepExec   = 0xfffc // the exec block at offset arg0 is the program's argv and envp
)

// The step numbers of a ReportStep for steps the init could not read.
const (
	stepsUnread   = 0xffff // reading them failed
	stepsNotMagic = 0xfffe
	stepsTooMany  = 0xfffd
	stepsCutShort = 0xfffc
	stepsTooLarge = 0xfffb
)

const (
	stepsMagic    = 0x31434b52 // "RKC1"
	stepSize      = 64
	maxSteps      = 256
	maxStepsBytes = 65536
)

type stepList struct {
	nr    []uint16
	args  [][6]stepArg
	child []bool
	words []string
	data  []byte
}

// put appends b to the steps' data (8-byte aligned) and returns its offset.
func (l *stepList) put(b []byte) int {
	for len(l.data)%8 != 0 {
		l.data = append(l.data, 0)
	}
	off := len(l.data)
	l.data = append(l.data, b...)
	return off
}

func (l *stepList) str(s string) int { return l.put(append([]byte(s), 0)) }

// add appends a step of the init's own and returns its number.
func (l *stepList) add(words string, nr uintptr, args ...stepArg) int {
	var a [6]stepArg
	copy(a[:], args)
	l.nr, l.args, l.child, l.words = append(l.nr, uint16(nr)), append(l.args, a), append(l.child, false), append(l.words, words)
	return len(l.nr) - 1
}

// addChild appends a step of the program's process, after its fork.
func (l *stepList) addChild(words string, nr uintptr, args ...stepArg) {
	l.add(words, nr, args...)
	l.child[len(l.child)-1] = true
}

// check refuses a step that takes a result the init cannot have for it
// (the init refuses it too: a step of its own runs before any of the
// program's).
func (l *stepList) check() error {
	for i := range l.nr {
		for _, a := range l.args[i] {
			if a.mode == 2 && (a.v >= uint64(i) || l.child[a.v] && !l.child[i]) {
				return fmt.Errorf("step %d (%s) takes the result of step %d, which does not run before it", i, l.words[i], a.v)
			}
		}
	}
	return nil
}

func (l *stepList) encode() ([]byte, error) {
	n := len(l.nr)
	base := 8 + n*stepSize
	if n > maxSteps || base+len(l.data) > maxStepsBytes-8 {
		return nil, fmt.Errorf("the confinement needs %d steps and %d bytes, more than rukh's init takes", n, base+len(l.data))
	}
	b := binary.LittleEndian.AppendUint32(make([]byte, 0, base+len(l.data)), stepsMagic)
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
	for i := range n {
		w0 := uint64(l.nr[i])
		for j, a := range l.args[i] {
			w0 |= uint64(a.mode) << (32 + 4*j)
		}
		b = binary.LittleEndian.AppendUint64(b, w0)
		for _, a := range l.args[i] {
			v := a.v
			if a.mode == 1 {
				v += uint64(base)
			}
			b = binary.LittleEndian.AppendUint64(b, v)
		}
		var w7 uint64
		if l.child[i] {
			w7 = 1
		}
		b = binary.LittleEndian.AppendUint64(b, w7)
	}
	return append(b, l.data...), nil
}

// machineConfines reports whether the machine-code init can confine
// under conf: where there is one, and for every template but a processes
// limit without a pids cgroup (rukh not root), which needs the Go init's
// watch of the call's /proc. RUKH_WITHOUT=machine-init leaves every call
// to the Go init.
func machineConfines(conf *Confine) bool {
	return confiningInit != "" && !without()["machine-init"] && (conf.Processes == 0 || os.Getuid() == 0)
}

var confining struct {
	mu   sync.Mutex
	done bool
	path string
	err  error
}

// confiningInitPath is the path the machine-code confining init is
// executed from (a sealed memory file, as the containment init's). A
// refusal is kept; a want of descriptors or memory is tried again later.
func confiningInitPath() (string, error) {
	confining.mu.Lock()
	defer confining.mu.Unlock()
	if !confining.done {
		if confiningInit == "" {
			confining.err = errors.New("no machine-code confining init for this architecture")
		} else {
			confining.path, confining.err = sealedExecutable("rukh-confine", confiningInit)
		}
		transient := errors.Is(confining.err, syscall.EMFILE) || errors.Is(confining.err, syscall.ENFILE) || errors.Is(confining.err, syscall.ENOMEM)
		confining.done = !transient
	}
	return confining.path, confining.err
}

// capBounding is the number of capabilities this kernel has (the Go init
// drops each until the kernel says there is no such one).
var capBounding = sync.OnceValue(func() int {
	n := 0
	for ; n < 64; n++ {
		if _, _, e := unix.RawSyscall(unix.SYS_PRCTL, unix.PR_CAPBSET_READ, uintptr(n), 0); e == unix.EINVAL {
			break
		}
	}
	return n
})

// capDropWords say what dropping each capability from the bounding set
// does, made once.
var capDropWords = sync.OnceValue(func() []string {
	ws := make([]string, capBounding())
	for cap := range ws {
		ws[cap] = fmt.Sprintf("dropping capability %d from the bounding set", cap)
	}
	return ws
})

// Securebits that keep uid 0 from meaning capabilities, locked.
const securebits = 1<<0 | 1<<1 | // SECBIT_NOROOT, _LOCKED
	1<<2 | 1<<3 | // SECBIT_NO_SETUID_FIXUP, _LOCKED
	1<<5 | // SECBIT_KEEP_CAPS_LOCKED (off)
	1<<6 | 1<<7 // SECBIT_NO_CAP_AMBIENT_RAISE, _LOCKED

var atFDCWD int64 = unix.AT_FDCWD

// procPath reports whether p is /proc or beneath it.
func procPath(p string) bool { return p == "/proc" || strings.HasPrefix(p, "/proc/") }

// prepare makes spec's steps, in the Go init's order (package confine):
// mounts and the loopback need the capabilities the init drops last;
// the limits are the program's, set between its fork and its exec. warm
// makes them for a warm init (confinewarm_linux.go) of the call's kind.
func prepare(spec InitSpec, warm bool) (*prepared, error) {
	c := spec.Confine
	if err := ValidateConfine(c); err != nil {
		return nil, err
	}
	if c.Processes > 0 && !spec.ProcessesCgroup {
		return nil, errors.New("processes cannot be enforced: rukh's machine-code init limits processes with the call's pids cgroup, and it has none")
	}
	plan, err := PlanLandlock(c)
	if err != nil {
		return nil, err
	}
	// Rules beneath /proc name the init's own /proc, which exists only
	// once it has mounted it: the init adds those.
	later := func(r LandlockRule) bool { return spec.OwnProc && procPath(r.Path) }
	rfd, err := plan.Ruleset(later)
	if err != nil {
		return nil, err
	}
	p := &prepared{ruleset: os.NewFile(uintptr(rfd), "rukh-landlock-ruleset"), userNS: os.Geteuid() == 0, ownNS: spec.OwnProc, warm: warm, warmKind: warmKind(c)}
	if p.userNS && c.Network == NetworkNone {
		p.netNS, p.pooled = takeNetNS(), true
	}
	var cwd string
	if warm {
		// Where a fresh init would start: rukh's working directory now.
		if cwd, err = unix.Getwd(); err != nil {
			p.close()
			return nil, err
		}
	}
	// Room for a typical template's steps, grown only for a larger one.
	const stepsRoom, dataRoom = 96, 4096
	l := stepList{nr: make([]uint16, 0, stepsRoom), args: make([][6]stepArg, 0, stepsRoom), child: make([]bool, 0, stepsRoom), words: make([]string, 0, stepsRoom), data: make([]byte, 0, dataRoom)}
	// As the Go init: never as anything but PID 1 of a PID namespace of
	// its own, where it cannot reach the host's mounts.
	pid := l.add("getpid", unix.SYS_GETPID)
	l.add("rukh's init is not PID 1 of its own PID namespace, and refuses to touch the host's mounts", stepExpect, result(pid), imm(1))
	l.add("fcntl on the report descriptor", unix.SYS_FCNTL, fd(InitReportFD), bits(unix.F_SETFD), bits(unix.FD_CLOEXEC))
	execStep := -1
	if warm {
		// The call's descriptors, received wherever the kernel put them,
		// go where a fresh init has them: moved above every one first, so
		// that none is overwritten before it moved.
		p.recvFDs = append(p.recvFDs, 0, 1, 2, ChannelFD)
		if spec.ProcessesCgroup {
			p.recvFDs = append(p.recvFDs, InitCgroupFD)
		}
		p.recvFDs = append(p.recvFDs, InitRulesetFD)
		if p.netNS != nil {
			p.recvFDs = append(p.recvFDs, InitNetNSFD)
		}
		const words = "placing the call's descriptors"
		high := make([]int, len(p.recvFDs))
		for k := range p.recvFDs {
			high[k] = l.add(words, unix.SYS_FCNTL, recvd(k), bits(unix.F_DUPFD_CLOEXEC), imm(64))
			l.add(words, unix.SYS_CLOSE, recvd(k))
		}
		for k, to := range p.recvFDs {
			l.add(words, unix.SYS_DUP3, result(high[k]), fd(to), imm(0))
			l.add(words, unix.SYS_CLOSE, result(high[k]))
		}
		l.add("changing to rukh's working directory", unix.SYS_CHDIR, at(l.str(cwd)))
		execStep = l.add("reading the program's arguments and environment", stepExec, imm(0))
	} else {
		l.add("closing the steps' descriptor", unix.SYS_CLOSE, fd(InitSpecFD))
	}
	if spec.ProcessesCgroup {
		l.add("fcntl on the cgroup descriptor", unix.SYS_FCNTL, fd(InitCgroupFD), bits(unix.F_SETFD), bits(unix.FD_CLOEXEC))
	}
	if spec.OwnProc {
		empty, root, proc, procDir := l.str(""), l.str("/"), l.str("proc"), l.str("/proc")
		// A mount namespace made here, whatever the start gave: the
		// mounts never land in the host's (or rukh's).
		l.add("making the invocation's mount namespace", unix.SYS_UNSHARE, bits(unix.CLONE_NEWNS))
		l.add("making / private in the invocation's mount namespace", unix.SYS_MOUNT, at(empty), at(root), at(empty), bits(unix.MS_REC|unix.MS_PRIVATE), at(empty))
		l.add("mounting the invocation's /proc", unix.SYS_MOUNT, at(proc), at(procDir), at(proc), bits(unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC), at(empty))
	}
	if p.netNS != nil {
		l.add("entering the call's network namespace", unix.SYS_SETNS, fd(InitNetNSFD), bits(unix.CLONE_NEWNET))
		l.add("closing the network namespace's descriptor", unix.SYS_CLOSE, fd(InitNetNSFD))
	} else if c.Network == NetworkNone {
		const words = "bringing up the loopback"
		if warm && p.userNS {
			// A fresh init gets it at its start; a warm one as root
			// started in none but its PID namespace.
			l.add("making the call's network namespace", unix.SYS_UNSHARE, bits(unix.CLONE_NEWNET))
		}
		ifr := make([]byte, unix.IFNAMSIZ+24)
		copy(ifr, "lo")
		at0 := l.put(ifr)
		s := l.add(words, unix.SYS_SOCKET, bits(unix.AF_INET), bits(unix.SOCK_DGRAM|unix.SOCK_CLOEXEC), imm(0))
		l.add(words, unix.SYS_IOCTL, result(s), bits(unix.SIOCGIFFLAGS), at(at0))
		l.add(words, stepOr, at(at0+unix.IFNAMSIZ), bits(unix.IFF_UP))
		l.add(words, unix.SYS_IOCTL, result(s), bits(unix.SIOCSIFFLAGS), at(at0))
		l.add(words, unix.SYS_CLOSE, result(s))
	}
	if p.userNS {
		// The same user namespace a start gets otherwise: rukh's ids
		// mapped to themselves, setgroups denied.
		l.add("creating the call's user namespace", unix.SYS_UNSHARE, bits(unix.CLONE_NEWUSER))
		for _, m := range []struct{ file, line string }{
			// The effective ids: the only ones the kernel lets the
			// namespace's maker map.
			{"uid_map", fmt.Sprintf("%d %d 1\n", os.Geteuid(), os.Geteuid())},
			{"setgroups", "deny"},
			{"gid_map", fmt.Sprintf("%d %d 1\n", os.Getegid(), os.Getegid())},
		} {
			words := "writing the call's user namespace's " + m.file
			f := l.add(words, unix.SYS_OPENAT, imm(uint64(atFDCWD)), at(l.str("/proc/self/"+m.file)), bits(unix.O_WRONLY|unix.O_CLOEXEC), imm(0))
			l.add(words, unix.SYS_WRITE, result(f), at(l.str(m.line)), imm(uint64(len(m.line))))
			l.add(words, unix.SYS_CLOSE, result(f))
		}
	}
	for _, r := range plan.Rules {
		if !later(r) {
			continue
		}
		reach := fmt.Sprintf("the template grants %s, which cannot be reached", r.Path)
		adding := plan.failed(fmt.Errorf("adding the rule of %s", r.Path)).Error()
		attr := l.put(binary.LittleEndian.AppendUint64(make([]byte, 0, 16), r.Access))
		l.put(make([]byte, 8)) // parent_fd (packed after the access) and padding
		o := l.add(reach, unix.SYS_OPENAT, imm(uint64(atFDCWD)), at(l.str(r.Path)), bits(unix.O_PATH|unix.O_CLOEXEC), imm(0))
		l.add(reach, stepStore, at(attr+8), result(o))
		l.add(adding, unix.SYS_LANDLOCK_ADD_RULE, fd(InitRulesetFD), bits(unix.LANDLOCK_RULE_PATH_BENEATH), at(attr), imm(0))
		l.add(adding, unix.SYS_CLOSE, result(o))
	}
	l.add("setting no new privileges", unix.SYS_PRCTL, bits(unix.PR_SET_NO_NEW_PRIVS), imm(1), imm(0), imm(0), imm(0))
	l.add(plan.failed(errors.New("entering the ruleset")).Error(), unix.SYS_LANDLOCK_RESTRICT_SELF, fd(InitRulesetFD), imm(0))
	l.add("closing the ruleset's descriptor", unix.SYS_CLOSE, fd(InitRulesetFD))
	if plan.ABI < LandlockGovernsUnixSockets {
		filter, err := UnixSocketFilter()
		if err != nil {
			p.close()
			return nil, err
		}
		prog := l.put(unsafe.Slice((*byte)(unsafe.Pointer(&filter[0])), len(filter)*int(unsafe.Sizeof(filter[0]))))
		fprog := l.put(binary.LittleEndian.AppendUint16(make([]byte, 0, 16), uint16(len(filter))))
		l.put(make([]byte, 14)) // padding and the filter's address
		const words = "installing the seccomp filter that keeps named UNIX sockets out of reach"
		l.add(words, stepStore, at(fprog+8), at(prog))
		l.add(words, unix.SYS_PRCTL, bits(unix.PR_SET_SECCOMP), bits(unix.SECCOMP_MODE_FILTER), at(fprog))
	}
	l.add("clearing the ambient capabilities", unix.SYS_PRCTL, bits(unix.PR_CAP_AMBIENT), bits(unix.PR_CAP_AMBIENT_CLEAR_ALL), imm(0), imm(0), imm(0))
	for cap, words := range capDropWords() {
		l.add(words, unix.SYS_PRCTL, bits(unix.PR_CAPBSET_DROP), imm(uint64(cap)), imm(0), imm(0), imm(0))
	}
	l.add("setting the securebits", unix.SYS_PRCTL, bits(unix.PR_SET_SECUREBITS), imm(securebits), imm(0), imm(0), imm(0))
	hdr := l.put(binary.LittleEndian.AppendUint32(make([]byte, 0, 8), unix.LINUX_CAPABILITY_VERSION_3))
	l.put(make([]byte, 4))          // pid 0: this process
	data := l.put(make([]byte, 24)) // two empty sets: no capability
	l.add("dropping the capabilities", unix.SYS_CAPSET, at(hdr), at(data))
	// Not dumpable: the program, in the init's Landlock domain and with no
	// capabilities, could otherwise trace the init or write its memory.
	l.add("prctl PR_SET_DUMPABLE", unix.SYS_PRCTL, bits(unix.PR_SET_DUMPABLE), imm(0), imm(0), imm(0), imm(0))
	for _, r := range ProgramLimits(c) {
		lim := l.put(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, r.Cur), r.Max))
		l.addChild("setting the program's limits", unix.SYS_PRLIMIT64, imm(0), bits(uintptr(r.Resource)), at(lim), imm(0))
	}
	if spec.ProcessesCgroup {
		// "0": the writer itself, the program before its exec.
		l.addChild("putting the program in its pids cgroup", unix.SYS_WRITE, fd(InitCgroupFD), at(l.str("0")), imm(1))
	}
	// Last: nothing from InitReportFD on reaches the program, neither the
	// init's descriptors nor any rukh inherited without close-on-exec
	// (the report stays open for an exec failure's record).
	l.addChild("closing the init's descriptors at the program's exec", unix.SYS_CLOSE_RANGE, fd(InitReportFD), imm(0xffffffff), bits(unix.CLOSE_RANGE_CLOEXEC))
	if err = l.check(); err == nil {
		p.steps, err = l.encode()
	}
	if err == nil && execStep >= 0 {
		p.execAt = (len(p.steps) + 7) &^ 7
		binary.LittleEndian.PutUint64(p.steps[8+execStep*stepSize+8:], uint64(p.execAt))
	}
	if err != nil {
		p.close()
		return nil, err
	}
	p.words = l.words
	return p, nil
}

// startAttr takes the user namespace out of a where the init makes it
// itself.
func (p *prepared) startAttr(a *syscall.SysProcAttr) {
	if p.userNS {
		a.Cloneflags &^= syscall.CLONE_NEWUSER
		a.UidMappings, a.GidMappings, a.AmbientCaps = nil, nil, nil
	}
	if p.netNS != nil {
		a.Cloneflags &^= syscall.CLONE_NEWNET
	}
	if p.ownNS {
		a.Cloneflags &^= syscall.CLONE_NEWNS
	}
}

// failed names the step of a ReportStep value.
func (p *prepared) failed(v uint32) string {
	step, errno := int(v>>16), syscall.Errno(v&0xffff)
	switch step {
	case stepsUnread:
		return fmt.Sprintf("rukh's init could not read its steps: %v", errno)
	case stepsNotMagic:
		return "rukh's init was given steps in a form it does not read"
	case stepsTooMany:
		return fmt.Sprintf("rukh's init was given more than %d steps", maxSteps)
	case stepsCutShort:
		return "rukh's init was given its steps cut short"
	case stepsTooLarge:
		return fmt.Sprintf("rukh's init was given steps larger than the %d bytes it takes", maxStepsBytes)
	}
	if step >= len(p.words) {
		return fmt.Sprintf("step %d, which rukh did not prepare, failed: %v", step, errno)
	}
	if errno == 0 {
		return p.words[step]
	}
	return fmt.Sprintf("%s: %v", p.words[step], errno)
}

// ProgramLimit is one rlimit a confined program runs under.
type ProgramLimit struct {
	Resource int
	unix.Rlimit
}

// ProgramLimits are the rlimits of c but the processes limit, which is
// the pids cgroup's or rukh's own init's: both inits set these.
func ProgramLimits(c Confine) []ProgramLimit {
	var ls []ProgramLimit
	if c.MemoryMiB > 0 {
		// Data, not address space: runtimes reserve large regions they
		// never touch, which RLIMIT_AS would count.
		v := uint64(c.MemoryMiB) << 20
		ls = append(ls, ProgramLimit{unix.RLIMIT_DATA, unix.Rlimit{Cur: v, Max: v}})
	}
	if c.CPUSeconds > 0 {
		// SIGXCPU at the limit, SIGKILL a second later.
		ls = append(ls, ProgramLimit{unix.RLIMIT_CPU, unix.Rlimit{Cur: uint64(c.CPUSeconds), Max: uint64(c.CPUSeconds) + 1}})
	}
	if c.FileMiB > 0 {
		v := uint64(c.FileMiB) << 20
		ls = append(ls, ProgramLimit{unix.RLIMIT_FSIZE, unix.Rlimit{Cur: v, Max: v}})
	}
	return ls
}

// MachineInit is one call's machine-code confining init, prepared as a
// confined call's is: for package confine's tests, which run each case
// under both inits.
type MachineInit struct {
	Path  string // the init's executable
	Steps []byte // what it reads on InitSpecFD
	p     *prepared
}

// Files are the init's descriptors from InitCgroupFD on (that one nil).
func (m *MachineInit) Files() []*os.File { return m.p.files(nil) }

// StartAttr changes the namespaces of a confined start (a) to the init's.
func (m *MachineInit) StartAttr(a *syscall.SysProcAttr) { m.p.startAttr(a) }

// Close closes the descriptors in Files once the call has ended (a network
// namespace among them is handed back to be closed with others).
func (m *MachineInit) Close() { m.p.close() }

// PrepareMachineInit prepares the machine-code init for spec; nil (and no
// error) where it does not confine under spec.Confine.
func PrepareMachineInit(spec InitSpec) (*MachineInit, error) {
	if !machineConfines(&spec.Confine) {
		return nil, nil
	}
	path, err := confiningInitPath()
	if err != nil {
		return nil, err
	}
	p, err := prepare(spec, false)
	if err != nil {
		return nil, err
	}
	return &MachineInit{Path: path, Steps: p.steps, p: p}, nil
}

// Failed is the message of a ReportStep value.
func (m *MachineInit) Failed(v uint32) string { return m.p.failed(v) }
