package policy

import (
	"bytes"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
)

// IndexSink receives a revision as records: the store's index writer is
// one. Only policy decides what goes into a declaration, a tool body, an
// endpoint's meta and the line --help shows for a route; the store decides
// how they are kept. The bytes a sink is given are its only during the
// call: a sink that keeps them keeps a copy.
type IndexSink interface {
	PutRevision(revision string, profile, releases []byte) error
	PutCommand(decl []byte) (ref string, err error)
	PutBody(body []byte) (ref string, err error)
	PutRoute(words []string, kind, command, decl, line string) error
	PutEndpoint(endpoint string, meta []byte) error
	// security is the command's level on the endpoint, "" for standard;
	// listed: tools/list lists the tool (all of a direct endpoint's, the
	// direct ones of a progressive one).
	PutTool(name, command, release, decl, body, security string, wireSize int, listed bool) error
}

// EndpointMeta is what the index keeps of an endpoint besides its tools:
// its launch binding.
type EndpointMeta struct {
	Namespace   string     `json:"namespace"`
	ToolNames   string     `json:"toolNames"`
	Subject     string     `json:"subject"`
	Template    Template   `json:"template"`
	Unavailable string     `json:"unavailable,omitempty"`
	Withheld    []Withheld `json:"withheld,omitempty"`
}

// DecodeEndpointMeta reads an endpoint's meta record.
func DecodeEndpointMeta(raw []byte) (EndpointMeta, error) {
	if m, ok := plainEndpointMeta(raw); ok {
		return m, nil
	}
	var m EndpointMeta
	if err := json.Unmarshal(raw, &m, json.RejectUnknownMembers(false)); err != nil {
		return m, kernel.JSONError(err)
	}
	return m, nil
}

// DecodeCommand reads a declaration record.
func DecodeCommand(raw []byte) (*BoundCommand, error) {
	if bc, ok := plainCommand(raw); ok {
		return bc, nil
	}
	var bc BoundCommand
	if err := json.Unmarshal(raw, &bc, json.RejectUnknownMembers(false)); err != nil {
		return nil, kernel.JSONError(err)
	}
	return &bc, nil
}

// DecodeReleases reads the releases record.
func DecodeReleases(raw []byte) ([]BoundRelease, error) {
	var rs []BoundRelease
	if err := json.Unmarshal(raw, &rs, json.RejectUnknownMembers(false)); err != nil {
		return nil, kernel.JSONError(err)
	}
	return rs, nil
}

const wireNamePrefix = `{"name":"`

// AppendToolWire appends the tool object: the name spliced in front of its
// body, so that "name" stays the first member.
func AppendToolWire(dst []byte, name string, body []byte) []byte {
	dst = append(dst, wireNamePrefix...)
	dst = append(dst, name...)
	if len(body) <= 2 {
		// {} (or damage CheckToolBody reports): the name alone.
		return append(dst, `"}`...)
	}
	dst = append(dst, `",`...)
	return append(dst, body[1:]...)
}

// CheckToolBody refuses a stored tool body that is not an object, which
// only a damaged store holds.
func CheckToolBody(name string, body []byte) error {
	if len(body) < 2 || body[0] != '{' || body[len(body)-1] != '}' {
		return kernel.Errorf(kernel.CodeInternal, "the stored object of tool %q is damaged: it is not a JSON object", name)
	}
	return nil
}

// toolBodyOf is the inverse of AppendToolWire.
func toolBodyOf(t *Tool) ([]byte, error) {
	p := wireNamePrefix + t.Name + `",`
	if !bytes.HasPrefix(t.Wire, []byte(p)) {
		return nil, kernel.Errorf(kernel.CodeInternal, "tool %q: its object does not start with its name", t.Name)
	}
	return append([]byte{'{'}, t.Wire[len(p):]...), nil
}

