package kernel

import (
	"slices"
	"strconv"
)

// Eligibility says whether a command declared under apiVersion may be used
// programmatically (become an MCP tool), per SPEC §2: managed mode,
// foreground lifetime, machine.eligible, a declared execute.result,
// command-result/1 required, and only features the core registers. reason
// is a short sentence for rukh describe and publish --dry-run; it is "" when
// ok. Whether an endpoint supports c.Machine.Interaction is policy's call.
func Eligibility(apiVersion string, c *Command) (ok bool, reason string) {
	switch {
	case apiVersion != APIVersion2:
		return false, apiVersion + " commands run on the CLI only"
	case c.Execute.Mode == ModePassthrough:
		return false, "passthrough commands run on the CLI only"
	case c.Machine == nil:
		return false, "no machine declaration, so not eligible for programmatic use"
	case !c.Machine.Eligible:
		return false, "machine.eligible is false"
	case c.Execute.Lifetime != "" && c.Execute.Lifetime != LifetimeForeground:
		return false, "lifetime " + strconv.Quote(c.Execute.Lifetime) + " is not foreground"
	case c.Execute.Result == nil:
		return false, "no execute.result is declared"
	}
	for _, f := range c.Machine.RequiredFeatures {
		if v, known := Features[f.ID]; !known || v != f.Version {
			return false, "requires unsupported feature " + strconv.Quote(f.ID+"/"+strconv.Itoa(f.Version))
		}
	}
	if !slices.Contains(c.Machine.RequiredFeatures, Feature{ID: "command-result", Version: 1}) {
		return false, "does not require command-result/1"
	}
	return true, ""
}
