package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
)

// Transports an endpoint may offer.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
)

// Tool name modes (docs/profile.md, Tool names). Compact is the default.
const (
	ToolNamesCompact = "compact"
	ToolNamesFull    = "full"
	ToolNamesStable  = "stable"
)

// Profile defaults.
const (
	DefaultEndpoint  = "local"
	DefaultSubject   = "owner"
	DefaultTemplate  = "default"
	builtinNamespace = "rukh"
)

// Template defaults and maxima. resultBytes can never exceed the core's own
// 128 KiB commandResult limit (docs/design.md, Limits); templates only make
// limits smaller.
const (
	DefaultTimeoutMs        = 30000
	DefaultMaxConcurrent    = 4
	DefaultMaxHeld          = 16
	DefaultDiagnosticsBytes = 64 << 10
	DefaultResultBytes      = 128 << 10

	MaxTimeoutMs        = 24 * 60 * 60 * 1000
	MaxMaxConcurrent    = 1024
	MaxMaxHeld          = 4096
	MaxDiagnosticsBytes = 64 << 20
	MaxResultBytes      = 128 << 10
)

// Maxima of a template's confine limits; processes is bounded by
// kernel.MaxProcesses.
const (
	MaxConfineMemoryMiB  = 1 << 20
	MaxConfineCPUSeconds = 24 * 60 * 60
	MaxConfineFileMiB    = 1 << 20
)

// Profile size limits, checked before decoding.
const (
	maxProfileBytes   = 8 << 20
	maxProfileDepth   = 8
	maxProfileMembers = 500_000
	maxEndpoints      = 256
	maxTemplates      = 256
)

// Profile is the owner's policy (docs/profile.md): endpoints and task
// templates.
type Profile struct {
	Endpoints map[string]Endpoint     `json:"endpoints"`
	Templates map[string]TemplateSpec `json:"templates"`
}

// Endpoint is one named place agents connect to. Zero-valued Transports,
// Subject and Template take their defaults (stdio, owner, default). An
// empty ToolNames means the profile states none: the endpoint uses the
// default (compact), and the canonical form leaves it out, so that a later
// default can be told apart from an owner's choice.
type Endpoint struct {
	Namespace  string   `json:"namespace"`
	Transports []string `json:"transports"`
	Subject    string   `json:"subject"`
	Template   string   `json:"template"`
	Publish    Publish  `json:"publish"`
	ToolNames  string   `json:"toolNames,omitempty"`
	Security   Security `json:"security,omitzero"` // per-command levels (security.go)
	HTTPAuth   string   `json:"httpAuth,omitempty"`
	Tasks      *Tasks   `json:"tasks,omitempty"` // background work (tasks.go)
	OAuth      *OAuth   `json:"oauth,omitempty"` // the identity provider of httpAuth oauth and rukh+oauth (oauth.go)
	// Discovery is how agents reach the tools (discovery.go); nil: direct.
	Discovery *Discovery `json:"discovery,omitempty"`
}

// ToolNameMode is the endpoint's effective tool name mode.
func (e Endpoint) ToolNameMode() string {
	if e.ToolNames == "" {
		return ToolNamesCompact
	}
	return e.ToolNames
}

// Publish names what an endpoint publishes: command identities and package
// names (every eligible command of the package's active release).
type Publish struct {
	Commands []string `json:"commands"`
	Packages []string `json:"packages"`
}

// publishSet is a publish list indexed for lookups.
type publishSet struct{ commands, packages map[string]bool }

func (p Publish) set() publishSet {
	s := publishSet{commands: make(map[string]bool, len(p.Commands)), packages: make(map[string]bool, len(p.Packages))}
	for _, id := range p.Commands {
		s.commands[id] = true
	}
	for _, pkg := range p.Packages {
		s.packages[pkg] = true
	}
	return s
}

// lists is the publish-list rule: an endpoint publishes a command when its
// id or its package is listed.
func (s publishSet) lists(id, pkg string) bool { return s.commands[id] || s.packages[pkg] }

// Names reports whether p lists package pkg or one of its commands ids, so
// that the endpoint publishes at least one of them.
func (p Publish) Names(pkg string, ids []string) bool {
	s := p.set()
	return s.packages[pkg] || slices.ContainsFunc(ids, func(id string) bool { return s.lists(id, pkg) })
}

