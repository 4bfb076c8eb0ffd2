package policy

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/rukh-dev/rukh/kernel"
)

// ProfileDoc is where the profile is documented for owners; fixes point there.
const ProfileDoc = "docs/profile.md"

// NotTool is a command of a binding that no endpoint publishes as a tool,
// with the reason and, where one exists, the fix.
type NotTool struct {
	Command string `json:"command"`
	Release string `json:"release"`
	Reason  string `json:"reason"`
	Fix     string `json:"fix,omitempty"`
}

// Warning is one thing a person should change, and how.
type Warning struct {
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
}

// EndpointReport is what one endpoint of a binding gives agents.
type EndpointReport struct {
	Endpoint        string `json:"endpoint"`
	Namespace       string `json:"namespace"`
	ToolNames       string `json:"toolNames"`       // the effective mode
	ToolNamesStated bool   `json:"toolNamesStated"` // false: the default, the profile states none
	Tools           int    `json:"tools"`           // what tools/list serves
	// Unlisted: tools a progressive endpoint publishes but does not list;
	// agents find them through its search tool.
	Unlisted    int       `json:"unlisted,omitzero"`
	LongestName int       `json:"longestName"`
	LongNames   int       `json:"longNames"` // names over MaxHostToolName characters
	Warnings    []Warning `json:"warnings,omitempty"`
}

// NotTools lists the commands of b that are a tool on no endpoint, in
// command id order.
// It is linear in the binding: the tools and releases are indexed once.
func NotTools(b *Binding) []NotTool {
	tools := map[string]bool{}
	for _, p := range b.Endpoints {
		for _, t := range p.Tools {
			tools[t.Command] = true
		}
	}
	withheld := map[string][]withheldOn{}
	for _, p := range b.Endpoints {
		for _, w := range p.Withheld {
			withheld[w.Command] = append(withheld[w.Command], withheldOn{p.Endpoint, w})
		}
	}
	api := make(map[string]string, len(b.Releases))
	for _, r := range b.Releases {
		api[r.Name+"@"+r.Version] = r.APIVersion
	}
	var out []NotTool
	for i := range b.Commands {
		bc := &b.Commands[i]
		if reason, fix := whyNotTool(bc, api[bc.Release], tools[bc.Declaration.ID], withheld[bc.Declaration.ID]); reason != "" {
			out = append(out, NotTool{Command: bc.Declaration.ID, Release: bc.Release, Reason: reason, Fix: fix})
		}
	}
	return out
}

// WhyNotTool says why bc is a tool on no endpoint of b and what fixes it;
// reason is "" when some endpoint publishes it.
func (b *Binding) WhyNotTool(bc *BoundCommand) (reason, fix string) {
	isTool := false
	var withheld []withheldOn
	for _, p := range b.Endpoints {
		for _, t := range p.Tools {
			if t.Command == bc.Declaration.ID {
				isTool = true
			}
		}
		for _, w := range p.Withheld {
			if w.Command == bc.Declaration.ID {
				withheld = append(withheld, withheldOn{p.Endpoint, w})
			}
		}
	}
	return whyNotTool(bc, b.apiVersion(bc.Release), isTool, withheld)
}

// withheldOn is a command an endpoint's template withheld.
type withheldOn struct {
	endpoint string
	w        Withheld
}

func whyNotTool(bc *BoundCommand, apiVersion string, isTool bool, withheld []withheldOn) (reason, fix string) {
	if ok, why := bc.Publishable(); !ok {
		return why, CommandFix(apiVersion, bc)
	}
	if isTool {
		return "", ""
	}
	if len(withheld) > 0 {
		// The first endpoint's reason: each fix publishes it somewhere.
		w := withheld[0]
		return fmt.Sprintf("not published on %s: %s", w.endpoint, w.w.Reason), w.w.Fix
	}
	return "eligible, but no endpoint publishes it", PublishFix(bc)
}

// CommandFix names the manifest change that makes bc publishable, given
// the apiVersion its release declares; "" when there is none to name.
func CommandFix(apiVersion string, bc *BoundCommand) string {
	if !bc.Eligible {
		return kernel.EligibilityFix(apiVersion, &bc.Declaration)
	}
	if m := bc.Declaration.Machine; m != nil && m.Interaction == kernel.InteractionRequired {
		return `if the command can run without asking, set "interaction": "optional" (or "none") in its "machine"; otherwise it stays CLI-only`
	}
	return ""
}

// PublishFix names the profile change that publishes an eligible command.
func PublishFix(bc *BoundCommand) string {
	pkg, _, _ := strings.Cut(bc.Release, "@")
	return fmt.Sprintf("add %q to \"publish.commands\" (or %q to \"publish.packages\") of an endpoint in the profile, then 'rukh policy set FILE' and 'rukh publish' (%s)",
		bc.Declaration.ID, pkg, ProfileDoc)
}

func (b *Binding) apiVersion(release string) string {
	for _, r := range b.Releases {
		if r.Name+"@"+r.Version == release {
			return r.APIVersion
		}
	}
	return ""
}

