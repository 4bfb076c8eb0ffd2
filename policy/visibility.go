package policy

import (
	"bytes"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
)

// Visible returns the projection an endpoint's launch binding sees in this
// revision. Visibility is computed per request from the revision, never
// stored as a permission; today every subject of an endpoint sees the
// endpoint's whole projection. An unknown endpoint is CodeNotFound.
func Visible(b *Binding, endpoint string) (*Projection, error) {
	if b == nil {
		return nil, kernel.Errorf(kernel.CodeNotFound, "no revision is published").WithHint("run `rukh publish`")
	}
	var names []string
	for i := range b.Endpoints {
		if b.Endpoints[i].Endpoint == endpoint {
			return &b.Endpoints[i], nil
		}
		names = append(names, b.Endpoints[i].Endpoint)
	}
	return nil, kernel.Errorf(kernel.CodeNotFound, "%s", "unknown endpoint "+strconv.Quote(endpoint)).
		WithHint("published endpoints: " + strings.Join(names, ", ") + "; add others to the profile with 'rukh policy set' and publish")
}

// Command finds a bound command by identity (commands are sorted by id).
func (b *Binding) Command(id string) (*BoundCommand, bool) {
	i, ok := slices.BinarySearchFunc(b.Commands, id, func(c BoundCommand, id string) int { return strings.Compare(c.Declaration.ID, id) })
	if !ok {
		return nil, false
	}
	return &b.Commands[i], true
}

// Children returns the routes exactly one word below prefix, sorted; with
// an empty prefix, the top-level routes.
func (b *Binding) Children(prefix []string) []Route {
	var out []Route
	start := 0
	if len(prefix) > 0 {
		i, found := b.findRoute(prefix)
		if !found {
			return nil
		}
		start = i + 1
	}
	for _, r := range b.Routes[start:] {
		if len(prefix) > 0 && !hasPrefix(r.Words, prefix) {
			break // sorted: the subtree of prefix is contiguous
		}
		if len(r.Words) == len(prefix)+1 {
			out = append(out, r)
		}
	}
	return out
}

func (b *Binding) findRoute(words []string) (int, bool) {
	return slices.BinarySearchFunc(b.Routes, words, func(r Route, w []string) int { return slices.Compare(r.Words, w) })
}

func hasPrefix(words, prefix []string) bool {
	return len(words) >= len(prefix) && slices.Equal(words[:len(prefix)], prefix)
}

// Launch is what serve-mcp fixes for its life when it starts: the endpoint,
// its namespace, subject and template (docs/design.md, Visibility).
// Transports is what the revision read allows; serve-mcp checks it, it is not
// part of the binding.
type Launch struct {
	Endpoint   string
	Namespace  string
	Subject    string
	Template   Template
	Transports []string
	HTTPAuth   string     // "bearer", "none", "oauth" or "rukh+oauth"
	OAuth      *OAuth     // the identity provider of httpAuth oauth and rukh+oauth; nil otherwise
	Tasks      *Tasks     // nil: no background work
	ToolNames  string     // the endpoint's tool name mode (ToolNameMode)
	Discovery  *Discovery // nil: direct
}

// Serves reports whether the endpoint may be served on transport.
func (l *Launch) Serves(transport string) bool {
	return slices.Contains(l.Transports, transport)
}

// launchOf is endpoint's launch binding in p; false when p has no such
// endpoint.
func (p *Profile) launchOf(endpoint string) (*Launch, bool) {
	ep, ok := p.Endpoints[endpoint]
	if !ok {
		return nil, false
	}
	ep = ep.withDefaults()
	spec, _ := p.template(ep.Template)
	return &Launch{Endpoint: endpoint, Namespace: ep.Namespace, Subject: ep.Subject, Template: spec.template(ep.Template),
		Transports: slices.Clone(ep.Transports), HTTPAuth: ep.HTTPAuthMode(), Tasks: ep.Tasks.withDefaults(), ToolNames: ep.ToolNameMode(), OAuth: ep.OAuth.clone(), Discovery: ep.Discovery.clone()}, true
}

// LaunchFrom reads an endpoint's launch binding from a stored revision
// without decoding the revision: the profile is one of its first members,
// so only a few kilobytes of a large revision are read.
func LaunchFrom(binding []byte, endpoint string) (*Launch, error) {
	d := jsontext.NewDecoder(bytes.NewReader(binding))
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, kernel.Errorf(kernel.CodeInternal, "the revision is not a JSON object")
	}
	for d.PeekKind() == '"' {
		name, err := d.ReadToken()
		if err != nil {
			return nil, kernel.JSONError(err)
		}
		if name.String() != "profile" {
			if err := d.SkipValue(); err != nil {
				return nil, kernel.JSONError(err)
			}
			continue
		}
		raw, err := d.ReadValue()
		if err != nil {
			return nil, kernel.JSONError(err)
		}
		p, err := ParseProfile(raw)
		if err != nil {
			return nil, err
		}
		l, ok := p.launchOf(endpoint)
		if !ok {
			names := slices.Sorted(maps.Keys(p.Endpoints))
			return nil, kernel.Errorf(kernel.CodeNotFound, "%s", "the published profile has no endpoint "+strconv.Quote(endpoint)).
				WithHint("published endpoints: " + strings.Join(names, ", "))
		}
		return l, nil
	}
	return nil, kernel.Errorf(kernel.CodeInternal, "the revision has no profile")
}