// TemplateSpec holds the limits of a task template. A zero field takes its
// default; ParseProfile rejects an explicit zero. Confine is the template's
// confinement (docs/confinement.md); nil is an unconfined template.
type TemplateSpec struct {
	TimeoutMs        int64           `json:"timeoutMs"`
	MaxConcurrent    int             `json:"maxConcurrent"`
	MaxHeld          int             `json:"maxHeld"`
	DiagnosticsBytes int             `json:"diagnosticsBytes"`
	ResultBytes      int             `json:"resultBytes"`
	Confine          *kernel.Confine `json:"confine,omitzero"`
}

// DefaultProfile is the profile of a fresh home: endpoint local (namespace
// local, stdio, subject owner, template default) publishing nothing.
func DefaultProfile() *Profile {
	return &Profile{
		Endpoints: map[string]Endpoint{
			DefaultEndpoint: {
				Namespace:  DefaultEndpoint,
				Transports: []string{TransportStdio},
				Subject:    DefaultSubject,
				Template:   DefaultTemplate,
			},
		},
		Templates: map[string]TemplateSpec{DefaultTemplate: DefaultTemplateSpec()},
	}
}

// DefaultTemplateSpec returns the default limits of a template
// (docs/profile.md, Templates and their limits).
func DefaultTemplateSpec() TemplateSpec {
	return TemplateSpec{
		TimeoutMs:        DefaultTimeoutMs,
		MaxConcurrent:    DefaultMaxConcurrent,
		MaxHeld:          DefaultMaxHeld,
		DiagnosticsBytes: DefaultDiagnosticsBytes,
		ResultBytes:      DefaultResultBytes,
	}
}

// The wire form distinguishes absent members (defaults) from explicit ones.
type rawProfile struct {
	Endpoints map[string]rawEndpoint `json:"endpoints"`
	Templates map[string]rawTemplate `json:"templates"`
}

type rawEndpoint struct {
	Namespace  *string       `json:"namespace"`
	Transports []string      `json:"transports"`
	Subject    *string       `json:"subject"`
	Template   *string       `json:"template"`
	Publish    rawPublish    `json:"publish"`
	ToolNames  *string       `json:"toolNames"`
	Security   *rawSecurity  `json:"security"`
	HTTPAuth   *string       `json:"httpAuth"`
	Tasks      *rawTasks     `json:"tasks"`
	OAuth      *rawOAuth     `json:"oauth"`
	Discovery  *rawDiscovery `json:"discovery"`
}

type rawPublish struct {
	Commands []string `json:"commands"`
	Packages []string `json:"packages"`
}

type rawTemplate struct {
	TimeoutMs        *int64      `json:"timeoutMs"`
	MaxConcurrent    *int        `json:"maxConcurrent"`
	MaxHeld          *int        `json:"maxHeld"`
	DiagnosticsBytes *int        `json:"diagnosticsBytes"`
	ResultBytes      *int        `json:"resultBytes"`
	Confine          *rawConfine `json:"confine"`
}

type rawConfine struct {
	Network    *string  `json:"network"`
	Read       []string `json:"read"`
	Write      []string `json:"write"`
	Processes  *int64   `json:"processes"`
	MemoryMiB  *int64   `json:"memoryMiB"`
	CPUSeconds *int64   `json:"cpuSeconds"`
	FileMiB    *int64   `json:"fileMiB"`
}

