package mcpcore

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/search"
)

// Catalog is the launch endpoint's view of one revision, read for one
// request: serve-mcp keeps no per-tool state, so its memory does not grow
// with the number of tools. The store-backed catalog reads one list page or
// one tool record per request; the in-memory one (Config.Load) serves tests.
type Catalog interface {
	// HasEndpoint reports whether the revision has the launch endpoint.
	HasEndpoint() bool
	// Pages is how many tools/list pages the endpoint has (≤ 32 tools and
	// ≤ 1 MiB each, cut at publish).
	Pages() int
	// Page calls fn with each tool of page i: its name and its tool object
	// without the name (valid only during fn; one line of JSON).
	Page(i int, fn func(name string, body []byte) error) error
	// Resolve finds the exact tool name and pins what a call needs; nil
	// means unknown.
	Resolve(name string) (*Resolved, error)
	// Digest is a digest of what tools/list shows (every page in order).
	Digest() ([32]byte, error)
	// Endpoints names every endpoint of the revision, for messages.
	Endpoints() []string
	// Revision is the revision id ("r7").
	Revision() string
	// Launch is the endpoint's launch binding as this revision's profile
	// has it; nil when the profile has no such endpoint.
	Launch() *policy.Launch
	// Template is what the endpoint's projection runs under.
	Template() policy.Template
	// Search ranks the endpoint's tools, listed or not, for query (at
	// most limit hits, 1..50); the hits' names are tool names.
	Search(query string, limit int) ([]SearchHit, error)
	// Tool is one tool object of the endpoint (with its name, as tools/list
	// would show it in direct mode), listed or not; ok false: unknown.
	Tool(name string) (object []byte, ok bool, err error)
	// Discovery is the endpoint's discovery as this revision's profile has
	// it (nil: direct).
	Discovery() *policy.Discovery
}

// PageWirer is a Catalog that also has each page as tools/list writes its
// tools: a list page is then written from those bytes, with no page built
// for the request.
type PageWirer interface {
	// PageWire is page i's tool objects as tools/list shows them (each
	// policy.AppendToolWire of a tool), comma-separated. The bytes may be
	// shared: the caller never writes to them.
	PageWire(i int) ([]byte, error)
}

// SearchHit is one ranked tool of a search, as the search tool shows it:
// its name and its summary (policy.ToolSummary).
type SearchHit struct {
	Name, Title string
	Description string
}

// Resolved is everything a tools/call pins for its whole run.
type Resolved struct {
	Command  *kernel.Command
	Dir      string               // the release copy
	Release  *policy.BoundRelease // what the call holds while it runs (Pinned)
	Template policy.Template
	Security string           // the command's level on the endpoint; "" is standard
	Settings []kernel.Setting // the package's declared settings
}

// DigestPages is Catalog.Digest for any catalog: sha256 over every tool
// object in list order, each followed by a newline.
func DigestPages(c Catalog) ([32]byte, error) {
	h := sha256.New()
	var buf []byte
	for i := range c.Pages() {
		if err := c.Page(i, func(name string, body []byte) error {
			buf = policy.AppendToolWire(buf[:0], name, body)
			h.Write(buf)
			h.Write([]byte{'\n'})
			return nil
		}); err != nil {
			return [32]byte{}, err
		}
	}
	var d [32]byte
	h.Sum(d[:0])
	return d, nil
}

// revision is one revision's serve view held in memory (Config.Load):
// listing copies pre-encoded tool objects, calling is a map lookup and,
// the first time a command is called, decoding its declaration.
type revision struct {
	n         uint64
	id        string
	endpoints []string
	proj      *policy.Projection // nil when the endpoint is not in this revision
	bodies    [][]byte           // tool objects without their names, in projection order
	listed    []int              // the indices in bodies tools/list shows, in order
	pages     []int              // index in listed where each page starts
	byName    map[string]int     // tool name -> index in proj.Tools
	launch    *policy.Launch     // the endpoint as this revision's profile has it

	commands map[string]*lazyCommand         // release + "\x00" + command identity
	releases map[string]*policy.BoundRelease // name@version

	indexOnce sync.Once // the search index, built on the first search
	index     *search.Index
	indexErr  error
}

