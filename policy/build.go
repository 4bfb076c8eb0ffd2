package policy

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
)

// MaxToolBytes bounds one tool's encoded object: a tools/list page holds at
// most 1 MiB and must always hold at least one tool.
const MaxToolBytes = 1 << 20

// DevEndpoint is the one endpoint that may publish development releases.
const DevEndpoint = "dev"

var revisionRE = lazyRegexp(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)

// toolName is ToolName; tests replace it to force the hash collisions real
// fingerprints never produce.
var toolName = ToolName

// Input is one publish candidate: the revision id it will be stored under,
// the draft profile and the active releases with their parsed manifests.
type Input struct {
	Revision string
	Profile  *Profile // nil means DefaultProfile()
	Releases []ReleaseInput
}

// ReleaseInput is one active release. Empty Name, Version or APIVersion in
// BoundRelease are taken from the manifest; set ones must agree with it.
type ReleaseInput struct {
	BoundRelease
	Manifest *kernel.Manifest
}

// routeSide is one claimant of a CLI word path, for collision messages.
type routeSide struct {
	kind    string // RouteCommand, RouteAlias, RouteGroup
	command string
	release string
}

func (s routeSide) String() string {
	switch s.kind {
	case RouteAlias:
		return fmt.Sprintf("alias of %s (%s)", s.command, s.release)
	case RouteGroup:
		return fmt.Sprintf("group of %s (%s)", s.command, s.release)
	}
	return fmt.Sprintf("command %s (%s)", s.command, s.release)
}