// ParseProfile parses and validates a profile strictly: duplicate or
// unknown members, nulls, invalid UTF-8 and every rule violation are
// CodeInvalid errors whose Path is the JSON pointer of the offending value.
func ParseProfile(data []byte) (*Profile, error) {
	if err := kernel.CheckJSON(data, kernel.JSONLimits{MaxBytes: maxProfileBytes, MaxDepth: maxProfileDepth, MaxMembers: maxProfileMembers}); err != nil {
		return nil, err
	}
	if err := rejectNull(data); err != nil {
		return nil, err
	}
	if k := jsontext.Value(bytes.TrimSpace(data)).Kind(); k != '{' {
		return nil, kernel.Errorf(kernel.CodeInvalid, "profile must be a JSON object")
	}
	var raw rawProfile
	if err := json.Unmarshal(data, &raw, json.RejectUnknownMembers(true)); err != nil {
		return nil, profileJSONError(err)
	}
	p := &Profile{Endpoints: map[string]Endpoint{}, Templates: map[string]TemplateSpec{}}
	for _, name := range slices.Sorted(maps.Keys(raw.Templates)) {
		path := "/templates/" + kernel.PointerToken(name)
		t, err := raw.Templates[name].spec(path)
		if err != nil {
			return nil, err
		}
		p.Templates[name] = t
	}
	for _, name := range slices.Sorted(maps.Keys(raw.Endpoints)) {
		path := "/endpoints/" + kernel.PointerToken(name)
		re := raw.Endpoints[name]
		if re.Namespace == nil {
			return nil, invalidAt(path, "missing member \"namespace\"")
		}
		ep := Endpoint{
			Namespace:  *re.Namespace,
			Transports: re.Transports,
			Subject:    deref(re.Subject),
			Template:   deref(re.Template),
			ToolNames:  deref(re.ToolNames),
			Publish:    Publish{Commands: re.Publish.Commands, Packages: re.Publish.Packages},
			Security:   re.Security.security(),
			HTTPAuth:   deref(re.HTTPAuth),
		}
		// Explicit empty strings are mistakes, not requests for a default.
		for _, f := range []struct {
			member string
			v      *string
		}{{"subject", re.Subject}, {"template", re.Template}, {"toolNames", re.ToolNames}, {"httpAuth", re.HTTPAuth}} {
			if f.v != nil && *f.v == "" {
				return nil, invalidAt(path+"/"+f.member, "empty "+f.member)
			}
		}
		if re.Security != nil && re.Security.Default != nil && *re.Security.Default == "" {
			return nil, invalidAt(path+"/security/default", "empty default")
		}
		if re.Transports != nil && len(re.Transports) == 0 {
			return nil, invalidAt(path+"/transports", "no transports")
		}
		var err error
		if ep.Tasks, err = re.Tasks.tasks(path + "/tasks"); err != nil {
			return nil, err
		}
		if ep.OAuth, err = re.OAuth.oauth(path + "/oauth"); err != nil {
			return nil, err
		}
		if ep.Discovery, err = re.Discovery.discovery(path + "/discovery"); err != nil {
			return nil, err
		}
		p.Endpoints[name] = ep
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p.normalized(), nil
}

func (t rawTemplate) spec(path string) (TemplateSpec, error) {
	s := DefaultTemplateSpec()
	check := func(member string, v *int64, max int64, dst func(int64)) error {
		if v == nil {
			return nil
		}
		if *v <= 0 {
			return invalidAt(path+"/"+member, fmt.Sprintf("%s must be greater than 0", member))
		}
		if *v > max {
			return invalidAt(path+"/"+member, fmt.Sprintf("%s %d is over the maximum of %d", member, *v, max))
		}
		dst(*v)
		return nil
	}
	widen := func(p *int) *int64 {
		if p == nil {
			return nil
		}
		v := int64(*p)
		return &v
	}
	steps := []error{
		check("timeoutMs", t.TimeoutMs, MaxTimeoutMs, func(v int64) { s.TimeoutMs = v }),
		check("maxConcurrent", widen(t.MaxConcurrent), MaxMaxConcurrent, func(v int64) { s.MaxConcurrent = int(v) }),
		check("maxHeld", widen(t.MaxHeld), MaxMaxHeld, func(v int64) { s.MaxHeld = int(v) }),
		check("diagnosticsBytes", widen(t.DiagnosticsBytes), MaxDiagnosticsBytes, func(v int64) { s.DiagnosticsBytes = int(v) }),
		check("resultBytes", widen(t.ResultBytes), MaxResultBytes, func(v int64) { s.ResultBytes = int(v) }),
	}
	for _, err := range steps {
		if err != nil {
			return TemplateSpec{}, err
		}
	}
	if t.Confine != nil {
		c := &kernel.Confine{Network: deref(t.Confine.Network), Read: t.Confine.Read, Write: t.Confine.Write}
		at := path + "/confine"
		if t.Confine.Network != nil && c.Network == "" {
			return TemplateSpec{}, invalidAt(at+"/network", "empty network")
		}
		for _, l := range []struct {
			member string
			v      *int64
			max    int64
			dst    *int
		}{
			{"processes", t.Confine.Processes, kernel.MaxProcesses, &c.Processes},
			{"memoryMiB", t.Confine.MemoryMiB, MaxConfineMemoryMiB, &c.MemoryMiB},
			{"cpuSeconds", t.Confine.CPUSeconds, MaxConfineCPUSeconds, &c.CPUSeconds},
			{"fileMiB", t.Confine.FileMiB, MaxConfineFileMiB, &c.FileMiB},
		} {
			if err := check(l.member, l.v, l.max, func(v int64) { *l.dst = int(v) }); err != nil {
				return TemplateSpec{}, invalidAt(at+"/"+l.member, err.(*kernel.Error).Message)
			}
		}
		if err := checkConfine(c, at); err != nil {
			return TemplateSpec{}, err
		}
		var err error
		if c, err = resolveHome(c, at); err != nil {
			return TemplateSpec{}, err
		}
		s.Confine = c
	}
	return s, nil
}

// userHome is the owner's home directory, where "~/" in a template's paths
// resolves; a seam for tests.
var userHome = os.UserHomeDir

// resolveHome returns c with its "~" and "~/..." paths under the owner's
// home: what a template grants is fixed when the profile is loaded.
func resolveHome(c *kernel.Confine, at string) (*kernel.Confine, error) {
	var home string
	resolve := func(member string, paths []string) ([]string, error) {
		out := slices.Clone(paths)
		for i, p := range out {
			if !kernel.UnderHome(p) {
				continue
			}
			if home == "" {
				h, err := userHome()
				if err != nil || !strings.HasPrefix(h, "/") {
					return nil, invalidAt(fmt.Sprintf("%s/%s/%d", at, member, i), fmt.Sprintf("path %q: the owner's home directory is unknown", p)).
						WithHint("set HOME to an absolute path, or write the path out")
				}
				home = h
			}
			out[i] = kernel.ResolveHome(p, home)
		}
		return out, nil
	}
	r := *c
	var err error
	if r.Read, err = resolve("read", c.Read); err != nil {
		return nil, err
	}
	if r.Write, err = resolve("write", c.Write); err != nil {
		return nil, err
	}
	return &r, checkConfine(&r, at)
}

// checkConfine checks a template's confinement: network none or host,
// sound read and write lists, limits in range.
func checkConfine(c *kernel.Confine, at string) error {
	switch c.Network {
	case "", kernel.NetworkNone, kernel.NetworkHost:
	default:
		return invalidAt(at+"/network", fmt.Sprintf("unknown network %q: want %q or %q", c.Network, kernel.NetworkNone, kernel.NetworkHost))
	}
	if err := kernel.CheckConfinePaths(c.Read, at+"/read"); err != nil {
		return err
	}
	if err := kernel.CheckConfinePaths(c.Write, at+"/write"); err != nil {
		return err
	}
	for _, l := range []struct {
		member string
		v, max int
	}{
		{"processes", c.Processes, kernel.MaxProcesses},
		{"memoryMiB", c.MemoryMiB, MaxConfineMemoryMiB},
		{"cpuSeconds", c.CPUSeconds, MaxConfineCPUSeconds},
		{"fileMiB", c.FileMiB, MaxConfineFileMiB},
	} {
		if l.v < 0 {
			return invalidAt(at+"/"+l.member, fmt.Sprintf("%s must be greater than 0", l.member))
		}
		if l.v > l.max {
			return invalidAt(at+"/"+l.member, fmt.Sprintf("%s %d is over the maximum of %d", l.member, l.v, l.max))
		}
	}
	return nil
}

// Validate checks every profile rule on p with defaults applied. Errors are
// CodeInvalid with the JSON pointer of the offending value; when several
// rules fail, the first in sorted name order is reported.
func (p *Profile) Validate() error {
	if p == nil {
		return kernel.Errorf(kernel.CodeInvalid, "no profile")
	}
	if len(p.Endpoints) > maxEndpoints {
		return invalidAt("/endpoints", fmt.Sprintf("%d endpoints, over the limit of %d", len(p.Endpoints), maxEndpoints))
	}
	if len(p.Templates) > maxTemplates {
		return invalidAt("/templates", fmt.Sprintf("%d templates, over the limit of %d", len(p.Templates), maxTemplates))
	}
	for _, name := range slices.Sorted(maps.Keys(p.Templates)) {
		path := "/templates/" + kernel.PointerToken(name)
		if !plainNames.MatchString(name) {
			return invalidAt(path, fmt.Sprintf("invalid template name %q: want [a-z0-9][a-z0-9-]{0,63}", name))
		}
		if err := p.Templates[name].withDefaults().validate(path); err != nil {
			return err
		}
	}
	namespaces := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(p.Endpoints)) {
		path := "/endpoints/" + kernel.PointerToken(name)
		if !plainNames.MatchString(name) {
			return invalidAt(path, fmt.Sprintf("invalid endpoint name %q: want [a-z0-9][a-z0-9-]{0,63}", name))
		}
		ep := p.Endpoints[name].withDefaults()
		if !plainNames.MatchString(ep.Namespace) {
			return invalidAt(path+"/namespace", fmt.Sprintf("invalid namespace %q: want [a-z0-9][a-z0-9-]{0,63}", ep.Namespace))
		}
		if other, ok := namespaces[ep.Namespace]; ok {
			return invalidAt(path+"/namespace", fmt.Sprintf("namespace %q is already used by endpoint %q", ep.Namespace, other))
		}
		namespaces[ep.Namespace] = name
		seen := map[string]bool{}
		for i, tr := range ep.Transports {
			tp := fmt.Sprintf("%s/transports/%d", path, i)
			if tr != TransportStdio && tr != TransportHTTP {
				return invalidAt(tp, fmt.Sprintf("unknown transport %q: want stdio or http", tr))
			}
			if seen[tr] {
				return invalidAt(tp, fmt.Sprintf("duplicate transport %q", tr))
			}
			seen[tr] = true
		}
		if !plainNames.MatchString(ep.Subject) {
			return invalidAt(path+"/subject", fmt.Sprintf("invalid subject %q: want [a-z0-9][a-z0-9-]{0,63}", ep.Subject))
		}
		if _, ok := p.template(ep.Template); !ok {
			return invalidAt(path+"/template", fmt.Sprintf("unknown template %q", ep.Template))
		}
		switch ep.ToolNames {
		case "", ToolNamesCompact, ToolNamesFull, ToolNamesStable:
		default:
			return invalidAt(path+"/toolNames", fmt.Sprintf("unknown toolNames %q: want compact, full or stable", ep.ToolNames))
		}
		if err := validateSecurity(path, ep); err != nil {
			return err
		}
		if err := ep.Tasks.validate(path + "/tasks"); err != nil {
			return err
		}
		if err := validateOAuth(path, ep); err != nil {
			return err
		}
		if err := checkPublishList(path+"/publish/commands", "command", ep.Publish.Commands, commandIDs, "[a-z0-9][a-z0-9._-]{0,127}"); err != nil {
			return err
		}
		if err := checkPublishList(path+"/publish/packages", "package", ep.Publish.Packages, packageNames, "[a-z0-9][a-z0-9.-]{0,63}"); err != nil {
			return err
		}
	}
	return nil
}