// Endpoints reports every endpoint of b, with a warning for names hosts
// reject and for an endpoint that gives agents no tools. noProfile says the
// owner never set a profile (b binds DefaultProfile).
func Endpoints(b *Binding, noProfile bool) []EndpointReport {
	stated := statedModes(b)
	var publishable []string // packages with at least one publishable command
	seen := map[string]bool{}
	for i := range b.Commands {
		bc := &b.Commands[i]
		pkg, _, _ := strings.Cut(bc.Release, "@")
		if ok, _ := bc.Publishable(); ok && !seen[pkg] {
			seen[pkg] = true
			publishable = append(publishable, pkg)
		}
	}
	out := make([]EndpointReport, 0, len(b.Endpoints))
	for _, p := range b.Endpoints {
		served := ServedToolNames(b, &p) // the job family too: what agents are served
		r := EndpointReport{Endpoint: p.Endpoint, Namespace: p.Namespace, ToolNames: effectiveMode(p.ToolNames),
			Tools: len(served)}
		if d := b.DiscoveryOf(p.Endpoint); d.Progressive() {
			for _, t := range p.Tools {
				if !d.Lists(t.Command, t.Package()) {
					r.Unlisted++
				}
			}
		}
		r.ToolNamesStated = stated[p.Endpoint] != ""
		for _, n := range served {
			r.LongestName = max(r.LongestName, len(n))
			if len(n) > MaxHostToolName {
				r.LongNames++
			}
		}
		if w, ok := LongNamesWarning(p); ok {
			r.Warnings = append(r.Warnings, w)
		} else if w, ok := HostNamesWarning(p.Endpoint, p.ToolNames, DefaultServerKey(p.Endpoint), served); ok {
			r.Warnings = append(r.Warnings, w)
		}
		if len(p.Tools) == 0 {
			r.Warnings = append(r.Warnings, zeroTools(b, p, noProfile, publishable))
		}
		out = append(out, r)
	}
	return out
}

// LongNamesWarning warns when an endpoint's tool names are longer than
// popular hosts accept.
func LongNamesWarning(p Projection) (Warning, bool) {
	n, longest := 0, 0
	for _, t := range p.Tools {
		if len(t.Name) > MaxHostToolName {
			n++
			longest = max(longest, len(t.Name))
		}
	}
	if n == 0 {
		return Warning{}, false
	}
	fix := fmt.Sprintf(`set "toolNames": "compact" for endpoint %q in the profile (at most 42 characters), then 'rukh policy set FILE' and 'rukh publish' (%s)`, p.Endpoint, ProfileDoc)
	return Warning{
		Message: fmt.Sprintf("endpoint %q: %d tool name(s) are longer than %d characters (up to %d, toolNames %s); hosts such as Claude, Cursor and Copilot reject them, counting their own prefix",
			p.Endpoint, n, MaxHostToolName, longest, effectiveMode(p.ToolNames)),
		Fix: fix,
	}, true
}

func zeroTools(b *Binding, p Projection, noProfile bool, publishable []string) Warning {
	example := "PACKAGE"
	if len(publishable) > 0 {
		example = strings.Join(quoteAll(publishable), ", ")
	}
	ep := p.Endpoint
	switch {
	case len(b.Commands) == 0:
		return Warning{
			Message: fmt.Sprintf("endpoint %q has 0 tools: no active release declares a command", ep),
			Fix:     fmt.Sprintf("'rukh install PATH' and 'rukh activate NAME', name the package in the profile's \"publish\" (%s), then 'rukh publish'", ProfileDoc),
		}
	case noProfile:
		return Warning{
			Message: fmt.Sprintf("endpoint %q has 0 tools: no profile is set, and the default profile publishes nothing to agents", ep),
			Fix: fmt.Sprintf(`write a profile such as {"endpoints": {%q: {"namespace": %q, "publish": {"packages": [%s]}}}} to a file, then 'rukh policy set FILE' and 'rukh publish' (%s)`,
				ep, p.Namespace, example, ProfileDoc),
		}
	case publishesNothing(b, ep):
		return Warning{
			Message: fmt.Sprintf("endpoint %q has 0 tools: its \"publish\" names no command and no package", ep),
			Fix: fmt.Sprintf(`add to endpoint %q in the profile "publish": {"packages": [%s]} (or command ids in "commands"), then 'rukh policy set FILE' and 'rukh publish' (%s)`,
				ep, example, ProfileDoc),
		}
	}
	return Warning{
		Message: fmt.Sprintf("endpoint %q has 0 tools: nothing its \"publish\" names is a tool", ep),
		Fix:     "fix the commands listed as not a tool, or name eligible commands or packages in the endpoint's \"publish\" (" + ProfileDoc + ")",
	}
}

func publishesNothing(b *Binding, endpoint string) bool {
	var prof Profile
	if json.Unmarshal(b.Profile, &prof) != nil {
		return false
	}
	ep := prof.Endpoints[endpoint]
	return len(ep.Publish.Commands) == 0 && len(ep.Publish.Packages) == 0
}

// statedModes maps each endpoint to the toolNames its profile states ("":
// none). A profile from before toolNames could be left out always states it.
func statedModes(b *Binding) map[string]string {
	var prof Profile
	m := map[string]string{}
	if b == nil || json.Unmarshal(b.Profile, &prof) != nil {
		return m
	}
	for name, ep := range prof.Endpoints {
		m[name] = ep.ToolNames
	}
	return m
}

// effectiveMode reads a projection's mode; revisions from before the mode
// was recorded used full names.
func effectiveMode(m string) string {
	if m == "" {
		return ToolNamesFull
	}
	return m
}

func quoteAll(s []string) []string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = strconv.Quote(v)
	}
	return q
}
