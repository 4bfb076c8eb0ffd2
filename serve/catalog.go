package serve

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/home"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/mcpcore"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
)

// JobTool is one tool of an endpoint's job family, as tools/list serves it
// after the endpoint's own tools.
type JobTool struct {
	ID   string         // one of policy.JobToolIDs
	Name string         // the name the endpoint serves it under
	Wire jsontext.Value // its tools/list entry
}

// JobTools is the job family projection p of b serves, in tools/list's
// order; none when its task policy serves no job tools.
func JobTools(b *policy.Binding, p *policy.Projection) []JobTool {
	names := policy.JobToolNames(b, p)
	out := make([]JobTool, len(names))
	for i, n := range names {
		out[i] = JobTool{ID: policy.JobToolIDs[i], Name: n, Wire: mcpcore.JobToolWire(policy.JobToolIDs[i], n)}
	}
	return out
}

// Launch fixes an endpoint's launch binding from the active revision's
// endpoint record, refusing an endpoint the published profile does not name
// (a typo would otherwise serve an agent no tools). Nothing published: nil.
func Launch(h *home.Home, endpoint string) (*policy.Launch, error) {
	var l *policy.Launch
	_, err := h.ViewActive(func(ix *store.Index) (err error) {
		if l, err = policy.LaunchOf(ix.Profile(), endpoint); err != nil {
			return err
		}
		if l == nil {
			return noEndpoint(ix, endpoint)
		}
		return nil
	})
	return l, err
}

func noEndpoint(ix *store.Index, endpoint string) error {
	var names []string
	for _, e := range ix.Endpoints() {
		names = append(names, e.Name)
	}
	return kernel.Errorf(kernel.CodeNotFound, "%s", "the published profile has no endpoint "+strconv.Quote(endpoint)).
		WithHint("published endpoints: " + strings.Join(names, ", "))
}

// primedCache is a catalogCache that holds the first list page: a request
// reads the one page or tool record it needs from the store, or is
// answered from what the last requests read while the store is unchanged
// (cache.go). The launch binding and the first list page are read at start.
func primedCache(h *home.Home, reads storeReads, endpoint string) *catalogCache {
	c := &catalogCache{h: h, reads: reads, endpoint: endpoint}
	_ = c.view(0, func(_ uint64, cat mcpcore.Catalog) error {
		if cat == nil {
			return nil
		}
		cat.Launch() // decodes the profile: kept with the revision
		if !cat.HasEndpoint() || cat.Pages() == 0 {
			return nil
		}
		return cat.Page(0, func(string, []byte) error { return nil })
	}) // a failure here is the first request's to report
	return c
}

// storeCatalog is mcpcore.Catalog over one indexed revision, valid during
// one store read.
type storeCatalog struct {
	h        *home.Home
	ix       *store.Index
	endpoint string
	ep       store.EndpointInfo
	has      bool

	launchOnce sync.Once
	launch     *policy.Launch
}

func (c *storeCatalog) HasEndpoint() bool { return c.has }

func (c *storeCatalog) Launch() *policy.Launch {
	c.launchOnce.Do(func() {
		l, err := policy.LaunchOf(c.ix.Profile(), c.endpoint)
		if err == nil {
			c.launch = l
		}
	})
	return c.launch
}

func (c *storeCatalog) Template() policy.Template {
	m, err := policy.DecodeEndpointMeta(c.ep.Meta)
	if err != nil {
		return policy.UnreadableTemplate(err)
	}
	return m.Template
}
func (c *storeCatalog) Pages() int       { return c.ep.Pages }
func (c *storeCatalog) Revision() string { return c.ix.Revision() }
func (c *storeCatalog) Digest() ([32]byte, error) {
	return mcpcore.DigestPages(c)
}

func (c *storeCatalog) Endpoints() []string {
	var names []string
	for _, e := range c.ix.Endpoints() {
		names = append(names, e.Name)
	}
	return names
}

func (c *storeCatalog) Page(i int, fn func(name string, body []byte) error) error {
	return c.ix.Page(c.ep.Name, i, fn)
}

func (c *storeCatalog) Resolve(name string) (*mcpcore.Resolved, error) {
	t, ok, err := c.ix.Tool(c.ep.Name, name)
	if err != nil || !ok {
		return nil, err
	}
	raw, err := c.ix.Decl(t.Decl)
	if err != nil {
		return nil, err
	}
	bc, err := policy.DecodeCommand(raw)
	if err != nil {
		return nil, fmt.Errorf("revision %s: tool %q: declaration: %v", c.ix.Revision(), name, err)
	}
	m, err := policy.DecodeEndpointMeta(c.ep.Meta)
	if err != nil {
		return nil, fmt.Errorf("revision %s: endpoint %s: %v", c.ix.Revision(), c.ep.Name, err)
	}
	name, version, _ := strings.Cut(bc.Release, "@")
	rel := &policy.BoundRelease{Name: name, Version: version, Digest: bc.Digest, Development: bc.Development}
	return &mcpcore.Resolved{Command: &bc.Declaration, Dir: c.h.CopyDir(bc.Digest, bc.Development), Release: rel, Template: m.Template, Security: t.Security, Settings: bc.Settings}, nil
}

// Discovery is the endpoint's discovery as this revision's profile has it.
func (c *storeCatalog) Discovery() *policy.Discovery {
	if l := c.Launch(); l != nil && c.has {
		return l.Discovery
	}
	return nil
}

// Tool reads one tool record and its body.
func (c *storeCatalog) Tool(name string) ([]byte, bool, error) {
	t, ok, err := c.ix.Tool(c.ep.Name, name)
	if err != nil || !ok {
		return nil, false, err
	}
	body, err := c.ix.Body(t)
	if err == nil {
		err = policy.CheckToolBody(name, body)
	}
	if err != nil {
		return nil, false, err
	}
	return policy.AppendToolWire(nil, name, body), true, nil
}

// Search ranks the endpoint's tools from the revision's search records:
// one postings record per query term, then per hit its number, tool
// record and body, whatever the size of the catalogue. A revision
// published before search records refuses, saying to publish again.
func (c *storeCatalog) Search(query string, limit int) ([]mcpcore.SearchHit, error) {
	if !c.has {
		return nil, nil
	}
	found, err := c.ix.SearchTools(c.ep.Name, query, limit)
	if err != nil {
		return nil, err
	}
	hits := make([]mcpcore.SearchHit, 0, len(found))
	for _, f := range found {
		hits = append(hits, mcpcore.HitOf(f.Name, f.Body))
	}
	return hits, nil
}
