package policy

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"slices"
	"strings"
)

// ToolChange is one tool that appeared, disappeared or changed in place.
type ToolChange struct {
	Endpoint string `json:"endpoint"`
	Name     string `json:"name"`
	Command  string `json:"command"`
	Release  string `json:"release"`
}

// ToolRename is one command that stays published on an endpoint under a new
// name (compact and full names bind the revision id, so every publish
// renames them; stable names change only with the mode or the id).
type ToolRename struct {
	Endpoint   string `json:"endpoint"`
	Command    string `json:"command"`
	OldName    string `json:"oldName"`
	NewName    string `json:"newName"`
	OldRelease string `json:"oldRelease"`
	NewRelease string `json:"newRelease"`
}

// Changes is what a publish changes, for `rukh publish` to print. Lists are
// sorted; routes are their words joined by spaces; releases are name@version.
type Changes struct {
	Added   []ToolChange `json:"added,omitempty"`
	Removed []ToolChange `json:"removed,omitempty"`
	Renamed []ToolRename `json:"renamed,omitempty"`
	// Updated: same endpoint, command and name, but another release or
	// tool object (only possible when a revision id is reused).
	Updated []ToolChange `json:"updated,omitempty"`

	RoutesAdded   []string `json:"routesAdded,omitempty"`
	RoutesRemoved []string `json:"routesRemoved,omitempty"`
	RoutesChanged []string `json:"routesChanged,omitempty"` // same words, another kind or command

	ReleasesAdded   []string `json:"releasesAdded,omitempty"`
	ReleasesRemoved []string `json:"releasesRemoved,omitempty"`

	EndpointsAdded   []string `json:"endpointsAdded,omitempty"`
	EndpointsRemoved []string `json:"endpointsRemoved,omitempty"`

	ProfileChanged bool `json:"profileChanged,omitempty"`

	// ToolNames: endpoints whose tool name mode changed.
	ToolNames []ToolNamesChange `json:"toolNames,omitempty"`
}

// ToolNamesChange is an endpoint whose tool name mode changed. Stated is
// false when the new profile states no toolNames, so the change came from
// the default, not from the owner.
type ToolNamesChange struct {
	Endpoint string `json:"endpoint"`
	Old      string `json:"old"`
	New      string `json:"new"`
	Stated   bool   `json:"stated"`
}

// Empty reports whether nothing changed.
func (c Changes) Empty() bool {
	return len(c.Added) == 0 && len(c.Removed) == 0 && len(c.Renamed) == 0 && len(c.Updated) == 0 &&
		len(c.RoutesAdded) == 0 && len(c.RoutesRemoved) == 0 && len(c.RoutesChanged) == 0 &&
		len(c.ReleasesAdded) == 0 && len(c.ReleasesRemoved) == 0 &&
		len(c.EndpointsAdded) == 0 && len(c.EndpointsRemoved) == 0 && !c.ProfileChanged && len(c.ToolNames) == 0
}

// Diff compares two bindings; old may be nil (the first publish). Tools are
// matched per endpoint by command identity.
func Diff(old, new *Binding) Changes {
	if old == nil {
		old = &Binding{}
	}
	if new == nil {
		new = &Binding{}
	}
	var c Changes
	c.ProfileChanged = !bytes.Equal(old.Profile, new.Profile)
	diffEndpoints(&c, old, new)
	diffRoutes(&c, old.Routes, new.Routes)
	diffReleases(&c, old.Releases, new.Releases)
	sortChanges(&c)
	return c
}

// diffEndpoints adds to c the endpoints added and removed, the tool name
// modes changed, and every endpoint's tool changes.
func diffEndpoints(c *Changes, old, new *Binding) {
	oldEP := map[string]*Projection{}
	for i := range old.Endpoints {
		oldEP[old.Endpoints[i].Endpoint] = &old.Endpoints[i]
	}
	newEP := map[string]*Projection{}
	for i := range new.Endpoints {
		newEP[new.Endpoints[i].Endpoint] = &new.Endpoints[i]
	}
	stated := statedModes(new)
	for name, p := range newEP {
		o, ok := oldEP[name]
		if !ok {
			c.EndpointsAdded = append(c.EndpointsAdded, name)
			o = &Projection{}
		} else if om, nm := effectiveMode(o.ToolNames), effectiveMode(p.ToolNames); om != nm {
			c.ToolNames = append(c.ToolNames, ToolNamesChange{Endpoint: name, Old: om, New: nm, Stated: stated[name] != ""})
		}
		diffTools(c, name, o, p)
	}
	for name, o := range oldEP {
		if _, ok := newEP[name]; !ok {
			c.EndpointsRemoved = append(c.EndpointsRemoved, name)
			diffTools(c, name, o, &Projection{})
		}
	}
}

