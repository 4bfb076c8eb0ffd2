package commands

import (
	"strings"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
)

// pinCLI pins a CLI call of bc and returns its release directory. A refusal
// is the call's execution_failed outcome (exit 3); under --output json its
// envelope is printed too.
func (a *app) pinCLI(t cliTarget, bc *policy.BoundCommand, output string) (dir string, unpin func(), err error) {
	if dir, err = t.releaseDir(bc); err != nil {
		return "", nil, err
	}
	name, version, _ := strings.Cut(bc.Release, "@")
	br := &policy.BoundRelease{Name: name, Version: version, Digest: bc.Digest, Development: bc.Development}
	if unpin, err = a.h.PinCall(t.revision, br, t.untrusted); err != nil {
		if output == "json" {
			_ = printJSON(a.stdout, kernel.Result{InvocationID: kernel.NewInvocationID(), Outcome: kernel.ExecutionFailed, Reason: err.Error()})
		}
		return "", nil, &exitError{code: outcomeExit(kernel.ExecutionFailed), outcome: string(kernel.ExecutionFailed), err: err}
	}
	return dir, unpin, nil
}