func (r *revision) HasEndpoint() bool         { return r.proj != nil }
func (r *revision) Pages() int                { return len(r.pages) }
func (r *revision) Endpoints() []string       { return r.endpoints }
func (r *revision) Revision() string          { return r.id }
func (r *revision) Digest() ([32]byte, error) { return DigestPages(r) }
func (r *revision) Launch() *policy.Launch    { return r.launch }

func (r *revision) Template() policy.Template {
	if r.proj == nil {
		return policy.Template{}
	}
	return r.proj.Template
}

func (r *revision) Page(i int, fn func(name string, body []byte) error) error {
	if i < 0 || i >= len(r.pages) {
		return fmt.Errorf("revision %d: no page %d", r.n, i)
	}
	end := len(r.listed)
	if i+1 < len(r.pages) {
		end = r.pages[i+1]
	}
	for _, j := range r.listed[r.pages[i]:end] {
		if err := fn(r.proj.Tools[j].Name, r.bodies[j]); err != nil {
			return err
		}
	}
	return nil
}

func (r *revision) Discovery() *policy.Discovery {
	if r.proj == nil || r.launch == nil {
		return nil
	}
	return r.launch.Discovery
}

func (r *revision) Tool(name string) ([]byte, bool, error) {
	i, ok := r.byName[name]
	if !ok {
		return nil, false, nil
	}
	return policy.AppendToolWire(nil, name, r.bodies[i]), true, nil
}

// Search ranks with an index built over the projection the first time
// the revision is searched (the store's revisions keep theirs from
// publish).
func (r *revision) Search(query string, limit int) ([]SearchHit, error) {
	if r.proj == nil {
		return nil, nil
	}
	r.indexOnce.Do(func() {
		docs := make([]search.Doc, len(r.proj.Tools))
		for i := range r.proj.Tools {
			t := &r.proj.Tools[i]
			d, err := search.ToolDoc(t.Name, t.Command, r.bodies[i])
			if err != nil {
				r.indexErr = fmt.Errorf("revision %d: tool %q: %v", r.n, t.Name, err)
				return
			}
			docs[i] = d
		}
		r.index = search.Build(docs)
	})
	if r.indexErr != nil {
		return nil, r.indexErr
	}
	hits := r.index.Search(query, limit)
	out := make([]SearchHit, 0, len(hits))
	for _, h := range hits {
		obj, ok, _ := r.Tool(h.Name)
		if !ok {
			return nil, fmt.Errorf("revision %d: the search index names an unknown tool %q", r.n, h.Name)
		}
		out = append(out, HitOf(h.Name, obj))
	}
	return out, nil
}

// HitOf is the search hit of the tool name whose object is object.
func HitOf(name string, object []byte) SearchHit {
	title, description := policy.ToolSummary(object)
	return SearchHit{Name: name, Title: title, Description: description}
}

// lazyCommand decodes a declaration once, on its first call.
type lazyCommand struct {
	once sync.Once
	raw  *policy.ServeCommand
	cmd  *kernel.Command
	err  error
}

func (l *lazyCommand) get() (*kernel.Command, error) {
	l.once.Do(func() { l.cmd, l.err = l.raw.Decode() })
	return l.cmd, l.err
}

// Resolve finds the exact tool name in this revision's projection and pins
// its declaration and release. A nil result means "unknown tool"; an error
// means the binding contradicts itself.
func (r *revision) Resolve(name string) (*Resolved, error) {
	if r.proj == nil {
		return nil, nil
	}
	i, ok := r.byName[name]
	if !ok {
		return nil, nil
	}
	t := &r.proj.Tools[i]
	lc := r.commands[t.Release+"\x00"+t.Command]
	rel := r.releases[t.Release]
	if lc == nil || rel == nil {
		return nil, fmt.Errorf("revision %d: tool %q names a command or release the revision does not bind", r.n, name)
	}
	cmd, err := lc.get()
	if err != nil {
		return nil, fmt.Errorf("revision %d: tool %q: declaration: %v", r.n, name, err)
	}
	return &Resolved{Command: cmd, Dir: rel.Dir, Release: rel, Template: r.proj.Template, Security: t.Security, Settings: lc.raw.Settings}, nil
}