// diffRoutes adds to c the CLI routes added, removed, and changed in kind
// or command.
func diffRoutes(c *Changes, old, new []Route) {
	oldR := routeIndex(old)
	newR := routeIndex(new)
	for k, r := range newR {
		o, ok := oldR[k]
		switch {
		case !ok:
			c.RoutesAdded = append(c.RoutesAdded, k)
		case o.Kind != r.Kind || o.Command != r.Command:
			c.RoutesChanged = append(c.RoutesChanged, k)
		}
	}
	for k := range oldR {
		if _, ok := newR[k]; !ok {
			c.RoutesRemoved = append(c.RoutesRemoved, k)
		}
	}
}

// diffReleases adds to c the releases added and removed.
func diffReleases(c *Changes, old, new []BoundRelease) {
	oldRel := map[string]bool{}
	for _, r := range old {
		oldRel[r.Name+"@"+r.Version] = true
	}
	newRel := map[string]bool{}
	for _, r := range new {
		newRel[r.Name+"@"+r.Version] = true
	}
	for k := range newRel {
		if !oldRel[k] {
			c.ReleasesAdded = append(c.ReleasesAdded, k)
		}
	}
	for k := range oldRel {
		if !newRel[k] {
			c.ReleasesRemoved = append(c.ReleasesRemoved, k)
		}
	}
}

// sortChanges puts every list of c in a stable order: the maps Diff
// walks have none.
func sortChanges(c *Changes) {
	byTool := func(a, b ToolChange) int {
		return cmp.Or(strings.Compare(a.Endpoint, b.Endpoint), strings.Compare(a.Name, b.Name))
	}
	slices.SortFunc(c.Added, byTool)
	slices.SortFunc(c.Removed, byTool)
	slices.SortFunc(c.Updated, byTool)
	slices.SortFunc(c.ToolNames, func(a, b ToolNamesChange) int { return strings.Compare(a.Endpoint, b.Endpoint) })
	slices.SortFunc(c.Renamed, func(a, b ToolRename) int {
		return cmp.Or(strings.Compare(a.Endpoint, b.Endpoint), strings.Compare(a.Command, b.Command))
	})
	for _, s := range [][]string{c.RoutesAdded, c.RoutesRemoved, c.RoutesChanged, c.ReleasesAdded, c.ReleasesRemoved, c.EndpointsAdded, c.EndpointsRemoved} {
		slices.Sort(s)
	}
}

func diffTools(c *Changes, endpoint string, old, new *Projection) {
	oldT := make(map[string]*Tool, len(old.Tools))
	for i := range old.Tools {
		oldT[old.Tools[i].Command] = &old.Tools[i]
	}
	seen := make(map[string]bool, len(new.Tools))
	for i := range new.Tools {
		t := &new.Tools[i]
		seen[t.Command] = true
		o, ok := oldT[t.Command]
		switch {
		case !ok:
			c.Added = append(c.Added, ToolChange{endpoint, t.Name, t.Command, t.Release})
		case o.Name != t.Name:
			c.Renamed = append(c.Renamed, ToolRename{endpoint, t.Command, o.Name, t.Name, o.Release, t.Release})
		case o.Release != t.Release || !sameObject(o, t):
			c.Updated = append(c.Updated, ToolChange{endpoint, t.Name, t.Command, t.Release})
		}
	}
	for i := range old.Tools {
		if o := &old.Tools[i]; !seen[o.Command] {
			c.Removed = append(c.Removed, ToolChange{endpoint, o.Name, o.Command, o.Release})
		}
	}
}

func routeIndex(routes []Route) map[string]Route {
	m := make(map[string]Route, len(routes))
	for _, r := range routes {
		m[strings.Join(r.Words, " ")] = r
	}
	return m
}

// sameObject compares two tools' objects: by Wire when both hold one,
// otherwise by the Sum of their bodies.
func sameObject(a, b *Tool) bool {
	if a.Wire != nil && b.Wire != nil {
		return bytes.Equal(a.Wire, b.Wire)
	}
	return a.bodySum() == b.bodySum()
}

// bodySum is Sum, computed from Wire when the tool has none.
func (t *Tool) bodySum() [32]byte {
	if t.Sum != ([32]byte{}) || t.Wire == nil {
		return t.Sum
	}
	body, err := toolBodyOf(t)
	if err != nil || compactLine(&body) != nil {
		return sha256.Sum256(t.Wire)
	}
	return sha256.Sum256(body)
}
