package kernel

import "github.com/go-json-experiment/json"

// Confinement: what an owner's template lets a command touch, and what a
// command's manifest says it needs (docs/confinement.md). A need never
// grants anything; a template grants, and the host enforces it or the
// template is unavailable.

// Network values of Confine.
const (
	NetworkNone = "none" // own network namespace: an isolated loopback only
	NetworkHost = "host"
)

// Path keywords of Confine.Read and Confine.Write.
const (
	PathRelease = "release" // the command's release directory
	PathScratch = "scratch" // a fresh private directory per invocation
)

// Confine is a template's confinement. A nil *Confine is an unconfined
// template: the command runs with the owner's rights (contained all the
// same: nothing it starts outlives the invocation). A non-nil one
// restricts the filesystem to Read and Write (absolute paths, "release"
// and "scratch"; everything else is unreachable), the network to Network,
// and the limits that are not zero; it always means no new privileges and
// an environment of the protocol's variables only.
type Confine struct {
	Network    string   `json:"network,omitempty"` // "" means host
	Read       []string `json:"read,omitempty"`
	Write      []string `json:"write,omitempty"`
	Processes  int      `json:"processes,omitzero"`
	MemoryMiB  int      `json:"memoryMiB,omitzero"`
	CPUSeconds int      `json:"cpuSeconds,omitzero"`
	FileMiB    int      `json:"fileMiB,omitzero"`
}

// Needs is what a command says it requires (commands[].execute.needs):
// network access, paths to read and to write ("~/" is the owner's home,
// "release" and "scratch" as in Confine), and how many processes it runs
// at once. It is checked against the template at publish; it grants
// nothing.
type Needs struct {
	Network   bool     `json:"network,omitempty"`
	Read      []string `json:"read,omitempty"`
	Write     []string `json:"write,omitempty"`
	Processes int      `json:"processes,omitzero"`
}

// UnmarshalJSON refuses a member it does not know wherever a Confine is
// read, even inside a lenient record: an unknown member is a restriction
// this rukh cannot apply (a newer rukh's, say), and dropping it would run
// calls less confined than their template says.
func (c *Confine) UnmarshalJSON(b []byte) error {
	type plain Confine
	return json.Unmarshal(b, (*plain)(c), json.RejectUnknownMembers(true))
}
