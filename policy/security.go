package policy

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/rukh-dev/rukh/kernel"
)

// Security levels of a published command (docs/agents.md), weakest first: the
// credential a remote caller must present to run it.
const (
	SecurityStandard = "standard" // a static key, a short-lived or a one-time token
	SecurityElevated = "elevated" // a short-lived or a one-time token
	SecurityStrict   = "strict"   // a one-time token only
)

// httpAuth modes of an endpoint. Bearer is the default; none is honoured
// only on a loopback listener (serve-http enforces that); oauth and
// rukh+oauth are in oauth.go.
const (
	HTTPAuthBearer = "bearer"
	HTTPAuthNone   = "none"
)

// SecurityLevels lists the levels, weakest first.
var SecurityLevels = []string{SecurityStandard, SecurityElevated, SecurityStrict}

// ErrInsufficientScope is wrapped by Authorize's refusals: the credential
// is valid but too weak for the command (HTTP 403, error="insufficient_scope").
var ErrInsufficientScope = errors.New("insufficient_scope")

// Security is an endpoint's per-command levels. Empty Default means
// standard; the canonical profile keeps it as the owner stated it.
type Security struct {
	Default  string            `json:"default,omitempty"`
	Commands map[string]string `json:"commands,omitempty"`
}

type rawSecurity struct {
	Default  *string           `json:"default"`
	Commands map[string]string `json:"commands"`
}

func (r *rawSecurity) security() Security {
	if r == nil {
		return Security{}
	}
	return Security{Default: deref(r.Default), Commands: r.Commands}
}

// SecurityLevel is the level of a command on the endpoint.
func (e Endpoint) SecurityLevel(command string) string {
	if l, ok := e.Security.Commands[command]; ok {
		return l
	}
	if e.Security.Default != "" {
		return e.Security.Default
	}
	return SecurityStandard
}

// HTTPAuthMode is the endpoint's effective httpAuth.
func (e Endpoint) HTTPAuthMode() string {
	if e.HTTPAuth == "" {
		return HTTPAuthBearer
	}
	return e.HTTPAuth
}

// Level is the tool's security level (standard when the revision states
// none: revisions published before levels existed).
func (t Tool) Level() string {
	if t.Security == "" {
		return SecurityStandard
	}
	return t.Security
}

// toolSecurity is what a Tool records: the level unless it is standard, so
// revisions without levels keep their bytes.
func toolSecurity(ep Endpoint, command string) string {
	if l := ep.SecurityLevel(command); l != SecurityStandard {
		return l
	}
	return ""
}

func checkLevel(path, l string) error {
	switch l {
	case SecurityStandard, SecurityElevated, SecurityStrict:
		return nil
	}
	return invalidAt(path, fmt.Sprintf("unknown security level %q: want standard, elevated or strict", l))
}

func validateSecurity(path string, ep Endpoint) error {
	if ep.Security.Default != "" {
		if err := checkLevel(path+"/security/default", ep.Security.Default); err != nil {
			return err
		}
	}
	for _, id := range slices.Sorted(maps.Keys(ep.Security.Commands)) {
		cp := path + "/security/commands/" + kernel.PointerToken(id)
		if !commandIDs.MatchString(id) {
			return invalidAt(cp, fmt.Sprintf("invalid command %q: want [a-z0-9][a-z0-9._-]{0,127}", id))
		}
		if err := checkLevel(cp, ep.Security.Commands[id]); err != nil {
			return err
		}
	}
	switch ep.HTTPAuth {
	case "", HTTPAuthBearer, HTTPAuthNone, HTTPAuthOAuth, HTTPAuthRukhOAuth:
	default:
		return invalidAt(path+"/httpAuth", fmt.Sprintf("unknown httpAuth %q: want bearer, none, oauth or rukh+oauth", ep.HTTPAuth))
	}
	return nil
}

func (s Security) clone() Security {
	if s.Commands != nil {
		s.Commands = maps.Clone(s.Commands)
	}
	return s
}

// securityWarnings names commands the endpoint gives a level but does not
// publish: most likely a typo, which would leave the real command at the
// default level.
func securityWarnings(epName string, ep Endpoint, tools []Tool) []string {
	return unpublishedWarnings(epName, "security.commands", slices.Sorted(maps.Keys(ep.Security.Commands)), tools)
}

// unpublishedWarnings names the commands ids, which field of endpoint
// epName lists, that the endpoint does not publish.
func unpublishedWarnings(epName, field string, ids []string, tools []Tool) []string {
	if len(ids) == 0 {
		return nil
	}
	published := make(map[string]bool, len(tools))
	for _, t := range tools {
		published[t.Command] = true
	}
	var out []string
	for _, id := range ids {
		if !published[id] {
			out = append(out, fmt.Sprintf("endpoint %q: %s names %q, which the endpoint does not publish", epName, field, id)+meantCommand(id, published))
		}
	}
	return out
}

// Authorize decides, before anything runs, whether a credential may call a
// command at a level: standard accepts any credential (and the anonymous
// caller of an endpoint with httpAuth none); elevated a short-lived or
// one-time token; strict only a one-time token, and only for its command
// when it was minted for one. A refusal wraps ErrInsufficientScope.
// Authorize does not consume a one-time token: the caller does that next.
func Authorize(level string, cred kernel.Credential, commandID string) error {
	var ok bool
	switch level {
	case "", SecurityStandard:
		ok = true
	case SecurityElevated:
		ok = cred.Kind == kernel.CredentialShortLived || cred.Kind == kernel.CredentialOneTime
	case SecurityStrict:
		ok = cred.Kind == kernel.CredentialOneTime
	default:
		return kernel.Errorf(kernel.CodeInternal, "unknown security level %q", level)
	}
	switch cred.Kind {
	case kernel.CredentialStatic, kernel.CredentialShortLived, kernel.CredentialOneTime, kernel.CredentialNone:
	default:
		return kernel.Errorf(kernel.CodeInternal, "unknown credential kind %q", cred.Kind)
	}
	if cred.Kind == kernel.CredentialOneTime && cred.Command != "" && cred.Command != commandID {
		return kernel.Errorf(kernel.CodeDenied, "the one-time token was minted for %s, not %s", cred.Command, commandID).
			Wrap(ErrInsufficientScope)
	}
	if !ok {
		need := "a short-lived or one-time token"
		if level == SecurityStrict {
			need = "a one-time token"
		}
		return kernel.Errorf(kernel.CodeDenied, "%s is %s: it needs %s, not a %s credential", commandID, level, need, cred.Kind).
			WithHint(mintHint(level, cred, commandID)).
			Wrap(ErrInsufficientScope)
	}
	return nil
}

func mintHint(level string, cred kernel.Credential, command string) string {
	if cred.Kind == kernel.CredentialNone {
		return fmt.Sprintf("endpoint %s has httpAuth none: give the agent a credential ('rukh agent add NAME --endpoint %s', then 'rukh agent token')", cred.Endpoint, cred.Endpoint)
	}
	flags := "--ttl 15m"
	if level == SecurityStrict {
		flags = "--once --command " + command
	}
	return fmt.Sprintf("the owner mints one with 'rukh agent token %s %s'", cred.Agent, flags)
}