// WriteIndex writes b as index records into w. A revision in the index
// reads back (ReadIndex-style, in commands) as the same Binding.
func WriteIndex(b *Binding, w IndexSink) error {
	rels, err := json.Marshal(b.Releases, json.Deterministic(true))
	if err != nil {
		return kernel.Errorf(kernel.CodeInternal, "cannot encode the releases").Wrap(err)
	}
	if err := w.PutRevision(b.Revision, b.Profile, rels); err != nil {
		return err
	}
	dev := map[string]bool{}
	for _, r := range b.Releases {
		if r.Development {
			dev[r.Digest] = true
		}
	}
	refs := make(map[string]string, len(b.Commands)) // command id → decl ref
	summary := make(map[string]*BoundCommand, len(b.Commands))
	for i := range b.Commands {
		bc := &b.Commands[i]
		rec := *bc
		rec.Development = dev[bc.Digest]
		raw, err := json.Marshal(&rec, json.Deterministic(true))
		if err != nil {
			return kernel.Errorf(kernel.CodeInternal, "cannot encode command %s", bc.Declaration.ID).Wrap(err)
		}
		ref, err := w.PutCommand(raw)
		if err != nil {
			return err
		}
		refs[bc.Declaration.ID] = ref
		summary[bc.Declaration.ID] = bc
	}
	cmd := func(id string) (*BoundCommand, string) { return summary[id], refs[id] }
	if err := putRoutes(b.Routes, cmd, w); err != nil {
		return err
	}
	var prof *Profile
	if p, err := ParseProfile(b.Profile); err == nil {
		prof = p
	}
	for i := range b.Endpoints {
		p := &b.Endpoints[i]
		var disc *Discovery
		if prof != nil {
			disc = prof.Endpoints[p.Endpoint].Discovery
		}
		tools := slices.Clone(p.Tools)
		slices.SortFunc(tools, func(a, b Tool) int { return CompareTools(&a, &b) })
		// Bodies first, then the tools, as Stream sends them: a sink that
		// indexes for search finds all the bodies' terms at once.
		brefs, sizes := make([]string, len(tools)), make([]int, len(tools))
		for j := range tools {
			t := &tools[j]
			body, err := toolBodyOf(t)
			if err != nil {
				return err
			}
			if err := compactLine(&body); err != nil {
				return kernel.Errorf(kernel.CodeInternal, "tool %q", t.Name).Wrap(err)
			}
			if brefs[j], err = w.PutBody(body); err != nil {
				return err
			}
			sizes[j] = len(wireNamePrefix) + len(t.Name) + 2 + len(body) - 1
		}
		if err := putEndpointMeta(p, w); err != nil {
			return err
		}
		for j := range tools {
			t := &tools[j]
			if err := w.PutTool(t.Name, t.Command, t.Release, refs[t.Command], brefs[j], t.Security, sizes[j], disc.Lists(t.Command, t.Package())); err != nil {
				return err
			}
		}
	}
	return nil
}

// putRoutes writes the routes (sorted by words) with the line --help shows
// for each; cmd finds a command's summary and declaration ref by id.
func putRoutes(routes []Route, cmd func(id string) (*BoundCommand, string), w IndexSink) error {
	for i, r := range routes {
		line := ""
		bc, ref := cmd(r.Command)
		switch r.Kind {
		case RouteGroup:
			var names []string
			for _, c := range routes[i+1:] {
				if !hasPrefix(c.Words, r.Words) {
					break // sorted: the subtree is contiguous
				}
				if len(c.Words) == len(r.Words)+1 {
					names = append(names, c.Words[len(c.Words)-1])
				}
			}
			line = "commands: " + strings.Join(names, ", ")
		case RouteAlias:
			if bc != nil {
				line = bc.Declaration.Summary + " (alias of " + strings.Join(bc.Declaration.Path, " ") + ")"
			}
		default:
			if bc != nil {
				line = bc.Declaration.Summary
			}
		}
		if err := w.PutRoute(r.Words, r.Kind, r.Command, ref, line); err != nil {
			return err
		}
	}
	return nil
}

// putEndpointMeta starts an endpoint in the index: its launch binding.
func putEndpointMeta(p *Projection, w IndexSink) error {
	meta, err := json.Marshal(EndpointMeta{Namespace: p.Namespace, ToolNames: p.ToolNames, Subject: p.Subject, Template: p.Template,
		Unavailable: p.Unavailable, Withheld: p.Withheld}, json.Deterministic(true))
	if err != nil {
		return kernel.Errorf(kernel.CodeInternal, "cannot encode endpoint %s", p.Endpoint).Wrap(err)
	}
	return w.PutEndpoint(p.Endpoint, meta)
}

// compactLine keeps a tool body on one line: stdio framing is one message
// per line.
func compactLine(b *[]byte) error {
	if !bytes.ContainsAny(*b, "\r\n") {
		return nil
	}
	v := jsontext.Value(*b)
	if err := v.Compact(); err != nil {
		return err
	}
	*b = v
	return nil
}

// LaunchOf is endpoint's launch binding in a stored profile; nil when the
// profile has no such endpoint.
func LaunchOf(profile []byte, endpoint string) (*Launch, error) {
	p, err := ParseProfile(profile)
	if err != nil {
		return nil, err
	}
	l, _ := p.launchOf(endpoint)
	return l, nil
}
