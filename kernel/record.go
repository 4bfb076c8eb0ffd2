package kernel

// Process names one process as the process layer identifies it: its pid
// and its start time in the platform's own unit. Together they never name
// a later process that reused the pid.
type Process struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
}

// A ProcessRecorder keeps, outside rukh's memory, the processes each
// running invocation has beyond its leader, so that what a rukh killed by
// SIGKILL leaves running can be found and killed by the next rukh process
// (Sweep). The process layer calls it from one goroutine at a time, only
// when an invocation has processes beyond its leader, each process once,
// and never on the path of a call that starts none.
type ProcessRecorder interface {
	// Record adds ps to the invocation led by leader; id is its
	// RUKH_INVOCATION_ID ("" for a passthrough program).
	Record(id string, leader int, ps []Process)
	// Ended says that invocation ended and everything it had is gone.
	Ended(id string, leader int)
}
