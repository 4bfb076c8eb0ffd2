package mcpstdio

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
)

// revision is one revision's serve view prepared for the launch endpoint:
// listing is a slice of pre-encoded tool objects, calling a map lookup and,
// the first time a command is called, decoding its declaration.
type revision struct {
	n      uint64
	proj   *policy.Projection // nil when the endpoint is not in this revision
	wire   []jsontext.Value   // compact tool objects, in projection order
	byName map[string]int     // tool name -> index in proj.Tools

	commands map[string]*lazyCommand         // release + "\x00" + command identity
	releases map[string]*policy.BoundRelease // name@version

	digestOnce sync.Once
	digest     [32]byte
}

// toolsDigest is a digest of what tools/list shows from this revision (the
// tool objects in order), computed once and only when someone listens.
func (r *revision) toolsDigest() [32]byte {
	r.digestOnce.Do(func() {
		h := sha256.New()
		for _, w := range r.wire {
			h.Write(w)
			h.Write([]byte{'\n'})
		}
		h.Sum(r.digest[:0])
	})
	return r.digest
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

// boundCall is everything a tools/call pins for its whole run.
type boundCall struct {
	tool     *policy.Tool
	command  *kernel.Command
	release  *policy.BoundRelease
	template policy.Template
}

// resolve finds the exact tool name in this revision's projection and pins
// its declaration and release. A nil result means "unknown tool"; an error
// means the binding contradicts itself.
func (r *revision) resolve(name string) (*boundCall, error) {
	i, ok := r.byName[name]
	if !ok {
		return nil, nil
	}
	t := &r.proj.Tools[i]
	bc := &boundCall{tool: t, template: r.proj.Template}
	lc := r.commands[t.Release+"\x00"+t.Command]
	bc.release = r.releases[t.Release]
	if lc == nil || bc.release == nil {
		return nil, fmt.Errorf("revision %d: tool %q names a command or release the revision does not bind", r.n, name)
	}
	cmd, err := lc.get()
	if err != nil {
		return nil, fmt.Errorf("revision %d: tool %q: declaration: %v", r.n, name, err)
	}
	bc.command = cmd
	return bc, nil
}

func prepareRevision(n uint64, b *policy.ServeView) (*revision, error) {
	r := &revision{n: n, proj: b.Projection}
	if r.proj == nil {
		return r, nil
	}
	r.wire = make([]jsontext.Value, len(r.proj.Tools))
	r.byName = make(map[string]int, len(r.proj.Tools))
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
		r.wire[i] = w
		if _, dup := r.byName[t.Name]; dup {
			return nil, fmt.Errorf("revision %d: duplicate tool name %q", n, t.Name)
		}
		r.byName[t.Name] = i
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

// revisionCache holds the decoded active revision, and only that one:
// revision numbers only grow (a rollback is a new revision) and cursors from
// other revisions are refused, so an older binding is never asked for again
// (calls in flight keep their own pointer). Dropping it before decoding the
// next one keeps memory at one binding, however often the owner publishes.
type revisionCache struct {
	load     func(uint64) (*policy.ServeView, error)
	endpoint string
	logf     func(format string, args ...any) // may be nil

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
	if r.proj == nil && c.logf != nil {
		// Most likely a typo in --endpoint: say so once per revision.
		c.logf("endpoint %q is not in the published revision %s (endpoints: %s); serving no tools", c.endpoint, b.Revision, strings.Join(b.Endpoints, ", "))
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
