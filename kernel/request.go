package kernel

import (
	"context"
	"io"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// Request is the canonical invocation request: the one value both the CLI
// and MCP inputs turn into after the shared conversion and check. Input
// holds checked, typed, defaulted values keyed by param id: string, bool,
// int64, float64, Decimal (normalised text) or []any of those. Explicit lists
// the param ids the caller gave, in declaration order.
type Request struct {
	Command  string
	Input    map[string]any
	Explicit []string
}

// Decimal is an exact decimal number in shortest canonical text ("1.5").
type Decimal string

// Outcome is the one final outcome of an invocation.
type Outcome string

const (
	Succeeded       Outcome = "succeeded"
	CommandFailed   Outcome = "command_failed"
	ExecutionFailed Outcome = "execution_failed"
	Rejected        Outcome = "rejected"
	Cancelled       Outcome = "cancelled"
)

// Progress is one progress message from a running command.
type Progress struct {
	Message  string   `json:"message,omitempty"`
	Progress *float64 `json:"progress,omitempty"`
	Total    *float64 `json:"total,omitempty"`
}

// Limits bound one invocation. Zero fields take the template defaults
// (docs/profile.md). The
// caller bounds the child's streams itself (Invocation.Stdout/Stderr, e.g.
// a Diagnostics of the template's size).
type Limits struct {
	Timeout     time.Duration // default 30s
	ResultBytes int           // default 128 KiB
	// Confine is the template's confinement (nil: unconfined) and Template
	// its name, for the reasons a confined call is refused or stopped.
	Confine  *Confine
	Template string
	// Refuse, when set, runs nothing: it is the reason (the template
	// could not be read, so what it allows is unknown).
	Refuse string
}

// Invocation is everything the kernel needs to run one managed command.
// Stdin nil means a closed stdin. Stdout/Stderr receive the child's streams
// (the terminal on the CLI, bounded diagnostics under MCP).
type Invocation struct {
	ID          string
	Command     *Command
	Dir         string // the release directory the program lives in
	Request     Request
	Interactive bool
	Caller      Caller // who asked; sent to the child in the invoke message
	Limits      Limits
	Stdin       io.Reader
	Stdout      io.Writer
	Stderr      io.Writer
	OnProgress  func(Progress)
	// Terminal keeps the program in the caller's session, so it can reach
	// the caller's controlling terminal (the CLI). Otherwise it has no
	// controlling terminal (MCP): it starts in a new session, or, where rukh
	// itself has none (DetachTerminal), in a process group of its own.
	Terminal bool
	// Package is the name of the release the command belongs to, and
	// Settings its declared settings: when there are any, the runner asks
	// Runner.Settings for their values as the call starts.
	Package  string
	Settings []Setting
}

// Caller says who asked for an invocation, as the core knows it (never as
// a client claims it): the transport, the endpoint's launch binding and its
// subject, and for an authenticating transport the agent and the kind of
// credential it presented (with an identity provider's token, its issuer,
// and the token's subject as the subject). Empty fields are left out of the invoke message.
// There is no member for the token itself: a secret never reaches an
// extension.
type Caller struct {
	Transport  string `json:"transport"`            // "cli", "stdio" or "http"
	Endpoint   string `json:"endpoint,omitempty"`   // the profile endpoint (not on the CLI)
	Subject    string `json:"subject,omitempty"`    // the endpoint's subject; "owner" on the CLI
	Agent      string `json:"agent,omitempty"`      // the authenticated agent, or AnonymousAgent
	Credential string `json:"credential,omitempty"` // CredentialStatic, CredentialShortLived, CredentialOneTime or CredentialOAuth
	Issuer     string `json:"issuer,omitempty"`     // an oauth credential's identity provider (its iss)
}

// Caller transports.
const (
	TransportCLI   = "cli"
	TransportStdio = "stdio"
	TransportHTTP  = "http"
)

// CLICaller is the caller of a command run from the terminal: the owner of
// the home, whatever the profile's endpoints say.
var CLICaller = Caller{Transport: TransportCLI, Subject: "owner"}

// Result is the final word on one invocation. CommandResult is the checked
// {"kind":"text","text":…} or {"kind":"structured","data":…} object, present
// only when the report carried one that passed its checks.
type Result struct {
	InvocationID  string         `json:"invocationId"`
	Outcome       Outcome        `json:"outcome"`
	Reason        string         `json:"reason,omitempty"`
	CommandResult jsontext.Value `json:"commandResult,omitempty"`
}

// Invoker runs invocations; ctx cancellation is the owner's or client's
// cancel (cancel message, then SIGTERM, then SIGKILL at the stop deadline).
type Invoker interface {
	Invoke(ctx context.Context, inv *Invocation) Result
}