// Build validates a draft as one candidate (SPEC §3) and returns the
// Binding to store as the revision, plus warnings for a person (publish
// entries naming nothing installed, explicitly named commands that cannot
// be tools). The same Input always yields a byte-identical Binding. Errors
// are *kernel.Error: CodeConflict for collisions, CodeInvalid otherwise.
func Build(in Input) (*Binding, []string, error) {
	if !revisionRE.MatchString(in.Revision) {
		return nil, nil, kernel.Errorf(kernel.CodeInvalid, "invalid revision id %q", in.Revision)
	}
	prof := in.Profile
	if prof == nil {
		prof = DefaultProfile()
	}
	if err := prof.Validate(); err != nil {
		var ke *kernel.Error
		if errors.As(err, &ke) {
			return nil, nil, ke.WithHint("fix the draft profile with `rukh policy set`")
		}
		return nil, nil, err
	}
	prof = prof.normalized()

	b := &Binding{Revision: in.Revision, Profile: prof.Canonical()}
	releases, err := boundReleases(in.Releases)
	if err != nil {
		return nil, nil, err
	}
	active := make(map[string]bool, len(releases))
	dev := map[string]bool{} // release name@version → is a development release
	for _, r := range releases {
		b.Releases = append(b.Releases, r.BoundRelease)
		active[r.Name] = true
		if r.Development {
			dev[r.Name+"@"+r.Version] = true
		}
	}

	// Command identities, unique across the generation.
	owner := map[string]int{} // command id -> index into b.Commands
	byPackage := map[string][]int{}
	for _, r := range releases {
		rel := r.Name + "@" + r.Version
		for i := range r.Manifest.Commands {
			c := &r.Manifest.Commands[i]
			if inBuiltinNamespace(c.ID) {
				return nil, nil, &kernel.Error{Code: kernel.CodeInvalid, Message: fmt.Sprintf("command %s (%s) is in the built-in rukh namespace", c.ID, rel)}
			}
			if j, dup := owner[c.ID]; dup {
				return nil, nil, &kernel.Error{Code: kernel.CodeConflict,
					Message: fmt.Sprintf("command identity %q is declared by both %s and %s", c.ID, b.Commands[j].Release, rel),
					Hint:    "deactivate one of the two packages"}
			}
			ok, reason := kernel.Eligibility(r.APIVersion, c)
			owner[c.ID] = len(b.Commands)
			byPackage[r.Name] = append(byPackage[r.Name], len(b.Commands))
			b.Commands = append(b.Commands, BoundCommand{Release: rel, Digest: r.Digest, Declaration: *c, Eligible: ok, Reason: reasonIf(!ok, reason)})
		}
	}

	if b.Routes, err = buildRoutes(b.Commands); err != nil {
		return nil, nil, err
	}

	// Projections. Tool bodies do not depend on the endpoint, so each is
	// encoded once and only the name is spliced in per endpoint.
	bodies := map[int][]byte{}
	startedBodies := map[int][]byte{} // task commands of endpoints with the job family
	var warnings []string
	for _, epName := range sortedKeys(prof.Endpoints) {
		ep := prof.Endpoints[epName]
		mode := ep.ToolNameMode()
		tmpl, _ := prof.template(ep.Template)
		proj := Projection{
			Endpoint:  epName,
			Namespace: ep.Namespace,
			ToolNames: mode,
			Subject:   ep.Subject,
			Template:  tmpl.template(),
			Tools:     []Tool{},
		}
		selected := map[int]bool{}
		devLeftOut := map[string][]string{} // release → command ids this endpoint may not publish
		for _, id := range ep.Publish.Commands {
			i, ok := owner[id]
			if !ok {
				warnings = append(warnings, fmt.Sprintf("endpoint %q: publish.commands names %q, which no active release declares", epName, id))
				continue
			}
			if ok, reason := b.Commands[i].Publishable(); !ok {
				warnings = append(warnings, fmt.Sprintf("endpoint %q: command %s (%s) is not published: %s", epName, id, b.Commands[i].Release, reason))
				continue
			}
			selected[i] = true
		}
		// A development release is never published anywhere but the dev
		// endpoint, whatever the publish lists say.
		if epName != DevEndpoint {
			for i := range selected {
				if rel := b.Commands[i].Release; dev[rel] {
					devLeftOut[rel] = append(devLeftOut[rel], b.Commands[i].Declaration.ID)
					delete(selected, i)
				}
			}
		}
		for _, pkg := range ep.Publish.Packages {
			idx, ok := byPackage[pkg]
			if !ok {
				if !active[pkg] {
					warnings = append(warnings, fmt.Sprintf("endpoint %q: publish.packages names %q, which is not an active package", epName, pkg))
				}
				continue
			}
			for _, i := range idx {
				if ok, _ := b.Commands[i].Publishable(); !ok {
					continue
				}
				if rel := b.Commands[i].Release; dev[rel] && epName != DevEndpoint {
					if !slices.Contains(devLeftOut[rel], b.Commands[i].Declaration.ID) {
						devLeftOut[rel] = append(devLeftOut[rel], b.Commands[i].Declaration.ID)
					}
					continue
				}
				selected[i] = true
			}
		}
		for _, rel := range sortedKeys(devLeftOut) {
			ids := slices.Sorted(slices.Values(devLeftOut[rel]))
			warnings = append(warnings, fmt.Sprintf("endpoint %q: %s is a development release, published only on endpoint %q: left out %s",
				epName, rel, DevEndpoint, strings.Join(ids, ", ")))
		}
		names := make(map[string]string, len(selected))
		for _, i := range sortedInts(selected) {
			bc := &b.Commands[i]
			id := bc.Declaration.ID
			name := toolName(mode, ep.Namespace, b.Revision, id)
			if other, dup := names[name]; dup {
				hint := `set "toolNames": "full" for this endpoint in the profile, or change the id of one of the two commands`
				if mode == ToolNamesStable {
					hint = `set "toolNames": "compact" for this endpoint in the profile (compact names carry a fingerprint of the whole id), or change the id of one of the two commands`
				}
				return nil, nil, &kernel.Error{Code: kernel.CodeConflict, Path: "/endpoints/" + pointerToken(epName),
					Message: fmt.Sprintf("commands %s (%s) and %s (%s) would both be tool %q (toolNames %s)",
						other, b.Commands[owner[other]].Release, id, bc.Release, name, mode),
					Hint: hint}
			}
			names[name] = id
			started := ep.Tasks != nil && ep.Tasks.JobTools && ep.Tasks.Allows(id)
			cache := bodies
			if started {
				cache = startedBodies
			}
			body, ok := cache[i]
			if !ok {
				if body, err = toolBody(bc, started); err != nil {
					return nil, nil, err
				}
				cache[i] = body
			}
			wire := make([]byte, 0, len(body)+len(name)+12)
			wire = append(wire, `{"name":"`...)
			wire = append(wire, name...)
			wire = append(wire, `",`...)
			wire = append(wire, body[1:]...)
			if len(wire) > MaxToolBytes {
				return nil, nil, &kernel.Error{Code: kernel.CodeInvalid,
					Message: fmt.Sprintf("command %s (%s): tool object is %d bytes, over the %d-byte page limit", id, bc.Release, len(wire), MaxToolBytes)}
			}
			proj.Tools = append(proj.Tools, Tool{Name: name, Command: id, Release: bc.Release, Wire: jsontext.Value(wire), Security: toolSecurity(ep, id)})
		}
		warnings = append(warnings, securityWarnings(epName, ep, proj.Tools)...)
		warnings = append(warnings, taskWarnings(epName, ep, proj.Tools)...)
		slices.SortFunc(proj.Tools, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
		b.Endpoints = append(b.Endpoints, proj)
	}

	slices.SortFunc(b.Commands, func(x, y BoundCommand) int { return strings.Compare(x.Declaration.ID, y.Declaration.ID) })
	if b.Releases == nil {
		b.Releases = []BoundRelease{}
	}
	if b.Commands == nil {
		b.Commands = []BoundCommand{}
	}
	if b.Endpoints == nil {
		b.Endpoints = []Projection{}
	}
	return b, warnings, nil
}

// boundReleases checks the releases against their manifests and orders them
// by package name, so input order never changes the result.
func boundReleases(in []ReleaseInput) ([]ReleaseInput, error) {
	out := make([]ReleaseInput, 0, len(in))
	seen := map[string]string{}
	for _, r := range in {
		m := r.Manifest
		if m == nil {
			return nil, kernel.Errorf(kernel.CodeInternal, "release %s@%s has no manifest", r.Name, r.Version)
		}
		checks := []struct{ what, have, want string }{
			{"name", r.Name, m.Name}, {"version", r.Version, m.Version}, {"apiVersion", r.APIVersion, m.APIVersion},
		}
		if r.Development {
			checks = slices.Delete(checks, 1, 2) // recorded under the store's development version
		}
		for _, f := range checks {
			if f.have != "" && f.have != f.want {
				return nil, kernel.Errorf(kernel.CodeInternal, "release %s@%s: %s %q disagrees with its manifest (%q)", m.Name, m.Version, f.what, f.have, f.want)
			}
		}
		if r.Development && r.Version == "" {
			return nil, kernel.Errorf(kernel.CodeInternal, "development release of %s has no version", m.Name)
		}
		r.Name, r.Version, r.APIVersion = m.Name, cmp.Or(r.Version, m.Version), m.APIVersion
		if v, dup := seen[r.Name]; dup {
			return nil, &kernel.Error{Code: kernel.CodeConflict,
				Message: fmt.Sprintf("package %s has two active releases: %s and %s", r.Name, v, r.Version)}
		}
		seen[r.Name] = r.Version
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b ReleaseInput) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// buildRoutes computes the CLI routes: every command path and alias and
// every group prefix of them. It is linear in the number of words: all
// checks are map lookups.
func buildRoutes(cmds []BoundCommand) ([]Route, error) {
	type terminal struct {
		words []string
		side  routeSide
	}
	terms := map[string]routeSide{}
	var order []terminal
	add := func(words []string, side routeSide) error {
		key := strings.Join(words, " ")
		if len(words) == 0 {
			return &kernel.Error{Code: kernel.CodeInvalid, Message: fmt.Sprintf("%s has an empty path", side)}
		}
		if kernel.IsBuiltinVerb(words[0]) {
			return &kernel.Error{Code: kernel.CodeConflict, Message: fmt.Sprintf("route %q: %s collides with built-in verb %q", key, side, words[0])}
		}
		if prev, dup := terms[key]; dup {
			return &kernel.Error{Code: kernel.CodeConflict, Message: fmt.Sprintf("route %q: %s collides with %s", key, prev, side)}
		}
		terms[key] = side
		order = append(order, terminal{words, side})
		return nil
	}
	// Canonical paths first, so a collision blames the alias.
	for i := range cmds {
		c := &cmds[i]
		if err := add(c.Declaration.Path, routeSide{RouteCommand, c.Declaration.ID, c.Release}); err != nil {
			return nil, err
		}
	}
	for i := range cmds {
		c := &cmds[i]
		for _, a := range c.Declaration.Aliases {
			if err := add(a, routeSide{RouteAlias, c.Declaration.ID, c.Release}); err != nil {
				return nil, err
			}
		}
	}
	groups := map[string]routeSide{}
	routes := make([]Route, 0, len(order)*2)
	for _, t := range order {
		for n := 1; n < len(t.words); n++ {
			key := strings.Join(t.words[:n], " ")
			if term, clash := terms[key]; clash {
				return nil, &kernel.Error{Code: kernel.CodeConflict,
					Message: fmt.Sprintf("route %q: %s collides with group of %s (%s)", key, term, t.side.command, t.side.release)}
			}
			if _, ok := groups[key]; !ok {
				groups[key] = routeSide{RouteGroup, t.side.command, t.side.release}
				routes = append(routes, Route{Words: slices.Clone(t.words[:n]), Kind: RouteGroup})
			}
		}
		routes = append(routes, Route{Words: slices.Clone(t.words), Kind: t.side.kind, Command: t.side.command})
	}
	slices.SortFunc(routes, func(a, b Route) int { return slices.Compare(a.Words, b.Words) })
	return routes, nil
}

// Publishable reports whether an endpoint may publish the command as a tool,
// and why not: it must be eligible, and the base MCP adapter is
// non-interactive, so interaction "required" rules it out ("optional" runs
// with interaction unavailable). Publication still needs the endpoint's
// publish list to name it.
func (bc *BoundCommand) Publishable() (bool, string) {
	if !bc.Eligible {
		return false, bc.Reason
	}
	if m := bc.Declaration.Machine; m != nil && m.Interaction == kernel.InteractionRequired {
		return false, "it requires interaction and the MCP adapter is non-interactive"
	}
	return true, ""
}

type wireAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// wireBody is the tool object without its name; Build splices the name in
// front so that "name" stays the first member.
type wireBody struct {
	Title        string           `json:"title,omitempty"`
	Description  string           `json:"description,omitempty"`
	InputSchema  jsontext.Value   `json:"inputSchema"`
	OutputSchema jsontext.Value   `json:"outputSchema"`
	Annotations  *wireAnnotations `json:"annotations,omitempty"`
}

// toolBody is bc's tool object; started declares the job family's started
// answer in its output schema (SPEC §11).
func toolBody(bc *BoundCommand, started bool) ([]byte, error) {
	c := &bc.Declaration
	in, err := kernel.InputSchema(c)
	if err != nil {
		return nil, wrapCommand(err, bc, "input schema")
	}
	outputSchema := kernel.OutputSchema
	if started {
		outputSchema = kernel.StartedOutputSchema
	}
	out, err := outputSchema(c)
	if err != nil {
		return nil, wrapCommand(err, bc, "output schema")
	}
	w := wireBody{Title: c.Summary, InputSchema: in, OutputSchema: out}
	if h := c.Hints; h != nil {
		if h.Title != "" {
			w.Title = h.Title
		}
		a := wireAnnotations{Title: h.Title, ReadOnlyHint: h.ReadOnly, DestructiveHint: h.Destructive, IdempotentHint: h.Idempotent, OpenWorldHint: h.OpenWorld}
		if a != (wireAnnotations{}) {
			w.Annotations = &a
		}
	}
	switch {
	case c.Summary != "" && c.Description != "":
		w.Description = c.Summary + "\n\n" + c.Description
	default:
		w.Description = c.Summary + c.Description
	}
	body, err := json.Marshal(w, json.Deterministic(true))
	if err != nil {
		return nil, wrapCommand(err, bc, "encode tool")
	}
	return body, nil
}

func wrapCommand(err error, bc *BoundCommand, what string) error {
	code := kernel.ErrorCode(err)
	return &kernel.Error{Code: code, Message: fmt.Sprintf("command %s (%s): %s", bc.Declaration.ID, bc.Release, what), Err: err}
}

func reasonIf(cond bool, reason string) string {
	if cond {
		return reason
	}
	return ""
}

func sortedInts(set map[int]bool) []int {
	s := make([]int, 0, len(set))
	for i := range set {
		s = append(s, i)
	}
	slices.Sort(s)
	return s
}