func prepareRevision(n uint64, b *policy.ServeView) (*revision, error) {
	r := &revision{n: n, id: b.Revision, endpoints: b.Endpoints, proj: b.Projection, launch: b.Launch}
	if r.proj == nil {
		return r, nil
	}
	r.bodies = make([][]byte, len(r.proj.Tools))
	r.byName = make(map[string]int, len(r.proj.Tools))
	disc := r.Discovery()
	size := 0
	for i := range r.proj.Tools {
		t := &r.proj.Tools[i]
		w := t.Wire
		if w.Kind() != '{' || !w.IsValid() {
			return nil, fmt.Errorf("revision %d: tool %q has an invalid wire object", n, t.Name)
		}
		if bytes.ContainsAny(w, "\r\n") {
			// Framing needs one message per line; keep the caller's copy intact.
			w = w.Clone()
			if err := w.Compact(); err != nil {
				return nil, fmt.Errorf("revision %d: tool %q: %v", n, t.Name, err)
			}
		}
		prefix := `{"name":` + strconv.Quote(t.Name) + `,`
		if !bytes.HasPrefix(w, []byte(prefix)) {
			return nil, fmt.Errorf("revision %d: tool %q: its object does not start with its name", n, t.Name)
		}
		r.bodies[i] = append([]byte{'{'}, w[len(prefix):]...)
		if _, dup := r.byName[t.Name]; dup {
			return nil, fmt.Errorf("revision %d: duplicate tool name %q", n, t.Name)
		}
		r.byName[t.Name] = i
		pkg, _, _ := strings.Cut(t.Release, "@")
		if !disc.Lists(t.Command, pkg) {
			continue
		}
		// the page cut of the store's index writer
		if len(r.pages) == 0 || len(r.listed)-r.pages[len(r.pages)-1] == pageTools || size+len(w)+1 > pageBytes {
			r.pages = append(r.pages, len(r.listed))
			size = 0
		}
		r.listed = append(r.listed, i)
		size += len(w) + 1
	}
	r.commands = make(map[string]*lazyCommand, len(b.Commands))
	for i := range b.Commands {
		c := &b.Commands[i]
		r.commands[c.Release+"\x00"+c.ID] = &lazyCommand{raw: c}
	}
	r.releases = make(map[string]*policy.BoundRelease, len(b.Releases))
	for i := range b.Releases {
		rel := &b.Releases[i]
		r.releases[rel.Name+"@"+rel.Version] = rel
	}
	return r, nil
}

// revisionCache holds the decoded active revision of a Config.Load server,
// and only that one: revision numbers only grow (a rollback is a new
// revision) and cursors from other revisions are refused, so an older
// binding is never asked for again (calls in flight keep their own pointer).
type revisionCache struct {
	load func(uint64) (*policy.ServeView, error)

	mu  sync.Mutex
	cur *revision
}

func (c *revisionCache) get(n uint64) (*revision, error) {
	c.mu.Lock()
	if c.cur != nil && c.cur.n == n {
		r := c.cur
		c.mu.Unlock()
		return r, nil
	}
	if c.cur != nil && c.cur.n < n {
		c.cur = nil
	}
	c.mu.Unlock()

	b, err := c.load(n)
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, fmt.Errorf("revision %d: no binding", n)
	}
	r, err := prepareRevision(n, b)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.cur == nil || c.cur.n < n:
		c.cur = r
	case c.cur.n == n: // another request loaded it meanwhile
		return c.cur, nil
	}
	return r, nil
}

// viewFromLoad is Config.View for a server given Active and Load.
func viewFromLoad(active func() (uint64, error), cache *revisionCache) func(uint64, func(uint64, Catalog) error) error {
	return func(n uint64, fn func(uint64, Catalog) error) error {
		if n == 0 {
			var err error
			if n, err = active(); err != nil {
				if kernel.ErrorCode(err) == kernel.CodeNotFound {
					return fn(0, nil)
				}
				return err
			}
			if n == 0 {
				return fn(0, nil)
			}
		}
		r, err := cache.get(n)
		if err != nil {
			return err
		}
		return fn(n, r)
	}
}
