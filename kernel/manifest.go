package kernel

import (
	"bytes"
	"errors"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// ManifestLimits bound the strict pass over a manifest before it is decoded.
var ManifestLimits = JSONLimits{MaxBytes: 4 << 20, MaxDepth: 64, MaxMembers: 1 << 18}

// Reserved words: the CLI library (urfave/cli) adds help/h and completion
// at every level and a hidden shell-completion flag, so no manifest may
// declare them.
var (
	reservedWords  = []string{"help", "h", "completion"}
	reservedFlags  = []string{"help", "h", "generate-shell-completion", "output"} // --output is the CLI's result format
	reservedShorts = []string{"h"}
)

var (
	nameRE    = pattern{`^[a-z0-9][a-z0-9.-]{0,63}$`, run(isLowerDigit, oneOf(isLowerDigit, ".-"), 63)}
	idRE      = pattern{`^[a-z0-9][a-z0-9._-]{0,127}$`, run(isLowerDigit, oneOf(isLowerDigit, "._-"), 127)}
	wordRE    = pattern{`^[a-z0-9][a-z0-9-]{0,31}$`, run(isLowerDigit, oneOf(isLowerDigit, "-"), 31)}
	paramIDRE = pattern{`^[a-z0-9][a-z0-9_-]{0,63}$`, run(isLowerDigit, oneOf(isLowerDigit, "_-"), 63)}
	shortRE   = pattern{`^[A-Za-z0-9]$`, run(isAlnum, isAlnum, 0)}
	featureRE = pattern{`^[a-z0-9][a-z0-9.-]{0,63}$`, run(isLowerDigit, oneOf(isLowerDigit, ".-"), 63)}
	semverRE  = pattern{semverExpr, isSemver}
)

const semverExpr = `^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)` +
	`(-(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*)?` +
	`(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$`

// Free-text bounds, in bytes.
const (
	maxTitleBytes = 1024
	maxTextBytes  = 16 << 10
	maxPathWords  = 8
)

// ParseManifest reads and validates a rukh-extension.json against every rule
// of docs/manifest.md: the manifest, the input grammar and the result-schema
// subset. data is not modified or retained beyond the
// jsontext.Value fields of the result, which are copies, so callers may
// store data as the exact raw manifest. Execute.Mode and Execute.Lifetime
// default to managed and foreground, Machine.Interaction to none.
//
// An unknown apiVersion is CodeUnsupported; every other problem is
// CodeInvalid with Path set to the JSON pointer of the offending value.
func ParseManifest(data []byte) (*Manifest, error) {
	if err := CheckJSON(data, ManifestLimits); err != nil {
		return nil, err
	}
	if data = bytes.TrimSpace(data); len(data) == 0 || data[0] != '{' {
		return nil, Errorf(CodeInvalid, "manifest must be a JSON object")
	}
	var head struct {
		APIVersion jsontext.Value `json:"apiVersion"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, JSONError(err)
	}
	var api string
	switch {
	case head.APIVersion == nil:
		return nil, Errorf(CodeInvalid, "missing apiVersion").AtPath("/apiVersion")
	case head.APIVersion.Kind() != '"':
		return nil, Errorf(CodeInvalid, "apiVersion must be a string").AtPath("/apiVersion")
	}
	if err := json.Unmarshal(head.APIVersion, &api); err != nil {
		return nil, JSONError(err)
	}
	if api != APIVersion1 && api != APIVersion2 {
		return nil, Errorf(CodeUnsupported, "%s", "unsupported apiVersion "+strconv.Quote(api)).
			AtPath("/apiVersion").
			WithHint("this rukh reads " + APIVersion1 + " and " + APIVersion2)
	}
	if err := rejectNulls(data); err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m, json.RejectUnknownMembers(true)); err != nil {
		return nil, JSONError(err)
	}
	if err := validateManifest(&m); err != nil {
		return nil, err
	}
	return &m, nil
}

// DecodeInstalled reads a manifest that ParseManifest accepted when its
// release was installed. It does not apply the rules again: a release stays
// publishable when a later rukh adds a rule (a newly reserved flag, say);
// the CLI copes with such declarations where they matter.
func DecodeInstalled(data []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(data, &m, exactSlices); err != nil {
		return nil, JSONError(err)
	}
	for i := range m.Commands {
		c := &m.Commands[i]
		if c.Execute.Mode == "" {
			c.Execute.Mode = ModeManaged
		}
		if c.Execute.Lifetime == "" {
			c.Execute.Lifetime = LifetimeForeground
		}
		if c.Machine != nil && c.Machine.Interaction == "" {
			c.Machine.Interaction = InteractionNone
		}
	}
	return &m, nil
}

// exactSlices decodes a manifest's commands and each command's params
// into slices of their own length: grown as they are read, each was
// allocated again at every growth, the largest part of what decoding a
// publish's stored manifests allocated.
var exactSlices = json.WithUnmarshalers(json.JoinUnmarshalers(
	json.UnmarshalFromFunc(func(d *jsontext.Decoder, v *[]Command) error { return decodeExact(d, v, &commandScratch) }),
	json.UnmarshalFromFunc(func(d *jsontext.Decoder, v *[]Param) error { return decodeExact(d, v, &paramScratch) }),
))

var commandScratch, paramScratch sync.Pool // of *[]Command, *[]Param

// decodeExact reads an array into a scratch slice from pool, then copies
// it into *v, a slice of its length. Anything but an array (null, or what
// is not valid there) is left to the decoder's own handling.
func decodeExact[T any](d *jsontext.Decoder, v *[]T, pool *sync.Pool) error {
	if d.PeekKind() != '[' {
		return errors.ErrUnsupported // the decoder's own handling
	}
	if _, err := d.ReadToken(); err != nil {
		return err
	}
	sp, _ := pool.Get().(*[]T)
	if sp == nil {
		sp = new([]T)
	}
	s := (*sp)[:0]
	defer func() {
		clear(s) // nothing decoded stays reachable from the pool
		*sp = s[:0]
		pool.Put(sp)
	}()
	for d.PeekKind() != ']' {
		var zero T
		s = append(s, zero)
		if err := json.UnmarshalDecode(d, &s[len(s)-1]); err != nil {
			return err
		}
	}
	if _, err := d.ReadToken(); err != nil {
		return err
	}
	*v = make([]T, len(s))
	copy(*v, s)
	return nil
}

// rejectNulls refuses null anywhere but inside a result schema: json.Unmarshal
// would quietly read null as "absent", and null never means absent here.
func rejectNulls(data []byte) error {
	d := jsontext.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := d.ReadToken()
		if err != nil {
			return nil // CheckJSON already proved the text sound; io.EOF ends it
		}
		if tok.Kind() != 'n' {
			continue
		}
		p := d.StackPointer()
		parts := strings.Split(string(p), "/")
		// "", "commands", N, "execute", "result", "schema", ...
		if len(parts) > 6 && parts[1] == "commands" && parts[3] == "execute" && parts[4] == "result" && parts[5] == "schema" {
			continue
		}
		return Errorf(CodeInvalid, "null is not allowed").AtPath(string(p))
	}
}

func invalidf(path, format string, args ...any) *Error {
	return Errorf(CodeInvalid, format, args...).AtPath(path)
}

// route is one CLI word sequence (a path or an alias) and where it was declared.
type route struct {
	words []string
	at    string
}

func validateManifest(m *Manifest) error {
	if m.Name == "" {
		return invalidf("/name", "missing name")
	}
	if !nameRE.MatchString(m.Name) {
		return invalidf("/name", "name %q must match %s", m.Name, nameRE)
	}
	if m.Version == "" {
		return invalidf("/version", "missing version")
	}
	if len(m.Version) > 128 || !semverRE.MatchString(m.Version) {
		return invalidf("/version", "version %q is not a semantic version", m.Version)
	}
	if err := checkText("/publisher", m.Publisher, maxTitleBytes, true); err != nil {
		return err
	}
	if err := checkText("/description", m.Description, maxTextBytes, false); err != nil {
		return err
	}
	if err := validateSettings(m.APIVersion, m.Settings); err != nil {
		return err
	}
	if len(m.Commands) == 0 {
		return invalidf("/commands", "a manifest declares at least one command")
	}
	ids := map[string]int{}
	var routes []route
	for i := range m.Commands {
		c := &m.Commands[i]
		at := "/commands/" + strconv.Itoa(i)
		if err := validateCommand(m.APIVersion, c, at); err != nil {
			return err
		}
		if j, dup := ids[c.ID]; dup {
			return invalidf(at+"/id", "command id %q is already declared by /commands/%d", c.ID, j)
		}
		ids[c.ID] = i
		routes = append(routes, route{c.Path, at + "/path"})
		for j, a := range c.Aliases {
			routes = append(routes, route{a, at + "/aliases/" + strconv.Itoa(j)})
		}
	}
	return checkRoutes(routes)
}

// checkRoutes refuses two equal routes and a route that is also a group
// (a strict prefix) of another route.
func checkRoutes(routes []route) error {
	for i, r := range routes {
		for j, o := range routes {
			if i == j {
				continue
			}
			if slices.Equal(r.words, o.words) && j < i {
				return invalidf(r.at, "%q is already declared at %s", strings.Join(r.words, " "), o.at)
			}
			if len(r.words) < len(o.words) && slices.Equal(r.words, o.words[:len(r.words)]) {
				if i < j {
					return invalidf(o.at, "%q is under %q, which is a command declared at %s", strings.Join(o.words, " "), strings.Join(r.words, " "), r.at)
				}
				return invalidf(r.at, "%q is a group of %q declared at %s", strings.Join(r.words, " "), strings.Join(o.words, " "), o.at)
			}
		}
	}
	return nil
}

func checkText(at, s string, max int, singleLine bool) error {
	if len(s) > max {
		return invalidf(at, "longer than %d bytes", max)
	}
	for _, r := range s {
		if r < 0x20 && (singleLine || r != '\n' && r != '\t') || r == 0x7f {
			return invalidf(at, "contains control character %U", r)
		}
	}
	return nil
}

func checkWords(at string, words []string) error {
	if len(words) == 0 {
		return invalidf(at, "needs at least one word")
	}
	if len(words) > maxPathWords {
		return invalidf(at, "has more than %d words", maxPathWords)
	}
	for i, w := range words {
		wat := at + "/" + strconv.Itoa(i)
		if !wordRE.MatchString(w) {
			return invalidf(wat, "word %q must match %s", w, wordRE)
		}
		if slices.Contains(reservedWords, w) {
			return invalidf(wat, "%q is reserved", w)
		}
		if i == 0 && IsBuiltinVerb(w) {
			return invalidf(wat, "%q is a built-in rukh command", w)
		}
	}
	return nil
}

func validateCommand(api string, c *Command, at string) error {
	if c.ID == "" {
		return invalidf(at+"/id", "missing id")
	}
	if !idRE.MatchString(c.ID) {
		return invalidf(at+"/id", "id %q must match %s", c.ID, idRE)
	}
	if c.ID == "rukh" || strings.HasPrefix(c.ID, "rukh.") {
		return invalidf(at+"/id", "id %q is in the built-in rukh namespace", c.ID)
	}
	if err := checkWords(at+"/path", c.Path); err != nil {
		return err
	}
	for i, a := range c.Aliases {
		if err := checkWords(at+"/aliases/"+strconv.Itoa(i), a); err != nil {
			return err
		}
	}
	if err := checkText(at+"/summary", c.Summary, maxTitleBytes, true); err != nil {
		return err
	}
	if err := checkText(at+"/description", c.Description, maxTextBytes, false); err != nil {
		return err
	}
	if err := validateParams(c.Params, at+"/params"); err != nil {
		return err
	}
	if err := validateExecute(api, &c.Execute, at+"/execute"); err != nil {
		return err
	}
	if api == APIVersion1 {
		if c.Machine != nil {
			return invalidf(at+"/machine", "not allowed in %s", APIVersion1)
		}
		if c.Hints != nil {
			return invalidf(at+"/hints", "not allowed in %s", APIVersion1)
		}
	}
	if c.Machine != nil {
		if err := validateMachine(c.Machine, at+"/machine"); err != nil {
			return err
		}
	}
	if c.Hints != nil {
		if err := checkText(at+"/hints/title", c.Hints.Title, maxTitleBytes, true); err != nil {
			return err
		}
	}
	return nil
}

func validateExecute(api string, e *Execute, at string) error {
	p := e.Program
	switch {
	case p == "":
		return invalidf(at+"/program", "missing program")
	case strings.HasPrefix(p, "/"):
		return invalidf(at+"/program", "program %q must be a relative path inside the package", p)
	case strings.ContainsAny(p, "\\\x00"):
		return invalidf(at+"/program", "program %q must use forward slashes", p)
	case slices.Contains(strings.Split(p, "/"), ".."):
		return invalidf(at+"/program", "program %q leaves the package", p)
	case path.Clean(p) != p || p == ".":
		return invalidf(at+"/program", "program %q is not a clean path (want %q)", p, path.Clean(p))
	}
	for i, a := range e.Args {
		if strings.IndexByte(a, 0) >= 0 {
			return invalidf(at+"/args/"+strconv.Itoa(i), "contains a NUL byte")
		}
	}
	switch e.Mode {
	case "":
		e.Mode = ModeManaged
	case ModeManaged, ModePassthrough:
	default:
		return invalidf(at+"/mode", "mode must be %q or %q, not %q", ModeManaged, ModePassthrough, e.Mode)
	}
	switch e.Lifetime {
	case "":
		e.Lifetime = LifetimeForeground
	case LifetimeForeground:
	default:
		return invalidf(at+"/lifetime", "lifetime must be %q, not %q", LifetimeForeground, e.Lifetime)
	}
	if e.Needs != nil {
		if api == APIVersion1 {
			return invalidf(at+"/needs", "not allowed in %s", APIVersion1)
		}
		if err := validateNeeds(e.Needs, at+"/needs"); err != nil {
			return err
		}
	}
	if e.Result == nil {
		return nil
	}
	if api == APIVersion1 {
		return invalidf(at+"/result", "not allowed in %s", APIVersion1)
	}
	switch e.Result.Kind {
	case ResultText:
		if e.Result.Schema != nil {
			return invalidf(at+"/result/schema", "a text result has no schema")
		}
	case ResultStructured:
		if e.Result.Schema == nil {
			return invalidf(at+"/result/schema", "a structured result needs a schema")
		}
		if err := CheckResultSchema(e.Result.Schema); err != nil {
			return prefixPath(err, at+"/result/schema")
		}
	case "":
		return invalidf(at+"/result/kind", "missing kind")
	default:
		return invalidf(at+"/result/kind", "kind must be %q or %q, not %q", ResultText, ResultStructured, e.Result.Kind)
	}
	return nil
}

// validateNeeds checks a command's needs: sound read and write entries,
// none twice, and a process count in range.
func validateNeeds(n *Needs, at string) error {
	for _, l := range []struct {
		member string
		paths  []string
	}{{"read", n.Read}, {"write", n.Write}} {
		if err := CheckConfinePaths(l.paths, at+"/"+l.member); err != nil {
			return err
		}
	}
	if n.Processes < 0 || n.Processes > MaxProcesses {
		return invalidf(at+"/processes", "processes must be 1 to %d, not %d", MaxProcesses, n.Processes)
	}
	return nil
}

// CheckConfinePaths checks a read or write list of a need or a template
// (at is its JSON pointer): at most MaxConfinePaths sound entries, none
// twice.
func CheckConfinePaths(paths []string, at string) *Error {
	if len(paths) > MaxConfinePaths {
		return invalidf(at, "more than %d paths", MaxConfinePaths)
	}
	seen := make(map[string]int, len(paths))
	for i, p := range paths {
		pat := at + "/" + strconv.Itoa(i)
		if msg := ConfinePathProblem(p); msg != "" {
			return invalidf(pat, "path %q: %s", p, msg)
		}
		if j, dup := seen[p]; dup {
			return invalidf(pat, "path %q is already listed at %s/%d", p, at, j)
		}
		seen[p] = i
	}
	return nil
}

// prefixPath relocates an *Error found inside a sub-document.
func prefixPath(err error, prefix string) error {
	if e, ok := err.(*Error); ok {
		return e.AtPath(prefix + e.Path)
	}
	return err
}

func validateMachine(mc *Machine, at string) error {
	switch mc.Interaction {
	case "":
		mc.Interaction = InteractionNone
	case InteractionNone, InteractionOptional, InteractionRequired:
	default:
		return invalidf(at+"/interaction", "interaction must be %q, %q or %q, not %q", InteractionNone, InteractionOptional, InteractionRequired, mc.Interaction)
	}
	seen := map[string]bool{}
	for i, f := range mc.RequiredFeatures {
		fat := at + "/requiredFeatures/" + strconv.Itoa(i)
		if !featureRE.MatchString(f.ID) {
			return invalidf(fat+"/id", "feature id %q must match %s", f.ID, featureRE)
		}
		if f.Version < 1 {
			return invalidf(fat+"/version", "feature version must be a positive integer")
		}
		if seen[f.ID] {
			return invalidf(fat+"/id", "feature %q is required twice", f.ID)
		}
		seen[f.ID] = true
	}
	return nil
}

// validateParams checks a command's params (at is their JSON pointer),
// that no two claim the same id, flag, short or position, and that the
// positions make one sequence.
func validateParams(ps []Param, at string) error {
	seen := paramNames{at: at, ids: map[string]int{}, flags: map[string]int{}, shorts: map[string]int{}, positions: map[int]int{}}
	for i := range ps {
		p := &ps[i]
		pat := at + "/" + strconv.Itoa(i)
		if err := seen.id(p, i, pat); err != nil {
			return err
		}
		if err := checkText(pat+"/description", p.Description, maxTextBytes, false); err != nil {
			return err
		}
		switch {
		case p.Flag != "" && p.Position != nil:
			return invalidf(pat+"/position", "a param has either flag or position, not both")
		case p.Flag == "" && p.Position == nil:
			return invalidf(pat, "a param needs a flag or a position")
		case p.Flag != "":
			if err := seen.flag(p, i, pat); err != nil {
				return err
			}
		default:
			if err := seen.position(p, i, pat); err != nil {
				return err
			}
		}
		if _, err := newParamSpec(p, pat); err != nil {
			return err
		}
	}
	return checkPositions(ps, seen.positions, at)
}

// paramNames is what one command's params declared so far claims: each
// map names the index of the param that claimed an id, flag, short or
// position. at is the params' JSON pointer.
type paramNames struct {
	at        string
	ids       map[string]int
	flags     map[string]int
	shorts    map[string]int
	positions map[int]int
}

// id checks p's id, the ith param's, at pat, and claims it.
func (n *paramNames) id(p *Param, i int, pat string) error {
	if p.ID == "" {
		return invalidf(pat+"/id", "missing id")
	}
	if !paramIDRE.MatchString(p.ID) {
		return invalidf(pat+"/id", "param id %q must match %s", p.ID, paramIDRE)
	}
	if j, dup := n.ids[p.ID]; dup {
		return invalidf(pat+"/id", "param id %q is already declared by %s/%d", p.ID, n.at, j)
	}
	n.ids[p.ID] = i
	return nil
}

// flag checks the flag and short of p, the ith param, at pat, and claims
// them.
func (n *paramNames) flag(p *Param, i int, pat string) error {
	if !wordRE.MatchString(p.Flag) {
		return invalidf(pat+"/flag", "flag %q must match %s", p.Flag, wordRE)
	}
	if slices.Contains(reservedFlags, p.Flag) {
		return invalidf(pat+"/flag", "flag %q is reserved", p.Flag)
	}
	if j, dup := n.flags[p.Flag]; dup {
		return invalidf(pat+"/flag", "flag %q is already declared by %s/%d", p.Flag, n.at, j)
	}
	if j, dup := n.shorts[p.Flag]; dup && len(p.Flag) == 1 {
		return invalidf(pat+"/flag", "flag %q is already the short of %s/%d", p.Flag, n.at, j)
	}
	n.flags[p.Flag] = i
	if p.Short == "" {
		return nil
	}
	if !shortRE.MatchString(p.Short) {
		return invalidf(pat+"/short", "short %q must be one ASCII letter or digit", p.Short)
	}
	if slices.Contains(reservedShorts, p.Short) {
		return invalidf(pat+"/short", "short %q is reserved", p.Short)
	}
	if j, dup := n.shorts[p.Short]; dup {
		return invalidf(pat+"/short", "short %q is already declared by %s/%d", p.Short, n.at, j)
	}
	if j, dup := n.flags[p.Short]; dup {
		return invalidf(pat+"/short", "short %q is already the flag of %s/%d", p.Short, n.at, j)
	}
	n.shorts[p.Short] = i
	return nil
}

// position checks the position of p, the ith param, at pat, and claims it.
func (n *paramNames) position(p *Param, i int, pat string) error {
	if p.Short != "" {
		return invalidf(pat+"/short", "a positional param has no short")
	}
	if *p.Position < 0 {
		return invalidf(pat+"/position", "position must not be negative")
	}
	if j, dup := n.positions[*p.Position]; dup {
		return invalidf(pat+"/position", "position %d is already declared by %s/%d", *p.Position, n.at, j)
	}
	if p.Type == TypeBoolean {
		return invalidf(pat+"/position", "a boolean param needs a flag")
	}
	n.positions[*p.Position] = i
	return nil
}

// checkPositions checks the positional params of ps, positions mapping
// each position to its param's index: positions are 0..n-1, only the last
// may be a list, and no required one follows an optional one.
func checkPositions(ps []Param, positions map[int]int, at string) error {
	for pos := 0; pos < len(positions); pos++ {
		i, ok := positions[pos]
		if !ok {
			bad := -1
			for q, j := range positions {
				if q >= len(positions) && (bad < 0 || j < bad) {
					bad = j
				}
			}
			return invalidf(at+"/"+strconv.Itoa(bad)+"/position", "positions must be 0 to %d without gaps", len(positions)-1)
		}
		p := &ps[i]
		pat := at + "/" + strconv.Itoa(i)
		if p.Type == TypeList && pos != len(positions)-1 {
			return invalidf(pat+"/type", "only the last positional param may be a list")
		}
		if pos > 0 && p.Required {
			if prev := &ps[positions[pos-1]]; !prev.Required {
				return invalidf(pat+"/required", "a required positional param cannot follow an optional one (%s/%d)", at, positions[pos-1])
			}
		}
	}
	return nil
}

// newParamSpec parses p's constraints, checking that each keyword fits p's
// type, that enum members and bounds are well formed and ordered, and that
// the default passes the same check input does. at is p's JSON pointer.
func newParamSpec(p *Param, at string) (*paramSpec, error) {
	spec := &paramSpec{p: p}
	switch p.Type {
	case TypeString, TypeBoolean, TypeInteger, TypeNumber, TypeDecimal:
		if p.Items != nil {
			return nil, invalidf(at+"/items", "items is only allowed on a list")
		}
		if p.MinItems != nil {
			return nil, invalidf(at+"/minItems", "minItems is only allowed on a list")
		}
		if p.MaxItems != nil {
			return nil, invalidf(at+"/maxItems", "maxItems is only allowed on a list")
		}
		r, err := scalarRules(p.Type, p.Enum, p.Minimum, p.Maximum, p.MinLength, p.MaxLength, at)
		if err != nil {
			return nil, err
		}
		spec.r = r
	case TypeList:
		lr, err := newListRules(p, at)
		if err != nil {
			return nil, err
		}
		spec.lr = lr
	case "":
		return nil, invalidf(at+"/type", "missing type")
	default:
		return nil, invalidf(at+"/type", "unknown type %q", p.Type)
	}
	if p.Default != nil {
		v, e := spec.fromJSON(p.Default, at+"/default")
		if e == nil {
			e = spec.check(v, at+"/default")
		}
		if e != nil {
			e.Message = "default " + e.Message
			return nil, e
		}
	}
	return spec, nil
}

// newListRules parses the constraints of p, a list: its items' and its
// own counts. The scalar keywords belong in items.
func newListRules(p *Param, at string) (*listRules, error) {
	for _, k := range []struct {
		name string
		set  bool
	}{{"enum", p.Enum != nil}, {"minimum", p.Minimum != nil}, {"maximum", p.Maximum != nil},
		{"minLength", p.MinLength != nil}, {"maxLength", p.MaxLength != nil}} {
		if k.set {
			return nil, invalidf(at+"/"+k.name, "%s belongs in items on a list", k.name)
		}
	}
	if p.Items == nil {
		return nil, invalidf(at+"/items", "a list needs items")
	}
	it := p.Items
	switch it.Type {
	case TypeString, TypeBoolean, TypeInteger, TypeNumber, TypeDecimal:
	case "":
		return nil, invalidf(at+"/items/type", "missing type")
	default:
		return nil, invalidf(at+"/items/type", "items type must be a scalar type, not %q", it.Type)
	}
	ir, err := scalarRules(it.Type, it.Enum, it.Minimum, it.Maximum, it.MinLength, it.MaxLength, at+"/items")
	if err != nil {
		return nil, err
	}
	lr := &listRules{items: *ir, minItems: -1, maxItems: -1}
	if err := counter(p.MinItems, at+"/minItems", &lr.minItems); err != nil {
		return nil, err
	}
	if err := counter(p.MaxItems, at+"/maxItems", &lr.maxItems); err != nil {
		return nil, err
	}
	if lr.minItems >= 0 && lr.maxItems >= 0 && lr.minItems > lr.maxItems {
		return nil, invalidf(at+"/maxItems", "maxItems %d is less than minItems %d", lr.maxItems, lr.minItems)
	}
	return lr, nil
}

func counter(n *int, at string, dst *int) error {
	if n == nil {
		return nil
	}
	if *n < 0 {
		return invalidf(at, "must not be negative")
	}
	*dst = *n
	return nil
}

// scalarRules parses the constraints shared by params and list items.
func scalarRules(t ParamType, enum []jsontext.Value, minimum, maximum jsontext.Value, minLen, maxLen *int, at string) (*rules, error) {
	r := &rules{typ: t, minLen: -1, maxLen: -1}
	numeric := t == TypeInteger || t == TypeNumber || t == TypeDecimal
	if t != TypeString {
		if minLen != nil {
			return nil, invalidf(at+"/minLength", "minLength is only allowed on a string")
		}
		if maxLen != nil {
			return nil, invalidf(at+"/maxLength", "maxLength is only allowed on a string")
		}
	}
	if !numeric {
		if minimum != nil {
			return nil, invalidf(at+"/minimum", "minimum is only allowed on integer, number and decimal")
		}
		if maximum != nil {
			return nil, invalidf(at+"/maximum", "maximum is only allowed on integer, number and decimal")
		}
	}
	if t == TypeBoolean && enum != nil {
		return nil, invalidf(at+"/enum", "enum is not allowed on a boolean")
	}
	if err := counter(minLen, at+"/minLength", &r.minLen); err != nil {
		return nil, err
	}
	if err := counter(maxLen, at+"/maxLength", &r.maxLen); err != nil {
		return nil, err
	}
	if r.minLen >= 0 && r.maxLen >= 0 && r.minLen > r.maxLen {
		return nil, invalidf(at+"/maxLength", "maxLength %d is less than minLength %d", r.maxLen, r.minLen)
	}
	if err := r.parseBounds(minimum, maximum, at); err != nil {
		return nil, err
	}
	if enum != nil {
		if err := r.parseEnum(enum, at); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// parseBounds parses minimum and maximum, when set, into r: each must be a
// value of r's type, and not the wrong way round.
func (r *rules) parseBounds(minimum, maximum jsontext.Value, at string) error {
	plain := &rules{typ: r.typ, minLen: -1, maxLen: -1}
	if minimum != nil {
		v, msg := plain.fromJSON(minimum)
		if msg != "" {
			return invalidf(at+"/minimum", "minimum %s", msg)
		}
		r.min = v
	}
	if maximum != nil {
		v, msg := plain.fromJSON(maximum)
		if msg != "" {
			return invalidf(at+"/maximum", "maximum %s", msg)
		}
		r.max = v
	}
	if r.min != nil && r.max != nil && compareValues(r.min, r.max) > 0 {
		return invalidf(at+"/maximum", "maximum %s is less than minimum %s", formatValue(r.max), formatValue(r.min))
	}
	return nil
}

// parseEnum parses enum into r: not empty, each member a value of r's type
// within r's bounds, none twice.
func (r *rules) parseEnum(enum []jsontext.Value, at string) error {
	if len(enum) == 0 {
		return invalidf(at+"/enum", "enum must not be empty")
	}
	plain := &rules{typ: r.typ, minLen: -1, maxLen: -1}
	for i, raw := range enum {
		eat := at + "/enum/" + strconv.Itoa(i)
		v, msg := plain.fromJSON(raw)
		if msg == "" {
			within := *r
			within.enum = nil
			msg = within.check(v)
		}
		if msg != "" {
			return invalidf(eat, "enum member %s", msg)
		}
		for j, o := range r.enum {
			if compareValues(v, o) == 0 {
				return invalidf(eat, "enum member %s repeats %s/enum/%d", formatValue(v), at, j)
			}
		}
		r.enum = append(r.enum, v)
	}
	return nil
}
