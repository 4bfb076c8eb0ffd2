package policy

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
)

// MaxToolBytes bounds one tool's encoded object: a tools/list page holds at
// most 1 MiB and must always hold at least one tool.
const MaxToolBytes = 1 << 20

// DevEndpoint is the one endpoint that may publish development releases.
const DevEndpoint = "dev"

// toolName is ToolName; tests replace it to force the hash collisions real
// fingerprints never produce.
var toolName = ToolName

// Input is one publish candidate: the revision id it will be stored under,
// the draft profile and the active releases with their parsed manifests.
type Input struct {
	Revision string
	Profile  *Profile // nil means DefaultProfile()
	Releases []ReleaseInput
	// Source, when set, streams the releases instead of Releases: it calls
	// yield once per release, in package name order, and returns the first
	// error yield returns. Stream then holds one release at a time.
	Source func(yield func(ReleaseInput) error) error
	// Count is how many releases Source yields, when that is known: a
	// hint the build sizes what it holds by, never a check.
	Count int
	// Host is what this host can enforce (nil: kernel.ProbeHost()): an
	// endpoint whose template it cannot enforce publishes nothing.
	Host *kernel.Host
	// OwnerHome is where "~/" in a command's needs resolves ("": the
	// owner's home directory, as for the profile).
	OwnerHome string
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

// Build validates a draft as one candidate (docs/design.md, Nothing is
// half-published) and returns the
// Binding to store as the revision, plus warnings for a person (publish
// entries naming nothing installed, explicitly named commands that cannot
// be tools). The same Input always yields a byte-identical Binding. Errors
// are *kernel.Error: CodeConflict for collisions, CodeInvalid otherwise.
func Build(in Input) (*Binding, []string, error) {
	return (&builder{full: true}).run(in)
}

// Stream is Build for `rukh publish`: it validates the same rules and
// writes the candidate into sink as it goes (nil sink: a dry run, nothing
// is written), release by release, so memory grows with the number of
// names and paths, not with the declarations. The Binding it returns is a
// summary for the report: declarations keep only their id, path, aliases,
// summary, execute mode, lifetime and result kind and machine
// declaration; tools have no Wire, only the Sum of their body. What sink
// receives reads back (home's readRevision) as what Build returns.
func Stream(in Input, sink IndexSink) (*Binding, []string, error) {
	return (&builder{sink: sink}).run(in)
}

// BoundProfile is the profile a candidate with this draft profile binds
// (nil: the default), as Binding.Profile holds it; nil when it is invalid.
func BoundProfile(p *Profile) []byte {
	if p == nil {
		p = DefaultProfile()
	}
	if p.Validate() != nil {
		return nil
	}
	return p.normalized().Canonical()
}

// builder is one Build or Stream: per release it checks identities,
// computes eligibility and every endpoint's tool, writes declarations and
// bodies to the sink and keeps a summary; the checks across the whole
// candidate (routes, tool names) run on the summaries.
type builder struct {
	full bool      // keep whole declarations and tool objects (Build)
	sink IndexSink // Stream; nil for Build and dry runs
	b    *Binding
	prof *Profile
	eps  []*epBuild

	home     string // where "~/" in needs resolves
	lastName string
	active   map[string]bool
	dev      map[string]bool  // release name@version → is a development release
	owner    map[string]int   // command id → index into b.Commands
	byPkg    map[string][]int // package → indexes into b.Commands
	refs     []string         // declaration ref per command (with a sink)

	blockMu sync.Mutex
	blocks  [][]byte // arena blocks given back, for reuse

	count, built int // releases expected (Input.Count, 0: unknown) and built so far
}

// epBuild is one endpoint's projection as it is built.
type epBuild struct {
	name    string
	ep      Endpoint
	mode    string
	publish publishSet
	names   map[string]string
	proj    Projection
	sizes   []int // wire size per tool (with a sink)
	// err is the endpoint's first tool error; reported after the route
	// checks, in endpoint order, as when projections were built last.
	err error
}

// withhold says why e's template keeps bc from being a tool on e, and the
// fix; "" when it does not. A command asking for more than the template
// grants is named first: that holds on any host.
func (e *epBuild) withhold(bc *BoundCommand, home string) (reason, fix string) {
	if missing, fix := NeedsGap(bc.Declaration.Execute.Needs, e.proj.Template, home); missing != "" {
		return missing, fix
	}
	if e.proj.Unavailable != "" {
		return e.unavailable()
	}
	return "", ""
}

// unavailable is why nothing is a tool on e when the host cannot enforce
// its template, and the fix.
func (e *epBuild) unavailable() (reason, fix string) {
	return fmt.Sprintf("template %s is unavailable on this host: %s", e.proj.Template.Name, e.proj.Unavailable),
		fmt.Sprintf("give endpoint %s a template this host can enforce, or publish and serve on a host that has what it lacks (%s)", e.name, ConfinementDoc)
}

func (bd *builder) run(in Input) (*Binding, []string, error) {
	if err := bd.start(in); err != nil {
		return nil, nil, err
	}
	bd.count = in.Count
	source := in.Source
	if source == nil {
		bd.count = len(in.Releases)
		rels, err := boundReleases(in.Releases)
		if err != nil {
			return nil, nil, err
		}
		source = func(yield func(ReleaseInput) error) error {
			for _, r := range rels {
				if err := yield(r); err != nil {
					return err
				}
			}
			return nil
		}
	}
	if err := bd.buildReleases(source); err != nil {
		return nil, nil, err
	}
	return bd.finish()
}

// start checks the revision id and the profile, and sets up the binding
// and every endpoint's projection, still empty.
func (bd *builder) start(in Input) error {
	if !revisionIDs.MatchString(in.Revision) {
		return kernel.Errorf(kernel.CodeInvalid, "invalid revision id %q", in.Revision)
	}
	prof := in.Profile
	if prof == nil {
		prof = DefaultProfile()
	}
	if err := prof.Validate(); err != nil {
		var ke *kernel.Error
		if errors.As(err, &ke) {
			return ke.WithHint("fix the draft profile with `rukh policy set`")
		}
		return err
	}
	bd.prof = prof.normalized()
	bd.b = &Binding{Revision: in.Revision, Profile: bd.prof.Canonical()}
	bd.active, bd.dev, bd.owner, bd.byPkg = map[string]bool{}, map[string]bool{}, map[string]int{}, map[string][]int{}
	host := in.Host
	if host == nil {
		h := kernel.ProbeHost()
		host = &h
	}
	if bd.home = in.OwnerHome; bd.home == "" {
		bd.home, _ = userHome()
	}
	for _, epName := range slices.Sorted(maps.Keys(bd.prof.Endpoints)) {
		ep := bd.prof.Endpoints[epName]
		tmpl, _ := bd.prof.template(ep.Template)
		e := &epBuild{name: epName, ep: ep, mode: ep.ToolNameMode(), publish: ep.Publish.set(), names: map[string]string{},
			proj: Projection{Endpoint: epName, Namespace: ep.Namespace, ToolNames: ep.ToolNameMode(), Subject: ep.Subject, Template: tmpl.template(ep.Template), Tools: []Tool{},
				Unavailable: host.Unavailable(tmpl.Confine)}}
		bd.eps = append(bd.eps, e)
	}
	return nil
}

// buildReleases builds every release source yields, checking that they come
// in name order, one per package.
//
// Each release's per-command work that depends on nothing else
// (eligibility, the declaration record, the tool bodies) is prepared on
// another goroutine while the release before it is built.
func (bd *builder) buildReleases(source func(yield func(ReleaseInput) error) error) error {
	seen := map[string]string{}
	var pending *prepared
	build := func() error {
		p := pending
		pending = nil
		if p == nil {
			return nil
		}
		<-p.done
		if err := bd.release(p); err != nil {
			return err
		}
		bd.giveBack(p)
		return nil
	}
	if err := source(func(r ReleaseInput) error {
		r, cerr := checkRelease(r)
		var next *prepared
		if cerr == nil {
			next = bd.prepare(r)
		}
		err := build()
		if err == nil {
			err = cerr
		}
		if err == nil {
			if v, dup := seen[r.Name]; dup {
				err = kernel.Errorf(kernel.CodeConflict, "package %s has two active releases: %s and %s", r.Name, v, r.Version)
			} else if r.Name < bd.lastName {
				err = kernel.Errorf(kernel.CodeInternal, "release %s comes after %s: releases must come in name order", r.Name, bd.lastName)
			}
		}
		if err != nil {
			if next != nil {
				<-next.done
			}
			return err
		}
		seen[r.Name], bd.lastName = r.Version, r.Name
		pending = next
		return nil
	}); err != nil {
		if pending != nil {
			<-pending.done
		}
		return err
	}
	return build()
}

// finish runs the checks across the whole candidate on what the releases
// left, writes the index with a sink, and completes the Binding.
func (bd *builder) finish() (*Binding, []string, error) {
	b := bd.b
	// The routes and the warnings (which sort each endpoint's tools) only
	// read the commands: one is made on each CPU.
	routed := make(chan error, 1)
	go func() {
		var err error
		b.Routes, err = buildRoutes(b.Commands)
		routed <- err
	}()
	warnings := bd.warnings()
	if err := <-routed; err != nil {
		return nil, nil, err
	}
	for _, e := range bd.eps {
		if e.err != nil {
			return nil, nil, e.err
		}
	}
	if bd.sink != nil {
		if err := bd.write(); err != nil {
			return nil, nil, err
		}
	}
	for _, e := range bd.eps {
		slices.SortStableFunc(e.proj.Withheld, func(x, y Withheld) int { return strings.Compare(x.Command, y.Command) })
		b.Endpoints = append(b.Endpoints, e.proj)
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

// prepared is what a release's commands need that depends on nothing but
// the release and the profile, made off the builder's goroutine: done is
// closed when cmds is complete. A failure is kept where it happened and
// reported by release in the order it always was.
type prepared struct {
	r     ReleaseInput
	cmds  []preparedCmd
	done  chan struct{}
	arena arena // where its records and bodies lie
}

// arena holds a prepared release's records and bodies in blocks that go
// back to the builder once the release is built, for a later release: a
// publish encodes every declaration and tool body once, and an allocation
// for each was a large part of what its collector had to keep up with.
type arena struct {
	blocks [][]byte // each from offset 0, as taken
	cur    []byte   // the last block, as filled so far
}

// arenaBlock is the size of an arena's blocks; larger records get a block
// of their own.
const arenaBlock = 256 << 10

// keptBlocks bounds the blocks a builder keeps for reuse (16 MiB of
// them); blocks given back beyond it are left to the collector.
const keptBlocks = 64

// add copies b into the arena and returns the copy, which stays as it is
// until the arena is given back.
func (a *arena) add(bd *builder, b []byte) []byte {
	if cap(a.cur)-len(a.cur) < len(b) {
		a.cur = bd.takeBlock(len(b))
		a.blocks = append(a.blocks, a.cur)
	}
	start := len(a.cur)
	a.cur = append(a.cur, b...)
	return a.cur[start:len(a.cur):len(a.cur)]
}

// takeBlock is an empty block of at least n bytes: a kept one if it fits.
func (bd *builder) takeBlock(n int) []byte {
	bd.blockMu.Lock()
	defer bd.blockMu.Unlock()
	if k := len(bd.blocks); k > 0 && cap(bd.blocks[k-1]) >= n {
		b := bd.blocks[k-1]
		bd.blocks = bd.blocks[:k-1]
		return b[:0]
	}
	return make([]byte, 0, max(arenaBlock, n))
}

// giveBack keeps p's blocks for later releases: p is built, and nothing
// its records and bodies were given to kept them (a sink copies them).
func (bd *builder) giveBack(p *prepared) {
	bd.blockMu.Lock()
	defer bd.blockMu.Unlock()
	for _, b := range p.arena.blocks {
		if len(bd.blocks) < keptBlocks && cap(b) == arenaBlock {
			bd.blocks = append(bd.blocks, b[:0])
		}
	}
	p.arena = arena{}
	for i := range p.cmds {
		p.cmds[i] = preparedCmd{}
	}
}

// scratch buffers encode one record or body at a time before it is copied
// into an arena.
var scratch = sync.Pool{New: func() any { return new(bytes.Buffer) }}

type preparedCmd struct {
	eligible bool
	reason   string
	rec      []byte // the declaration record (with a sink)
	recErr   error
	bodies   [3]preparedBody // by tool kind, those an endpoint publishes
}

type preparedBody struct {
	have   bool
	body   []byte // compacted when a sink is written
	rawLen int    // its length as encoded, before compacting
	sum    [32]byte
	err    error // toolBody's: the endpoint's error
	badErr error // compacting failed: the build's
}

// prepare starts preparing r. It reads only r and the profile, never what
// the builder changes as it goes.
func (bd *builder) prepare(r ReleaseInput) *prepared {
	p := &prepared{r: r, cmds: make([]preparedCmd, len(r.Manifest.Commands)), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		buf := scratch.Get().(*bytes.Buffer)
		defer scratch.Put(buf)
		var schema []byte
		rel := r.Name + "@" + r.Version
		for i := range r.Manifest.Commands {
			c, pc := &r.Manifest.Commands[i], &p.cmds[i]
			pc.eligible, pc.reason = kernel.Eligibility(r.APIVersion, c)
			bc := BoundCommand{Release: rel, Digest: r.Digest, Declaration: *c, Eligible: pc.eligible, Reason: reasonIf(!pc.eligible, pc.reason), Settings: r.Manifest.Settings}
			if bd.sink != nil {
				rec := bc
				rec.Development = r.Development
				buf.Reset()
				if pc.recErr = json.MarshalWrite(buf, &rec, json.Deterministic(true)); pc.recErr == nil {
					pc.rec = p.arena.add(bd, buf.Bytes())
				}
			}
			if ok, _ := bc.Publishable(); !ok {
				continue
			}
			for _, e := range bd.eps {
				if !e.publishes(c.ID, r.Name, r.Development) {
					continue
				}
				kind := e.toolKind(c.ID)
				pb := &pc.bodies[kind]
				if pb.have {
					continue
				}
				pb.have = true
				buf.Reset()
				if pb.err = toolBody(&bc, kind, buf, &schema); pb.err != nil {
					continue
				}
				body := buf.Bytes()
				pb.rawLen = len(body)
				if !bd.full {
					if err := compactLine(&body); err != nil {
						pb.badErr = err
						continue
					}
					pb.sum = sha256.Sum256(body)
				}
				pb.body = p.arena.add(bd, body)
			}
		}
	}()
	return p
}

// publishes reports whether e publishes command id of package pkg (dev: a
// development release, which only the dev endpoint publishes).
func (e *epBuild) publishes(id, pkg string, dev bool) bool {
	return e.publish.lists(id, pkg) && (!dev || e.name == DevEndpoint)
}

// toolKind is the kind of tool command id is on e.
func (e *epBuild) toolKind(id string) int {
	switch tp := e.ep.Tasks; {
	case tp != nil && tp.JobTools && tp.Allows(id):
		return toolStarted
	case tp.Requires(id):
		return toolTaskOnly
	}
	return toolPlain
}

// release adds one release's commands: identities, eligibility, the
// declaration records and every endpoint's tool.
func (bd *builder) release(p *prepared) error {
	r := p.r
	b := bd.b
	bd.built++
	bd.reserve(len(r.Manifest.Commands))
	b.Releases = append(b.Releases, r.BoundRelease)
	bd.active[r.Name] = true
	rel := r.Name + "@" + r.Version
	if r.Development {
		bd.dev[rel] = true
	}
	for i := range r.Manifest.Commands {
		c := &r.Manifest.Commands[i]
		if inBuiltinNamespace(c.ID) {
			return kernel.Errorf(kernel.CodeInvalid, "command %s (%s) is in the built-in rukh namespace", c.ID, rel)
		}
		if j, dup := bd.owner[c.ID]; dup {
			return kernel.Errorf(kernel.CodeConflict, "command identity %q is declared by both %s and %s", c.ID, b.Commands[j].Release, rel).
				WithHint("deactivate one of the two packages")
		}
		pc := &p.cmds[i]
		bc := BoundCommand{Release: rel, Digest: r.Digest, Declaration: *c, Eligible: pc.eligible, Reason: reasonIf(!pc.eligible, pc.reason), Settings: r.Manifest.Settings}
		ref := ""
		if bd.sink != nil {
			if pc.recErr != nil {
				return kernel.Errorf(kernel.CodeInternal, "cannot encode command %s", c.ID).Wrap(pc.recErr)
			}
			var err error
			if ref, err = bd.sink.PutCommand(pc.rec); err != nil {
				return err
			}
		}
		if err := bd.tools(&bc, r.Name, ref, &pc.bodies); err != nil {
			return err
		}
		if !bd.full {
			bc.Declaration = summaryOf(c)
		}
		bd.owner[c.ID] = len(b.Commands)
		bd.byPkg[r.Name] = append(bd.byPkg[r.Name], len(b.Commands))
		b.Commands = append(b.Commands, bc)
		bd.refs = append(bd.refs, ref)
	}
	return nil
}

// reserve makes room for n more commands (grow: the same for the tools as
// they come). Grown by append
// alone, the commands and tools a publish holds to its end were allocated
// about five times over on the way; grown to what the releases built so far
// say all of them will need (at most twice what is needed now, should the
// releases differ), about twice, and they end near their size.
func (bd *builder) reserve(n int) {
	b := bd.b
	b.Commands = grow(b.Commands, n, bd.built, bd.count)
	bd.refs = grow(bd.refs, n, bd.built, bd.count)
}

// grow makes room for n more in s, once built of count parts are in it (0
// count: unknown).
func grow[T any](s []T, n, built, count int) []T {
	need := len(s) + n
	if cap(s) >= need {
		return s
	}
	want := need
	if count > built && built > 0 {
		want = min(need*count/built, 2*need)
	}
	return slices.Grow(s, want-len(s))
}

// summaryOf is what Stream keeps of a declaration: what routes, reports
// and fixes read. Its Machine and Result (the kind alone) are values shared
// by every summary with the same ones when they are of the usual few: one
// of each per command, kept to the end of a publish, were objects the
// collector marked again and again.
func summaryOf(c *kernel.Command) kernel.Command {
	s := kernel.Command{ID: c.ID, Path: c.Path, Aliases: c.Aliases, Summary: c.Summary,
		Execute: kernel.Execute{Mode: c.Execute.Mode, Lifetime: c.Execute.Lifetime, Needs: c.Execute.Needs}}
	if m := c.Machine; m != nil {
		s.Machine = summaryMachine(m)
	}
	if r := c.Execute.Result; r != nil {
		s.Execute.Result = summaryResult(r.Kind)
	}
	return s
}

// The shared summary Machines: by eligibility, interaction (in the order
// of interactions) and required features (none, or commandResult alone).
var (
	interactions    = [...]string{kernel.InteractionNone, kernel.InteractionOptional, kernel.InteractionRequired}
	commandResult   = []kernel.Feature{{ID: "command-result", Version: 1}}
	summaryMachines = func() (ms [2][len(interactions)][2]kernel.Machine) {
		for e := range ms {
			for i, in := range interactions {
				ms[e][i][0] = kernel.Machine{Eligible: e == 1, Interaction: in}
				ms[e][i][1] = kernel.Machine{Eligible: e == 1, Interaction: in, RequiredFeatures: commandResult}
			}
		}
		return ms
	}()
	summaryResults = [...]kernel.ResultDecl{{Kind: kernel.ResultText}, {Kind: kernel.ResultStructured}}
)

// summaryMachine is m as a summary keeps it: a shared value equal to it,
// or m itself.
func summaryMachine(m *kernel.Machine) *kernel.Machine {
	i := slices.Index(interactions[:], m.Interaction)
	f := -1
	switch {
	case m.RequiredFeatures == nil:
		f = 0
	case slices.Equal(m.RequiredFeatures, commandResult):
		f = 1
	}
	if i < 0 || f < 0 {
		return m
	}
	e := 0
	if m.Eligible {
		e = 1
	}
	return &summaryMachines[e][i][f]
}

// summaryResult is a result of kind as a summary keeps it.
func summaryResult(kind string) *kernel.ResultDecl {
	for i := range summaryResults {
		if summaryResults[i].Kind == kind {
			return &summaryResults[i]
		}
	}
	return &kernel.ResultDecl{Kind: kind}
}

// tools makes bc a tool on every endpoint that publishes it. A
// development release is never published anywhere but the dev endpoint,
// whatever the publish lists say.
func (bd *builder) tools(bc *BoundCommand, pkg, declRef string, pre *[3]preparedBody) error {
	if ok, _ := bc.Publishable(); !ok {
		return nil
	}
	type variant struct {
		body   []byte // the tool object without its name
		rawLen int    // its length as encoded, before compactLine
		ref    string // its ref in the sink
		sum    [32]byte
		done   bool
	}
	// One body per kind of tool: plain, started (job family) and
	// task-only (no job family: a direct call is refused).
	var variants [3]variant
	id := bc.Declaration.ID
	for _, e := range bd.eps {
		if e.err != nil || !e.publishes(id, pkg, bd.dev[bc.Release]) {
			continue
		}
		if reason, fix := e.withhold(bc, bd.home); reason != "" {
			e.proj.Withheld = append(e.proj.Withheld, Withheld{Command: id, Reason: reason, Fix: fix})
			continue
		}
		name := toolName(e.mode, e.ep.Namespace, bd.b.Revision, id)
		if other, dup := e.names[name]; dup {
			hint := `set "toolNames": "full" for this endpoint in the profile, or change the id of one of the two commands`
			if e.mode == ToolNamesStable {
				hint = `set "toolNames": "compact" for this endpoint in the profile (compact names carry a fingerprint of the whole id), or change the id of one of the two commands`
			}
			e.err = kernel.Errorf(kernel.CodeConflict, "commands %s (%s) and %s (%s) would both be tool %q (toolNames %s)", other, bd.b.Commands[bd.owner[other]].Release, id, bc.Release, name, e.mode).
				AtPath("/endpoints/" + kernel.PointerToken(e.name)).
				WithHint(hint)
			continue
		}
		e.names[name] = id
		kind := e.toolKind(id)
		v := &variants[kind]
		if !v.done {
			pb := &pre[kind]
			if !pb.have {
				return kernel.Errorf(kernel.CodeInternal, "tool %q was not prepared", name)
			}
			if pb.err != nil {
				e.err = pb.err
				continue
			}
			v.body, v.rawLen, v.sum, v.done = pb.body, pb.rawLen, pb.sum, true
		}
		if size := len(wireNamePrefix) + len(name) + 2 + v.rawLen - 1; size > MaxToolBytes {
			e.err = kernel.Errorf(kernel.CodeInvalid, "command %s (%s): tool object is %d bytes, over the %d-byte page limit", id, bc.Release, size, MaxToolBytes)
			continue
		}
		t := Tool{Name: name, Command: id, Release: bc.Release, Security: toolSecurity(e.ep, id)}
		if bd.full {
			t.Wire = jsontext.Value(AppendToolWire(nil, name, v.body))
		} else {
			if err := pre[kind].badErr; err != nil {
				return kernel.Errorf(kernel.CodeInternal, "tool %q", name).Wrap(err)
			}
			t.Sum = v.sum // of the compacted body
			if bd.sink != nil && v.ref == "" {
				var err error
				if v.ref, err = bd.sink.PutBody(v.body); err != nil {
					return err
				}
			}
			t.bodyRef, t.declRef = v.ref, declRef
			e.sizes = append(grow(e.sizes, 1, bd.built, bd.count), len(wireNamePrefix)+len(name)+2+len(v.body)-1)
		}
		e.proj.Tools = append(grow(e.proj.Tools, 1, bd.built, bd.count), t)
	}
	return nil
}

// warnings are the publish lists' and the endpoints' warnings, in the
// order they have always come: per endpoint, publish.commands,
// publish.packages, development releases left out, security, tasks, oauth.
func (bd *builder) warnings() []string {
	var out []string
	b := bd.b
	for _, e := range bd.eps {
		devLeftOut := map[string][]string{} // release → command ids this endpoint may not publish
		left := map[int]bool{}
		leftOut := func(i int) {
			if rel := b.Commands[i].Release; bd.dev[rel] && e.name != DevEndpoint && !left[i] {
				left[i] = true
				devLeftOut[rel] = append(devLeftOut[rel], b.Commands[i].Declaration.ID)
			}
		}
		for _, id := range e.ep.Publish.Commands {
			i, ok := bd.owner[id]
			if !ok {
				out = append(out, fmt.Sprintf("endpoint %q: publish.commands names %q, which no active release declares", e.name, id))
				continue
			}
			if ok, reason := b.Commands[i].Publishable(); !ok {
				out = append(out, fmt.Sprintf("endpoint %q: command %s (%s) is not published: %s", e.name, id, b.Commands[i].Release, reason))
				continue
			}
			leftOut(i)
		}
		for _, pkg := range e.ep.Publish.Packages {
			idx, ok := bd.byPkg[pkg]
			if !ok {
				if !bd.active[pkg] {
					out = append(out, fmt.Sprintf("endpoint %q: publish.packages names %q, which is not an active package", e.name, pkg))
				}
				continue
			}
			if pkgRel := b.Commands[idx[0]].Release; !bd.dev[pkgRel] || e.name == DevEndpoint {
				continue
			}
			for _, i := range idx {
				if ok, _ := b.Commands[i].Publishable(); ok {
					leftOut(i)
				}
			}
		}
		for _, rel := range slices.Sorted(maps.Keys(devLeftOut)) {
			ids := slices.Sorted(slices.Values(devLeftOut[rel]))
			out = append(out, fmt.Sprintf("endpoint %q: %s is a development release, published only on endpoint %q: left out %s",
				e.name, rel, DevEndpoint, strings.Join(ids, ", ")))
		}
		if u := e.proj.Unavailable; u != "" {
			out = append(out, fmt.Sprintf("endpoint %q: template %s is unavailable on this host, so none of its commands are published: %s", e.name, e.proj.Template.Name, u))
		}
		unavailable, _ := e.unavailable()
		for _, w := range e.proj.Withheld {
			if e.proj.Unavailable != "" && w.Reason == unavailable {
				continue // said once for the endpoint
			}
			out = append(out, fmt.Sprintf("%s is not published on %s: %s (%s)", w.Command, e.name, w.Reason, w.Fix))
		}
		out = append(out, securityWarnings(e.name, e.ep, e.proj.Tools)...)
		out = append(out, taskWarnings(e.name, e.ep, e.proj.Tools)...)
		out = append(out, oauthWarnings(e.name, e.ep, e.proj.Tools)...)
		out = append(out, discoveryWarnings(e.name, e.ep, e.proj.Tools)...)
		if bd.sink != nil {
			// The index takes tools in their order; the sizes go with them,
			// sorted in place: a copy of both would be held beside them
			// at the point of a publish that holds the most.
			sort.Sort(toolsInOrder{e.proj.Tools, e.sizes})
		} else {
			slices.SortFunc(e.proj.Tools, func(a, b Tool) int { return CompareTools(&a, &b) })
		}
	}
	return out
}

// write sends what only the whole candidate decides to the sink: the
// revision, the routes and the endpoints with their tools.
func (bd *builder) write() error {
	b := bd.b
	rels, err := json.Marshal(b.Releases, json.Deterministic(true))
	if err != nil {
		return kernel.Errorf(kernel.CodeInternal, "cannot encode the releases").Wrap(err)
	}
	if err := bd.sink.PutRevision(b.Revision, b.Profile, rels); err != nil {
		return err
	}
	cmd := func(id string) (*BoundCommand, string) {
		i, ok := bd.owner[id]
		if !ok {
			return nil, ""
		}
		return &b.Commands[i], bd.refs[i]
	}
	if err := putRoutes(b.Routes, cmd, bd.sink); err != nil {
		return err
	}
	for _, e := range bd.eps {
		if err := putEndpointMeta(&e.proj, bd.sink); err != nil {
			return err
		}
		for j := range e.proj.Tools {
			t := &e.proj.Tools[j]
			if err := bd.sink.PutTool(t.Name, t.Command, t.Release, t.declRef, t.bodyRef, t.Security, e.sizes[j], e.ep.Discovery.Lists(t.Command, t.Package())); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkRelease checks a release against its manifest and fills in what
// BoundRelease leaves empty.
func checkRelease(r ReleaseInput) (ReleaseInput, error) {
	m := r.Manifest
	if m == nil {
		return r, kernel.Errorf(kernel.CodeInternal, "release %s@%s has no manifest", r.Name, r.Version)
	}
	checks := []struct{ what, have, want string }{
		{"name", r.Name, m.Name}, {"version", r.Version, m.Version}, {"apiVersion", r.APIVersion, m.APIVersion},
	}
	if r.Development {
		checks = slices.Delete(checks, 1, 2) // recorded under the store's development version
	}
	for _, f := range checks {
		if f.have != "" && f.have != f.want {
			return r, kernel.Errorf(kernel.CodeInternal, "release %s@%s: %s %q disagrees with its manifest (%q)", m.Name, m.Version, f.what, f.have, f.want)
		}
	}
	if r.Development && r.Version == "" {
		return r, kernel.Errorf(kernel.CodeInternal, "development release of %s has no version", m.Name)
	}
	r.Name, r.Version, r.APIVersion = m.Name, cmp.Or(r.Version, m.Version), m.APIVersion
	return r, nil
}

// boundReleases checks the releases against their manifests and orders them
// by package name, so input order never changes the result.
func boundReleases(in []ReleaseInput) ([]ReleaseInput, error) {
	out := make([]ReleaseInput, 0, len(in))
	seen := map[string]string{}
	for _, r := range in {
		r, err := checkRelease(r)
		if err != nil {
			return nil, err
		}
		if v, dup := seen[r.Name]; dup {
			return nil, kernel.Errorf(kernel.CodeConflict, "package %s has two active releases: %s and %s", r.Name, v, r.Version)
		}
		seen[r.Name] = r.Version
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b ReleaseInput) int { return strings.Compare(a.Name, b.Name) })
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
			return kernel.Errorf(kernel.CodeInvalid, "%s has an empty path", side)
		}
		if kernel.IsBuiltinVerb(words[0]) {
			return kernel.Errorf(kernel.CodeConflict, "route %q: %s collides with built-in verb %q", key, side, words[0])
		}
		if prev, dup := terms[key]; dup {
			return kernel.Errorf(kernel.CodeConflict, "route %q: %s collides with %s", key, prev, side)
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
	var groupWords [][]string // each group's words, a prefix of a terminal's
	words := 0
	for _, t := range order {
		for n := 1; n < len(t.words); n++ {
			key := strings.Join(t.words[:n], " ")
			if term, clash := terms[key]; clash {
				return nil, kernel.Errorf(kernel.CodeConflict, "route %q: %s collides with group of %s (%s)", key, term, t.side.command, t.side.release)
			}
			if _, ok := groups[key]; !ok {
				groups[key] = routeSide{RouteGroup, t.side.command, t.side.release}
				groupWords = append(groupWords, t.words[:n])
				words += n
			}
		}
		words += len(t.words)
	}
	// Every route's words are copied into one array, and the routes are
	// counted before they are made: one allocation each instead of one per
	// route, and none left unused, for the routes a publish holds to the end.
	arena := make([]string, 0, words)
	clone := func(ws []string) []string {
		start := len(arena)
		arena = append(arena, ws...)
		return arena[start:len(arena):len(arena)]
	}
	routes := make([]Route, 0, len(order)+len(groupWords))
	for _, ws := range groupWords {
		routes = append(routes, Route{Words: clone(ws), Kind: RouteGroup})
	}
	for _, t := range order {
		routes = append(routes, Route{Words: clone(t.words), Kind: t.side.kind, Command: t.side.command})
	}
	// Each route's words are its own (terminals and groups are told apart
	// above), so the order is the same however the sort goes.
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
	Execution    *wireExecution   `json:"execution,omitempty"`
}

type wireExecution struct {
	TaskSupport string `json:"taskSupport"`
}

// The kinds of tool a command becomes on an endpoint (docs/tasks.md).
const (
	toolPlain    = iota
	toolStarted  // a task command with the job family: may answer started
	toolTaskOnly // a required task command without it: only ever a task
)

// toolBody is bc's tool object. A started tool declares the job family's
// started answer in its output schema; a task-only one declares
// execution.taskSupport "required", the tool member MCP defines for a tool
// that cannot be called but as a task.
//
// in is scratch for the input schema, kept for the next body (the encoder
// copies it into dst).
func toolBody(bc *BoundCommand, kind int, dst *bytes.Buffer, in *[]byte) error {
	c := &bc.Declaration
	var err error
	if *in, err = kernel.AppendInputSchema((*in)[:0], c); err != nil {
		return wrapCommand(err, bc, "input schema")
	}
	out, err := kernel.SharedOutputSchema(c, kind == toolStarted)
	if err != nil {
		return wrapCommand(err, bc, "output schema")
	}
	w := wireBody{Title: c.Summary, InputSchema: *in, OutputSchema: out}
	if kind == toolTaskOnly {
		w.Execution = &wireExecution{TaskSupport: "required"}
	}
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
	if b, ok := appendWireBody(dst.AvailableBuffer(), &w, plainBody(c)); ok {
		dst.Write(b)
		return nil
	}
	if err := json.MarshalWrite(dst, w, json.Deterministic(true)); err != nil {
		return wrapCommand(err, bc, "encode tool")
	}
	return nil
}

// plainParams bounds the params plainBody compares pairwise.
const plainParams = 32

// plainBody reports whether c's tool object holds only what rukh wrote:
// its output schema is one of the fixed ones (no publisher's schema of
// structured data in it) and its input schema has no two params of one id.
func plainBody(c *kernel.Command) bool {
	if r := c.Execute.Result; r != nil && r.Kind != kernel.ResultText {
		return false
	}
	if len(c.Params) > plainParams {
		return false // the encoder's check of repeats is faster for many
	}
	for i := range c.Params {
		for j := range i {
			if c.Params[i].ID == c.Params[j].ID {
				return false
			}
		}
	}
	return true
}

// appendWireBody appends w as the encoder writes it, for a body whose
// schemas rukh wrote (plain): compact, valid, no repeated names, which
// the encoder would parse only to copy. It reports false, having written
// nothing worth keeping, where it cannot tell (a schema with spaces, a
// string that is not UTF-8); the encoder then writes w, or says why not.
func appendWireBody(b []byte, w *wireBody, plain bool) ([]byte, bool) {
	if !plain || !compactJSON(w.InputSchema) || !compactJSON(w.OutputSchema) {
		return b, false
	}
	var err error
	str := func(s string) {
		if err == nil {
			b, err = jsontext.AppendQuote(b, s)
		}
	}
	hint := func(name string, v *bool) {
		if v != nil {
			b = append(append(b, name...), strconv.FormatBool(*v)...)
		}
	}
	b = append(b, '{')
	sep := ""
	if w.Title != "" {
		b = append(b, `"title":`...)
		str(w.Title)
		sep = ","
	}
	if w.Description != "" {
		b = append(append(b, sep...), `"description":`...)
		str(w.Description)
		sep = ","
	}
	b = append(append(append(b, sep...), `"inputSchema":`...), w.InputSchema...)
	b = append(append(b, `,"outputSchema":`...), w.OutputSchema...)
	if a := w.Annotations; a != nil {
		start := len(b)
		b = append(b, `,"annotations":{`...)
		n := len(b)
		if a.Title != "" {
			b = append(b, `"title":`...)
			str(a.Title)
		}
		for _, h := range []struct {
			name string
			v    *bool
		}{{`"readOnlyHint":`, a.ReadOnlyHint}, {`"destructiveHint":`, a.DestructiveHint}, {`"idempotentHint":`, a.IdempotentHint}, {`"openWorldHint":`, a.OpenWorldHint}} {
			if h.v != nil && len(b) > n {
				b = append(b, ',')
			}
			hint(h.name, h.v)
		}
		if len(b) == n {
			b = b[:start] // empty: omitted, as the encoder omits it
		} else {
			b = append(b, '}')
		}
	}
	if e := w.Execution; e != nil {
		b = append(b, `,"execution":{"taskSupport":`...)
		str(e.TaskSupport)
		b = append(b, '}')
	}
	return append(b, '}'), err == nil
}

// compactJSON reports whether v has no white space outside its strings.
func compactJSON(v []byte) bool {
	in := false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return len(v) > 0 && !in
}

func wrapCommand(err error, bc *BoundCommand, what string) error {
	code := kernel.ErrorCode(err)
	return kernel.Errorf(code, "command %s (%s): %s", bc.Declaration.ID, bc.Release, what).Wrap(err)
}

func reasonIf(cond bool, reason string) string {
	if cond {
		return reason
	}
	return ""
}

// toolsInOrder sorts tools in their order (CompareTools) and their wire
// sizes with them.
type toolsInOrder struct {
	tools []Tool
	sizes []int
}

func (t toolsInOrder) Len() int { return len(t.tools) }
func (t toolsInOrder) Less(i, j int) bool {
	return CompareTools(&t.tools[i], &t.tools[j]) < 0
}
func (t toolsInOrder) Swap(i, j int) {
	t.tools[i], t.tools[j] = t.tools[j], t.tools[i]
	t.sizes[i], t.sizes[j] = t.sizes[j], t.sizes[i]
}
