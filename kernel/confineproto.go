package kernel

// The machine-code confining init (scripts/init/confine_amd64.s) speaks
// the init protocol with these additions. Its argv[0] is
// InitMachineArgv0; on InitSpecFD it reads not an InitSpec but the steps
// rukh prepared (confineprep_linux.go), and InitRulesetFD is the Landlock
// ruleset rukh made. A step that fails is reported as ReportStep and the
// init exits 126 without starting the program (a step of the program's
// own, between its fork and its exec, ends the program with 126 the
// same way); rukh names the step. Before ReportStatus it reports the
// program's rusage, from which rukh names the limit that stopped it.
//
// Started as WarmArgv0, with no program, it waits on InitReportFD (then a
// SOCK_SEQPACKET socket) for one message: the steps, the call's
// descriptors as SCM_RIGHTS (which the steps move into place) and, after
// the steps, the program's path, arguments and environment; from there it
// is the init above, for that one call (scripts/init/confine_amd64.s).
const (
	InitMachineArgv0 = "rukh-confine-steps"
	WarmArgv0        = "rukh-confine-warm"
	InitRulesetFD    = 7

	// ReportStep: a prepared step failed; the value is its number (0xffff:
	// the steps themselves could not be read) shifted left 16, or'ed with
	// errno.
	ReportStep uint32 = 6
	// ReportPeakKiB: a peak resident size, in KiB (of the program, and of
	// every process the init reaped); the larger counts.
	ReportPeakKiB uint32 = 7
	// ReportCPUMillis: the program's user and system CPU time, in ms.
	ReportCPUMillis uint32 = 8
)
