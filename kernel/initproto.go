package kernel

import "encoding/binary"

// The init protocol. Where the host has PID namespaces, an invocation's
// leader is not the program but an init of rukh's own, PID 1 of a fresh
// PID namespace: a program as PID 1 would ignore every signal it has no
// handler for, and when the init exits the kernel kills everything left
// in the namespace, even after a SIGKILL of rukh (the init gets SIGKILL as
// its parent-death signal). Two inits speak it:
//
//   - the containment init, a few hundred bytes of machine code run from
//     a sealed memory file, for unconfined templates;
//   - rukh itself started as InitConfineArgv0, for confined ones: it
//     reads an InitSpec on InitSpecFD and confines itself before it starts
//     the program (package confine); started as InitArgv0 it only
//     contains (where there is no machine-code init).
//
// The init's argv is InitArgv0, the program's path and the program's
// arguments; its environment is the program's, passed on unchanged; its
// descriptors are the program's (stdio and the channel on ChannelFD) plus
// InitReportFD, which it marks close-on-exec so the program never holds
// it. It forks the program, reaps every process of the namespace until
// the program exited, writes the records below to InitReportFD and exits
// 0. A record is 8 bytes: its kind and a value, little-endian uint32 each.
const (
	InitArgv0 = "rukh-init"
	// InitConfineArgv0 starts rukh as the confining init: without a spec
	// on InitSpecFD it fails, where InitArgv0 would only contain.
	InitConfineArgv0 = "rukh-confine"
	InitReportFD     = 4
	InitSpecFD       = 5
	// InitCgroupFD is the cgroup.procs of the call's pids cgroup, when the
	// spec says ProcessesCgroup.
	InitCgroupFD = 6

	// ReportStatus: the program exited; the value is its raw wait status.
	ReportStatus uint32 = 1
	// ReportExec: the program could not be executed; the value is errno.
	ReportExec uint32 = 2
	// ReportFork: the init could not fork; the value is errno.
	ReportFork uint32 = 3
	// ReportSetup: the init could not confine itself; the value is the
	// length of the message (UTF-8) that follows the record.
	ReportSetup uint32 = 4
	// ReportLimit: the program was stopped by a limit of the template;
	// the value is one of the Limit* numbers. It precedes ReportStatus.
	ReportLimit uint32 = 5
	// ReportStarted: a slot's program is about to exec (value 0); the
	// kernel names its sender, the program, by its pid in rukh's PID
	// namespace.
	ReportStarted uint32 = 6
)

// Slots. A serving rukh keeps the containment init warm: started as
// SlotArgv0 in the namespaces of an unconfined call, with no program, it
// serves one call after another on InitReportFD, a SOCK_SEQPACKET socket
// (rukh's end has SO_PASSCRED). Per call rukh sends one message: the
// program's stdin, stdout, stderr and channel as SCM_RIGHTS, and a payload
// of argc and envc (little-endian uint32 each), then dir, path, the argc
// arguments and the envc environment entries, each NUL-terminated (dir ""
// keeps the slot's working directory, rukh's). The init vforks (the child
// runs in its memory, the init held until the exec); the child puts the
// four descriptors on 0..3, makes a process group of its own,
// sends ReportStarted, and execs (or sends ReportExec). The init reaps
// until the program exited, kills everything else in its namespace
// (kill(-1, SIGKILL)), reaps until it has no child left, and sends
// ReportStatus (ReportFork when it could not fork): then nothing of the
// call is left, and the slot waits for the next. At EOF it exits.
const (
	SlotArgv0 = "rukh-slot"
	// SlotPayloadMax and SlotStringsMax bound a call's payload and its
	// strings (dir, path, arguments, environment): the init reserves as
	// much (scripts/init/init_amd64.s).
	SlotPayloadMax = 128 << 10
	SlotStringsMax = 4096
)

// Limits a ReportLimit names.
const (
	LimitProcesses uint32 = 1 + iota
	LimitMemory
	LimitCPU
	LimitFile
)

// LimitName is the template field a Limit* number stands for.
func LimitName(l uint32) string {
	switch l {
	case LimitProcesses:
		return "processes"
	case LimitMemory:
		return "memoryMiB"
	case LimitCPU:
		return "cpuSeconds"
	case LimitFile:
		return "fileMiB"
	}
	return "an unknown limit"
}

// InitSpec is what the confining init reads, as JSON, on InitSpecFD (to
// EOF) before it forks. Read and Write are absolute, cleaned paths: the
// kernel resolves "release", "scratch" and "~/" before it starts the init.
type InitSpec struct {
	Template string  `json:"template"`
	Confine  Confine `json:"confine"`
	// ProcessesCgroup: Confine.Processes is enforced by a pids cgroup
	// (rukh runs as root, whom RLIMIT_NPROC does not hold): the init
	// writes the program's pid to InitCgroupFD while the program is
	// stopped at its exec, and sets no RLIMIT_NPROC.
	ProcessesCgroup bool `json:"processesCgroup,omitempty"`
	// OwnProc: the template grants /proc (or all of /), and the init got a
	// mount namespace of its own, where it mounts a /proc of the call's PID
	// namespace. HostMountNS is the inode of rukh's mount namespace: the
	// init mounts nothing where its own is the same. Without OwnProc the
	// init mounts nothing (and Landlock keeps the host's /proc out of
	// reach).
	OwnProc     bool   `json:"ownProc,omitempty"`
	HostMountNS uint64 `json:"hostMountNS,omitempty"`
}

// AppendRecord appends one init report record to b.
func AppendRecord(b []byte, kind, value uint32) []byte {
	b = binary.LittleEndian.AppendUint32(b, kind)
	return binary.LittleEndian.AppendUint32(b, value)
}