func checkPublishList(path, what string, list []string, re nameShape, want string) error {
	seen := make(map[string]bool, len(list))
	for i, s := range list {
		ip := func() string { return fmt.Sprintf("%s/%d", path, i) } // only for an error
		if !re.MatchString(s) {
			return invalidAt(ip(), fmt.Sprintf("invalid %s %q: want %s", what, s, want))
		}
		if inBuiltinNamespace(s) {
			return invalidAt(ip(), fmt.Sprintf("%s %q is in the built-in rukh namespace: owner operations are never tools", what, s))
		}
		if seen[s] {
			return invalidAt(ip(), fmt.Sprintf("duplicate %s %q", what, s))
		}
		seen[s] = true
	}
	return nil
}

// inBuiltinNamespace reports whether a command id or package name is rukh
// itself or below it.
func inBuiltinNamespace(s string) bool {
	return s == builtinNamespace || strings.HasPrefix(s, builtinNamespace+".")
}

func (t TemplateSpec) validate(path string) error {
	fields := []struct {
		member string
		v, max int64
	}{
		{"timeoutMs", t.TimeoutMs, MaxTimeoutMs},
		{"maxConcurrent", int64(t.MaxConcurrent), MaxMaxConcurrent},
		{"maxHeld", int64(t.MaxHeld), MaxMaxHeld},
		{"diagnosticsBytes", int64(t.DiagnosticsBytes), MaxDiagnosticsBytes},
		{"resultBytes", int64(t.ResultBytes), MaxResultBytes},
	}
	for _, f := range fields {
		if f.v <= 0 {
			return invalidAt(path+"/"+f.member, fmt.Sprintf("%s must be greater than 0", f.member))
		}
		if f.v > f.max {
			return invalidAt(path+"/"+f.member, fmt.Sprintf("%s %d is over the maximum of %d", f.member, f.v, f.max))
		}
	}
	if t.MaxHeld < t.MaxConcurrent {
		return invalidAt(path+"/maxHeld", fmt.Sprintf("maxHeld %d is less than maxConcurrent %d", t.MaxHeld, t.MaxConcurrent))
	}
	if t.Confine != nil {
		return checkConfine(t.Confine, path+"/confine")
	}
	return nil
}

