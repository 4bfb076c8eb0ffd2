package kernel

import (
	"slices"
	"strconv"
	"strings"
)

// Eligibility says whether a command declared under apiVersion may be used
// programmatically (become an MCP tool; docs/manifest.md, What makes a
// command a tool): managed mode,
// foreground lifetime, machine.eligible, a declared execute.result,
// command-result/1 required, and only features the core registers. reason
// is a short sentence for rukh describe and publish --dry-run; it is "" when
// ok. Whether an endpoint supports c.Machine.Interaction is policy's call.
func Eligibility(apiVersion string, c *Command) (ok bool, reason string) {
	reason, _ = ineligibility(apiVersion, c)
	return reason == "", reason
}

// EligibilityFix names the change to the manifest that removes the reason
// Eligibility gives, with the exact JSON to add; "" when c is eligible.
// Fixing it may reveal the next reason: the checks run in a fixed order.
func EligibilityFix(apiVersion string, c *Command) string {
	_, fix := ineligibility(apiVersion, c)
	return fix
}

// MachineJSON is the machine declaration a tool-ready command carries.
const MachineJSON = `"machine": {"eligible": true, "interaction": "none", "requiredFeatures": [{"id": "command-result", "version": 1}]}`

const commandResultJSON = `{"id": "command-result", "version": 1}`

func ineligibility(apiVersion string, c *Command) (reason, fix string) {
	switch {
	case apiVersion != APIVersion2:
		return apiVersion + " commands run on the CLI only",
			`change "apiVersion" to "` + APIVersion2 + `", then add "result": {"kind": "text"} to the command's "execute" and ` + MachineJSON + ` to the command`
	case c.Execute.Mode == ModePassthrough:
		return "passthrough commands run on the CLI only",
			`remove "mode": "passthrough" from "execute" (managed is the default), declare the command's inputs in "params" and read them from the rukh.invoke/1 channel (docs/extension-protocol.md)`
	case c.Machine == nil:
		return "no machine declaration, so not eligible for programmatic use",
			"add to the command: " + MachineJSON
	case !c.Machine.Eligible:
		return "machine.eligible is false", `set "eligible": true in the command's "machine"`
	case c.Execute.Lifetime != "" && c.Execute.Lifetime != LifetimeForeground:
		return "lifetime " + strconv.Quote(c.Execute.Lifetime) + " is not foreground",
			`remove "lifetime" from "execute" (or set "lifetime": "foreground"): only foreground commands are tools`
	case c.Execute.Result == nil:
		return "no execute.result is declared",
			`add to the command's "execute": "result": {"kind": "text"} (or {"kind": "structured", "schema": {…}}, docs/manifest.md)`
	}
	for _, f := range c.Machine.RequiredFeatures {
		if v, known := Features[f.ID]; !known || v != f.Version {
			name := f.ID + "/" + strconv.Itoa(f.Version)
			return "requires unsupported feature " + strconv.Quote(name),
				`remove {"id": ` + strconv.Quote(f.ID) + `, "version": ` + strconv.Itoa(f.Version) + `} from "machine.requiredFeatures" (this rukh supports ` + supportedFeatures() + `), or use a rukh that supports ` + name
		}
	}
	if !slices.Contains(c.Machine.RequiredFeatures, Feature{ID: "command-result", Version: 1}) {
		return "does not require command-result/1",
			`add ` + commandResultJSON + ` to "machine.requiredFeatures"`
	}
	return "", ""
}

func supportedFeatures() string {
	var names []string
	for id, v := range Features {
		names = append(names, id+"/"+strconv.Itoa(v))
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
