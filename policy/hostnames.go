package policy

import (
	"fmt"
	"strings"
)

// The job family's command ids: the tools an endpoint whose task policy
// sets jobTools serves after its own (status, result and cancel of a
// task). Their names follow the endpoint's mode, with no revision, so
// they stay the same across publishes.
const (
	JobToolStatus = "rukh.task-status"
	JobToolResult = "rukh.task-result"
	JobToolCancel = "rukh.task-cancel"
)

// JobToolIDs lists the job family in the order tools/list serves it.
var JobToolIDs = []string{JobToolStatus, JobToolResult, JobToolCancel}

// JobToolName is the name of job tool id on an endpoint.
func JobToolName(mode, namespace, id string) string { return ToolName(mode, namespace, "", id) }

// ServedToolNames lists every name tools/list serves on p: the tools it
// lists (all in direct mode), the discovery tools in progressive mode, then
// the job family when the endpoint's task policy publishes it.
func ServedToolNames(b *Binding, p *Projection) []string {
	d := b.DiscoveryOf(p.Endpoint)
	names := make([]string, 0, len(p.Tools)+len(DiscoveryToolIDs)+len(JobToolIDs))
	for _, t := range p.Tools {
		if d.Lists(t.Command, t.Package()) {
			names = append(names, t.Name)
		}
	}
	return append(append(names, DiscoveryToolNames(b, p)...), JobToolNames(b, p)...)
}

// DiscoveryToolNames lists the discovery tools' names on p, none unless
// the endpoint is progressive.
func DiscoveryToolNames(b *Binding, p *Projection) []string {
	if !b.DiscoveryOf(p.Endpoint).Progressive() {
		return nil
	}
	names := make([]string, len(DiscoveryToolIDs))
	for i, id := range DiscoveryToolIDs {
		names[i] = DiscoveryToolName(p.ToolNames, p.Namespace, id)
	}
	return names
}

// JobToolNames lists the job family's names on p, none when its task
// policy does not publish it.
func JobToolNames(b *Binding, p *Projection) []string {
	if tp := b.TasksOf(p.Endpoint); tp == nil || !tp.JobTools {
		return nil
	}
	names := make([]string, len(JobToolIDs))
	for i, id := range JobToolIDs {
		names[i] = JobToolName(p.ToolNames, p.Namespace, id)
	}
	return names
}

// DefaultServerKey is the key 'rukh mcp-config' registers an endpoint
// under in a host's configuration unless told another.
func DefaultServerKey(endpoint string) string { return "rukh-" + endpoint }

// HostToolName is the name hosts such as Claude give a tool of the server
// registered under key.
func HostToolName(key, tool string) string { return "mcp__" + key + "__" + tool }

// CheckServerKey refuses a server key hosts would not take or would read
// wrongly: letters, digits, '-' and '_' only, no "__" (the separator of
// host names), not empty.
func CheckServerKey(key string) error {
	if key == "" {
		return fmt.Errorf("a server key cannot be empty")
	}
	for _, r := range key {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fmt.Errorf("server key %q has %q: use letters, digits, '-' and '_'", key, r)
		}
	}
	if strings.Contains(key, "__") || strings.HasPrefix(key, "_") || strings.HasSuffix(key, "_") {
		return fmt.Errorf("server key %q would blur the \"__\" that separates it from the tool in mcp__KEY__TOOL", key)
	}
	if n := len(HostToolName(key, "")); n >= MaxHostToolName {
		return fmt.Errorf("server key %q leaves no room for a tool name within %d characters", key, MaxHostToolName)
	}
	return nil
}

// HostNamesWarning warns when a name of names, as hosts show it under
// server key (mcp__KEY__TOOL), is longer than they accept.
func HostNamesWarning(endpoint, mode, key string, names []string) (Warning, bool) {
	longest := ""
	for _, n := range names {
		if h := HostToolName(key, n); len(h) > len(longest) {
			longest = h
		}
	}
	if len(longest) <= MaxHostToolName {
		return Warning{}, false
	}
	room := MaxHostToolName - (len(longest) - len(key))
	fix := fmt.Sprintf("choose a server key of at most %d characters with 'rukh mcp-config --endpoint %s --name KEY'", max(room, 1), endpoint)
	other, what := ToolNamesCompact, "at most 42 characters"
	if effectiveMode(mode) == ToolNamesCompact {
		other, what = ToolNamesStable, "the command's slug alone"
	}
	fix += fmt.Sprintf(`, or set "toolNames": %q (%s) for endpoint %q in the profile and publish (%s)`, other, what, endpoint, ProfileDoc)
	return Warning{
		Message: fmt.Sprintf("endpoint %q: registered as server %q, hosts such as Claude name its tools mcp__%s__TOOL; the longest, %s, has %d characters, over the %d they accept",
			endpoint, key, key, longest, len(longest), MaxHostToolName),
		Fix: fix,
	}, true
}