func (t TemplateSpec) withDefaults() TemplateSpec {
	d := DefaultTemplateSpec()
	if t.TimeoutMs == 0 {
		t.TimeoutMs = d.TimeoutMs
	}
	if t.MaxConcurrent == 0 {
		t.MaxConcurrent = d.MaxConcurrent
	}
	if t.MaxHeld == 0 {
		t.MaxHeld = d.MaxHeld
	}
	if t.DiagnosticsBytes == 0 {
		t.DiagnosticsBytes = d.DiagnosticsBytes
	}
	if t.ResultBytes == 0 {
		t.ResultBytes = d.ResultBytes
	}
	return t
}

func (e Endpoint) withDefaults() Endpoint {
	if len(e.Transports) == 0 {
		e.Transports = []string{TransportStdio}
	}
	if e.Subject == "" {
		e.Subject = DefaultSubject
	}
	if e.Template == "" {
		e.Template = DefaultTemplate
	}
	return e
}

// template resolves a template name; "default" always exists, with the
// default limits unless the profile overrides it.
func (p *Profile) template(name string) (TemplateSpec, bool) {
	if t, ok := p.Templates[name]; ok {
		return t.withDefaults(), true
	}
	if name == DefaultTemplate {
		return DefaultTemplateSpec(), true
	}
	return TemplateSpec{}, false
}

