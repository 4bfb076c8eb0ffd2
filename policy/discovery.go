package policy

import (
	"fmt"
	"slices"
	"strings"
)

// Discovery modes of an endpoint (docs/discovery.md). Direct, the default,
// lists every published tool; progressive lists only the Direct tools and
// the three discovery tools, through which an agent finds, reads and calls
// the rest.
const (
	DiscoveryDirect      = "direct"
	DiscoveryProgressive = "progressive"
)

// The discovery tools' command ids: the tools a progressive endpoint
// serves after its listed ones. Their names follow the endpoint's mode,
// with no revision, like the job family's.
const (
	DiscoverySearch   = "rukh.search-tools"
	DiscoveryDescribe = "rukh.describe-tool"
	DiscoveryCall     = "rukh.call-tool"
)

// DiscoveryToolIDs lists the discovery tools in the order tools/list
// serves them.
var DiscoveryToolIDs = []string{DiscoverySearch, DiscoveryDescribe, DiscoveryCall}

// Discovery is how an endpoint's tools reach an agent. Nil on an Endpoint:
// the profile states none, the endpoint is direct, and the canonical form
// leaves it out. Direct names command ids or package names whose tools a
// progressive endpoint still lists.
type Discovery struct {
	Mode   string   `json:"mode,omitempty"`
	Direct []string `json:"direct,omitempty"`
}

type rawDiscovery struct {
	Mode   *string  `json:"mode"`
	Direct []string `json:"direct"`
}

// Progressive reports whether d lists only its direct tools.
func (d *Discovery) Progressive() bool { return d != nil && d.Mode == DiscoveryProgressive }

// Lists reports whether an endpoint with discovery d lists the tool of
// command id in package pkg: every tool in direct mode, the Direct ones
// in progressive mode.
func (d *Discovery) Lists(id, pkg string) bool {
	if !d.Progressive() {
		return true
	}
	return slices.Contains(d.Direct, id) || slices.Contains(d.Direct, pkg)
}

// discovery checks the explicit members and returns the block with its
// default mode.
func (r *rawDiscovery) discovery(path string) (*Discovery, error) {
	if r == nil {
		return nil, nil
	}
	d := &Discovery{Mode: DiscoveryDirect, Direct: r.Direct}
	if r.Mode != nil {
		switch *r.Mode {
		case DiscoveryDirect, DiscoveryProgressive:
			d.Mode = *r.Mode
		default:
			return nil, invalidAt(path+"/mode", fmt.Sprintf("unknown discovery mode %q: want direct or progressive", *r.Mode))
		}
	}
	if err := checkPublishList(path+"/direct", "command or package", r.Direct, commandIDs, "[a-z0-9][a-z0-9._-]{0,127}"); err != nil {
		return nil, err
	}
	if d.Mode == DiscoveryDirect && len(r.Direct) > 0 {
		e := invalidAt(path+"/direct", "a direct list only matters in progressive mode: in direct mode every published tool is listed")
		e.Hint = `set "mode": "progressive", or remove "direct"`
		return nil, e
	}
	return d, nil
}

func (d *Discovery) clone() *Discovery {
	if d == nil {
		return nil
	}
	c := *d
	if c.Mode == "" {
		c.Mode = DiscoveryDirect
	}
	c.Direct = sortedCopy(d.Direct)
	if len(c.Direct) == 0 {
		c.Direct = nil
	}
	return &c
}

// DiscoveryToolName is the name of discovery tool id on an endpoint.
func DiscoveryToolName(mode, namespace, id string) string { return ToolName(mode, namespace, "", id) }

// Package is the name of the release the tool's command belongs to.
func (t *Tool) Package() string {
	name, _, _ := strings.Cut(t.Release, "@")
	return name
}

// discoveryWarnings warns of a direct entry naming nothing the endpoint
// publishes: it lists nothing, so it is likely a mistake.
func discoveryWarnings(endpoint string, ep Endpoint, tools []Tool) []string {
	d := ep.Discovery
	if !d.Progressive() {
		return nil
	}
	var out []string
	for _, id := range d.Direct {
		if !slices.ContainsFunc(tools, func(t Tool) bool { return t.Command == id || t.Package() == id }) {
			out = append(out, fmt.Sprintf("endpoint %q: discovery.direct names %q, which the endpoint does not publish: it lists nothing (add it to publish, or remove it from discovery.direct)", endpoint, id))
		}
	}
	return out
}

// DiscoveryOf is the discovery of endpoint as the binding's profile has
// it; nil: direct (also for an endpoint the profile does not name).
func (b *Binding) DiscoveryOf(endpoint string) *Discovery {
	l, err := LaunchOf(b.Profile, endpoint)
	if err != nil || l == nil {
		return nil
	}
	return l.Discovery
}
