package kernel

import (
	"errors"
	"fmt"
)

// Code classifies an error so each edge can map it once: commands/ to exit
// codes, mcpstdio/ to JSON-RPC errors or isError results.
type Code string

const (
	// CodeInvalid: input, a manifest, a profile or a package breaks a rule.
	CodeInvalid Code = "invalid"
	// CodeUsage: the command line itself is wrong (unknown flag, missing argument).
	CodeUsage Code = "usage"
	// CodeNotFound: a named thing (release, key, revision, command) does not exist.
	CodeNotFound Code = "not_found"
	// CodeConflict: the request contradicts the current state (same name@version
	// with another digest, a route collision, a release still bound).
	CodeConflict Code = "conflict"
	// CodeDenied: trust or policy refuses the request.
	CodeDenied Code = "denied"
	// CodeUnsupported: a version or feature the core does not implement.
	CodeUnsupported Code = "unsupported"
	// CodeUnavailable: the store or another resource could not be reached in time.
	CodeUnavailable Code = "unavailable"
	// CodeInternal: a bug or an unexpected environment failure.
	CodeInternal Code = "internal"
)

// Error is Rukh's one error type. Path names the offending location when
// there is one (a JSON pointer such as /commands/0/params/1/default, or a
// file inside a package); Hint suggests the next step to a person. An Error
// is built one way: Errorf, then AtPath, WithHint and Wrap as needed.
type Error struct {
	Code    Code
	Message string
	Path    string
	Hint    string
	Err     error
}

func (e *Error) Error() string {
	msg := e.Message
	if e.Path != "" {
		msg = e.Path + ": " + msg
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// AtPath returns a copy of e located at path.
func (e *Error) AtPath(path string) *Error {
	c := *e
	c.Path = path
	return &c
}

// WithHint returns a copy of e carrying a hint.
func (e *Error) WithHint(hint string) *Error {
	c := *e
	c.Hint = hint
	return &c
}

// ErrorCode returns the code of the first *Error in err's chain, CodeInternal
// for any other non-nil error and "" for nil.
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// ErrorHint returns the hint of the first *Error in err's chain.
func ErrorHint(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Hint
	}
	return ""
}

// Wrap returns a copy of e wrapping err.
func (e *Error) Wrap(err error) *Error {
	c := *e
	c.Err = err
	return &c
}