// normalized returns a deep copy with every default filled in (but
// toolNames, kept as stated), the implicit default template present, and transports and publish lists sorted (their
// order carries no meaning).
func (p *Profile) normalized() *Profile {
	n := &Profile{
		Endpoints: make(map[string]Endpoint, len(p.Endpoints)),
		Templates: make(map[string]TemplateSpec, len(p.Templates)+1),
	}
	for name, t := range p.Templates {
		t = t.withDefaults()
		if c := t.Confine; c != nil {
			cc := *c
			cc.Read, cc.Write = slices.Clone(c.Read), slices.Clone(c.Write)
			t.Confine = &cc
		}
		n.Templates[name] = t
	}
	if _, ok := n.Templates[DefaultTemplate]; !ok {
		n.Templates[DefaultTemplate] = DefaultTemplateSpec()
	}
	for name, e := range p.Endpoints {
		e = e.withDefaults()
		e.Transports = sortedCopy(e.Transports)
		e.Publish.Commands = sortedCopy(e.Publish.Commands)
		e.Publish.Packages = sortedCopy(e.Publish.Packages)
		e.Security = e.Security.clone()
		e.Tasks = e.Tasks.withDefaults()
		e.OAuth = e.OAuth.clone()
		e.Discovery = e.Discovery.clone()
		n.Endpoints[name] = e
	}
	return n
}

// Canonical returns the profile as deterministic JSON with every default
// filled in but toolNames, which appears only where the profile states it:
// the form a revision stores and `rukh policy show` prints.
func (p *Profile) Canonical() jsontext.Value {
	b, err := json.Marshal(p.normalized(), json.Deterministic(true))
	if err != nil {
		// Only strings, ints and maps of them: marshalling cannot fail.
		panic("policy: marshal profile: " + err.Error())
	}
	return jsontext.Value(b)
}

// rejectNull refuses JSON null anywhere: in a profile, null never means
// "absent" or "default".
func rejectNull(data []byte) error {
	d := jsontext.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := d.ReadToken()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return profileJSONError(err)
		}
		if tok.Kind() == 'n' {
			return invalidAt(string(d.StackPointer()), "null is not allowed")
		}
	}
}

func profileJSONError(err error) error {
	var se *json.SemanticError
	if errors.As(err, &se) && se.JSONKind == '0' && se.GoType != nil && se.GoType.Kind() != reflect.String && se.GoType.Kind() != reflect.Bool {
		return invalidAt(string(se.JSONPointer), fmt.Sprintf("%s is not an integer in range", se.JSONValue))
	}
	return kernel.JSONError(err)
}

func invalidAt(path, msg string) *kernel.Error {
	return kernel.Errorf(kernel.CodeInvalid, "%s", msg).AtPath(path)
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	if c == nil {
		c = []string{}
	}
	return c
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// template is the spec, named name, as bound into a projection.
func (t TemplateSpec) template(name string) Template {
	return Template{Name: name, TimeoutMs: t.TimeoutMs, MaxConcurrent: t.MaxConcurrent, MaxHeld: t.MaxHeld,
		DiagnosticsBytes: t.DiagnosticsBytes, ResultBytes: t.ResultBytes, Confine: t.Confine}
}
