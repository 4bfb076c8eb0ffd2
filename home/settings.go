package home

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
)

// The owner's settings of extensions (docs/settings.md): values a package
// declares in its manifest, set per package or per endpoint, read by the
// runner at the start of every call (SettingValues), so a change needs no
// publish. Sensitive values are sealed under the settings key, which lives
// apart from the store: RUKH_SETTINGS_KEY (the key's text), else the file
// RUKH_SETTINGS_KEY_FILE names, else settings.key in the home (mode 0600,
// made by the first SetSetting of a sensitive value). Nothing here returns
// a sensitive value but SettingValues, whose result goes to the runner
// only.

// The environment that hands rukh the settings key.
const (
	EnvSettingsKey     = "RUKH_SETTINGS_KEY"
	EnvSettingsKeyFile = "RUKH_SETTINGS_KEY_FILE"
)

// maxKeyFile bounds what is read of a key file: a key is one short line.
const maxKeyFile = 4 << 10

var _ kernel.SettingsSource = (*Home)(nil)

// New returns a home whose runner asks it for the settings of each call
// (Runner.Settings); Store is set by the caller.
func New(env func(string) string, runner *kernel.Runner) *Home {
	h := &Home{Env: env, Runner: runner}
	if runner != nil {
		runner.Settings = h
	}
	return h
}

// SettingView is one setting as `rukh settings list` and `describe` show
// it: never a sensitive value.
type SettingView struct {
	Package     string         `json:"package"`
	ID          string         `json:"id"`
	Type        string         `json:"type,omitempty"`
	Description string         `json:"description,omitempty"`
	Required    bool           `json:"required"`
	Sensitive   bool           `json:"sensitive"`
	Default     jsontext.Value `json:"default,omitempty"` // nil: none
	// Values are the stored values, the package's first, then the
	// endpoints' by name.
	Values []SettingScope `json:"values"`
	// Declared is false for a stored value no installed release of the
	// package declares any more.
	Declared bool `json:"declared"`
}

// SettingScope is one stored value of a setting.
type SettingScope struct {
	Endpoint string         `json:"endpoint,omitempty"` // "" is the package's value
	SetAt    time.Time      `json:"setAt"`
	Value    jsontext.Value `json:"value,omitempty"` // nil for a sensitive one
}

// Set reports whether a call on endpoint ("" on the CLI) finds a stored
// value: the endpoint's own or the package's.
func (v *SettingView) Set(endpoint string) bool {
	return slices.ContainsFunc(v.Values, func(s SettingScope) bool { return s.Endpoint == "" || s.Endpoint == endpoint })
}

// MissingSetting is a required setting some calls lack: the package has
// no value of its own, and Endpoint none either. Endpoint "" means none of
// the endpoints asked about has one, so every call of the package is
// rejected. CLI marks the calls on the command line, which have no
// endpoint and need the package's value, when some endpoints have their
// own: SetLine without --endpoint sets it.
type MissingSetting struct {
	Package  string `json:"package"`
	ID       string `json:"id"`
	Endpoint string `json:"endpoint,omitempty"`
	CLI      bool   `json:"cli,omitzero"`
}

// SetLine is the command that gives the setting a value.
func (m MissingSetting) SetLine() string {
	line := "rukh settings set " + m.Package + " " + m.ID
	if m.Endpoint != "" {
		line += " --endpoint " + m.Endpoint
	}
	return line
}

// String is the warning publish, status and doctor print for it.
func (m MissingSetting) String() string {
	s := fmt.Sprintf("setting %q of package %s is not set", m.ID, m.Package)
	switch {
	case m.Endpoint != "":
		s += " for endpoint " + m.Endpoint
	case m.CLI:
		s += " for calls on the command line (only some endpoints have their own)"
	}
	return s + "; run: " + m.SetLine()
}

func (h *Home) getenv(name string) string {
	if h.Env == nil {
		return ""
	}
	return h.Env(name)
}

// declarations are the settings the newest installed release of each
// package declares, from the store's releases rs (sorted by name, then
// version, as the store lists them).
func declarations(rs []store.Release) (map[string][]kernel.Setting, error) {
	out := map[string][]kernel.Setting{}
	sensitive := map[string]bool{} // package 0x00 lower-case id
	for i, r := range rs {
		m, err := kernel.DecodeInstalled(r.Manifest)
		if err != nil {
			return nil, kernel.Errorf(kernel.CodeInternal, "the manifest of %s@%s does not decode", r.Name, r.Version).Wrap(err)
		}
		for _, d := range m.Settings {
			if d.Sensitive {
				sensitive[r.Name+"\x00"+strings.ToLower(d.ID)] = true
			}
		}
		if i+1 < len(rs) && rs[i+1].Name == r.Name {
			continue
		}
		out[r.Name] = m.Settings
	}
	// A setting any installed release declares sensitive is treated as
	// one: a value is never shown, or stored in the clear, because one
	// release happens to think otherwise.
	for name, ds := range out {
		for i := range ds {
			if sensitive[name+"\x00"+strings.ToLower(ds[i].ID)] {
				ds[i].Sensitive = true
			}
		}
	}
	return out, nil
}

// findSetting is FindSetting ignoring case, as setting ids are unique.
func findSetting(decls []kernel.Setting, id string) *kernel.Setting {
	for i := range decls {
		if strings.EqualFold(decls[i].ID, id) {
			return &decls[i]
		}
	}
	return nil
}

// declaration is the declaration of id in the newest installed release
// of pkg that declares it.
func (h *Home) declaration(pkg, id string) (*kernel.Setting, error) {
	rels, err := h.Store.ReleasesOf(pkg)
	if err != nil {
		return nil, err
	}
	if len(rels) == 0 {
		return nil, kernel.Errorf(kernel.CodeNotFound, "package %s is not installed", pkg).
			WithHint("rukh list shows the installed packages")
	}
	settings := make([][]kernel.Setting, len(rels))
	sensitive := false // any release declares it sensitive: so it is treated
	for i, r := range rels {
		m, err := kernel.DecodeInstalled(r.Manifest)
		if err != nil {
			return nil, kernel.Errorf(kernel.CodeInternal, "the manifest of %s@%s does not decode", r.Name, r.Version).Wrap(err)
		}
		settings[i] = m.Settings
		if d := findSetting(m.Settings, id); d != nil && d.Sensitive {
			sensitive = true
		}
	}
	for i := len(rels) - 1; i >= 0; i-- {
		if d := findSetting(settings[i], id); d != nil {
			c := *d
			c.Sensitive = c.Sensitive || sensitive
			return &c, nil
		}
	}
	newest := settings[len(rels)-1]
	none := kernel.Errorf(kernel.CodeNotFound, "package %s declares no setting %q", pkg, id)
	if len(newest) == 0 {
		return nil, none.WithHint("its installed releases declare no settings")
	}
	ids := make([]string, len(newest))
	for i := range newest {
		ids[i] = newest[i].ID
	}
	return nil, none.WithHint("its settings: " + strings.Join(ids, ", "))
}

// SettingDeclaration is the declaration SetSetting checks a value of pkg's
// setting id against: a caller reads it first to know how to ask for the
// value (a sensitive one without echo).
func (h *Home) SettingDeclaration(pkg, id string) (*kernel.Setting, error) {
	if err := store.CheckSettingNames(pkg, "", id); err != nil {
		return nil, err
	}
	return h.declaration(pkg, id)
}

// SetSetting gives setting id of package pkg the value text, for every
// endpoint (endpoint "") or for one endpoint, over the package's value.
// The declaration is that of the newest installed release of pkg that
// declares id; the text is read by its type (kernel.Setting.ParseValue). A
// sensitive value is sealed, and the home's settings key is made first
// when none is configured. The warnings say what the owner should know:
// an endpoint the draft profile does not have (the value is kept all the
// same), a settings key just made (to back up, and on a shared store to
// hand to every replica). The view never holds a sensitive value.
func (h *Home) SetSetting(pkg, id, endpoint string, text []byte) (SettingView, []string, error) {
	if err := store.CheckSettingNames(pkg, endpoint, id); err != nil {
		return SettingView{}, nil, err
	}
	decl, err := h.declaration(pkg, id)
	if err != nil {
		return SettingView{}, nil, err
	}
	value, err := decl.ParseValue(string(text))
	if err != nil {
		return SettingView{}, nil, err
	}
	var warnings []string
	if endpoint != "" {
		p, err := h.DraftProfile()
		if err != nil {
			return SettingView{}, nil, err
		}
		if _, ok := p.Endpoints[endpoint]; !ok {
			warnings = append(warnings, fmt.Sprintf("the draft profile has no endpoint %s: the value is kept, and calls see it once a published profile has that endpoint", endpoint))
		}
	}
	rec := store.SettingRecord{Package: pkg, Endpoint: endpoint, ID: decl.ID, Sensitive: decl.Sensitive}
	if decl.Sensitive {
		key, made, err := h.settingsKey(true)
		if err != nil {
			return SettingView{}, nil, err
		}
		if made != "" {
			w := fmt.Sprintf("made a new settings key in %s (id %s): keep a copy apart from the store, which cannot open its sensitive settings without it", made, key.ID())
			if h.Store.Shared() {
				w += "; every replica of this shared store needs the same key: hand it to each with " + EnvSettingsKeyFile
			}
			warnings = append(warnings, w)
		}
		rec.Sealed = key.Seal(pkg, endpoint, decl.ID, value)
	} else {
		rec.Value = value
	}
	if err := h.Store.PutSetting(rec); err != nil {
		return SettingView{}, warnings, err
	}
	recs, err := h.Store.Settings(pkg)
	if err != nil {
		return SettingView{}, warnings, err
	}
	v := declaredView(pkg, decl)
	for _, r := range recs {
		if strings.EqualFold(r.ID, decl.ID) {
			v.Values = append(v.Values, scopeOf(r))
		}
	}
	return v, warnings, nil
}

// UnsetSetting removes the value of setting id of pkg for every endpoint
// (endpoint "") or for one endpoint, and reports whether there was one.
// The id need not be declared any more.
func (h *Home) UnsetSetting(pkg, id, endpoint string) (existed bool, err error) {
	return h.Store.DeleteSetting(pkg, endpoint, id)
}

func declaredView(pkg string, d *kernel.Setting) SettingView {
	return SettingView{Package: pkg, ID: d.ID, Type: string(d.Type), Description: d.Description,
		Required: d.Required, Sensitive: d.Sensitive, Default: d.Default, Values: []SettingScope{}, Declared: true}
}

func scopeOf(r store.SettingRecord) SettingScope {
	s := SettingScope{Endpoint: r.Endpoint, SetAt: r.SetAt}
	if !r.Sensitive {
		s.Value = jsontext.Value(r.Value)
	}
	return s
}

// ListSettings lists the settings the newest installed release of each
// package declares (of pkg only, when it is not ""), in declaration order,
// with their stored values, and then the stored values no installed
// release declares any more. With endpoint, only the package's values and
// that endpoint's are listed.
func (h *Home) ListSettings(pkg, endpoint string) ([]SettingView, error) {
	if err := store.CheckSettingNames(pkg, endpoint, ""); err != nil {
		return nil, err
	}
	var rels []store.Release
	var err error
	if pkg == "" {
		rels, err = h.Store.Releases()
	} else {
		rels, err = h.Store.ReleasesOf(pkg)
	}
	if err != nil {
		return nil, err
	}
	decls, err := declarations(rels)
	if err != nil {
		return nil, err
	}
	recs, err := h.Store.Settings(pkg)
	if err != nil {
		return nil, err
	}
	if pkg != "" && len(rels) == 0 && len(recs) == 0 {
		return nil, kernel.Errorf(kernel.CodeNotFound, "package %s is not installed", pkg).
			WithHint("rukh list shows the installed packages")
	}
	names := map[string]bool{}
	for name := range decls {
		names[name] = true
	}
	for _, r := range recs {
		names[r.Package] = true
	}
	views := []SettingView{}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		var pv []SettingView
		for i := range decls[name] {
			pv = append(pv, declaredView(name, &decls[name][i]))
		}
		for _, r := range recs {
			if r.Package != name || (endpoint != "" && r.Endpoint != "" && r.Endpoint != endpoint) {
				continue
			}
			i := slices.IndexFunc(pv, func(v SettingView) bool { return strings.EqualFold(v.ID, r.ID) })
			if i < 0 {
				pv = append(pv, SettingView{Package: name, ID: r.ID, Sensitive: r.Sensitive, Values: []SettingScope{}})
				i = len(pv) - 1
			}
			sc := scopeOf(r)
			if pv[i].Sensitive {
				sc.Value = nil // declared sensitive by some release, whatever the record says
			}
			pv[i].Values = append(pv[i].Values, sc)
		}
		views = append(views, pv...)
	}
	return views, nil
}

// SettingValues is the runner's source of settings (kernel.SettingsSource):
// the stored values of pkg's settings ids (the running release's, matched
// ignoring case and keyed as the release spells them) a call on endpoint
// sees, the endpoint's own over the package's, sensitive ones opened with
// the settings key. A stored value the release does not declare is never
// opened. It is read afresh on every call, so a value set while a server
// runs reaches its next call.
func (h *Home) SettingValues(pkg, endpoint string, ids []string) (map[string]jsontext.Value, error) {
	recs, err := h.Store.SettingsOf(pkg, endpoint)
	if err != nil {
		return nil, err
	}
	declared := make(map[string]string, len(ids))
	for _, id := range ids {
		declared[strings.ToLower(id)] = id
	}
	// the endpoint's records follow the package's: a later one wins
	winners := map[string]store.SettingRecord{}
	for _, r := range recs {
		if id, ok := declared[strings.ToLower(r.ID)]; ok {
			winners[id] = r
		}
	}
	out := make(map[string]jsontext.Value, len(winners))
	var key *store.SettingsKey
	for id, r := range winners {
		if !r.Sensitive {
			out[id] = jsontext.Value(r.Value)
			continue
		}
		if key == nil {
			if key, _, err = h.settingsKey(false); err != nil {
				return nil, needsKey(r, err)
			}
		}
		v, err := key.Open(r)
		if err != nil {
			return nil, err
		}
		out[id] = v
	}
	return out, nil
}

// needsKey is the error of a call whose sensitive setting cannot be
// opened because there is no settings key.
func needsKey(r store.SettingRecord, err error) error {
	what := fmt.Sprintf("setting %q of package %s", r.ID, r.Package)
	if r.Endpoint != "" {
		what += " for endpoint " + r.Endpoint
	}
	var ke *kernel.Error
	if !errors.As(err, &ke) {
		return kernel.Errorf(kernel.CodeInternal, "%s needs the settings key", what).Wrap(err)
	}
	c := *ke
	c.Message = what + " needs the settings key: " + ke.Message
	return &c
}

// settingsKey finds the settings key: RUKH_SETTINGS_KEY, else the file
// RUKH_SETTINGS_KEY_FILE names, else the home's settings.key, which is
// made when create is set and there is none; made is then its path.
func (h *Home) settingsKey(create bool) (key *store.SettingsKey, made string, err error) {
	if t := h.getenv(EnvSettingsKey); t != "" {
		key, err := store.ParseSettingsKey([]byte(t))
		return key, "", atPath(err, EnvSettingsKey)
	}
	if p := h.getenv(EnvSettingsKeyFile); p != "" {
		text, err := readKeyFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, "", kernel.Errorf(kernel.CodeUnavailable, "there is no settings key file where %s says", EnvSettingsKeyFile).AtPath(p).
				WithHint("put the settings key there, or unset " + EnvSettingsKeyFile + " to use the home's " + store.SettingsKeyName)
		}
		if err != nil {
			return nil, "", kernel.Errorf(kernel.CodeUnavailable, "cannot read the settings key file %s names", EnvSettingsKeyFile).AtPath(p).Wrap(err)
		}
		key, err := store.ParseSettingsKey(text)
		return key, "", atPath(err, p)
	}
	path := h.Store.SettingsKeyPath()
	if err := h.Store.CheckSettingsKeyFile(); err != nil {
		return nil, "", err
	}
	text, err := readKeyFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if !create {
			return nil, "", kernel.Errorf(kernel.CodeUnavailable, "there is none: %s and %s are unset and the home has no %s", EnvSettingsKey, EnvSettingsKeyFile, store.SettingsKeyName).
				AtPath(path).
				WithHint("give this rukh the key the value was sealed with (the home's " + store.SettingsKeyName + ", mode 600, or " + EnvSettingsKeyFile + "); every replica of a shared store needs the same key; or set the value again with rukh settings set")
		}
		return h.makeSettingsKey(path)
	}
	if err != nil {
		return nil, "", kernel.Errorf(kernel.CodeUnavailable, "cannot read the settings key file").AtPath(path).Wrap(err)
	}
	key, err = store.ParseSettingsKey(text)
	return key, "", atPath(err, path)
}

func readKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxKeyFile))
}

// makeSettingsKey writes a new key to path, owner-only. It is written
// whole under another name and linked into place, so no reader sees a
// part of it; if another rukh made one meanwhile, that one is used.
func (h *Home) makeSettingsKey(path string) (*store.SettingsKey, string, error) {
	key, err := store.NewSettingsKey()
	if err != nil {
		return nil, "", err
	}
	home := h.Store.Home()
	fail := func(err error) (*store.SettingsKey, string, error) {
		return nil, "", kernel.Errorf(kernel.CodeUnavailable, "cannot make the settings key file").AtPath(path).Wrap(err)
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fail(err)
	}
	f, err := os.CreateTemp(home, store.SettingsKeyName+".new-*")
	if err != nil {
		return fail(err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.Write(key.Text())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(err)
	}
	if err := os.Link(tmp, path); errors.Is(err, fs.ErrExist) {
		key, _, err := h.settingsKey(false)
		return key, "", err
	} else if err != nil {
		return fail(err)
	}
	if d, err := os.Open(home); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return key, path, nil
}

// atPath locates a kernel error at path, keeping its hint.
func atPath(err error, path string) error {
	var ke *kernel.Error
	if err == nil || !errors.As(err, &ke) {
		return err
	}
	return ke.AtPath(path)
}

// MissingSettings are the required settings of the releases rels that
// calls on the given endpoints would lack (see MissingSetting): for
// publish, the releases it binds and the candidate profile's endpoints;
// for status and doctor, the active revision's (MissingActiveSettings).
// The declarations are the ones the releases carry (BoundRelease.Settings,
// so no manifest is read); the values are the store's, as a call would
// find them now.
func (h *Home) MissingSettings(rels []policy.BoundRelease, endpoints []string) ([]MissingSetting, error) {
	var out []MissingSetting
	seen := map[string]bool{}
	for _, br := range rels {
		if seen[br.Name] {
			continue
		}
		seen[br.Name] = true
		if !slices.ContainsFunc(br.Settings, func(s kernel.Setting) bool { return s.Required }) {
			continue
		}
		recs, err := h.Store.Settings(br.Name)
		if err != nil {
			return nil, err
		}
		for i := range br.Settings {
			d := &br.Settings[i]
			if !d.Required || d.Default != nil {
				continue
			}
			has := map[string]bool{}
			for _, r := range recs {
				if strings.EqualFold(r.ID, d.ID) {
					has[r.Endpoint] = true
				}
			}
			if has[""] {
				continue
			}
			var lacking []string
			for _, e := range endpoints {
				if !has[e] {
					lacking = append(lacking, e)
				}
			}
			if len(lacking) == len(endpoints) {
				out = append(out, MissingSetting{Package: br.Name, ID: d.ID})
				continue
			}
			for _, e := range lacking {
				out = append(out, MissingSetting{Package: br.Name, ID: d.ID, Endpoint: e})
			}
			out = append(out, MissingSetting{Package: br.Name, ID: d.ID, CLI: true})
		}
	}
	return out, nil
}

// MissingActiveSettings is MissingSettings of the active revision: its
// releases and its profile's endpoints; none before the first publish.
func (h *Home) MissingActiveSettings() ([]MissingSetting, error) {
	b, _, err := h.activeHead() // its releases and profile are enough
	if err != nil || b == nil {
		return nil, err
	}
	p, err := policy.ParseProfile(b.Profile)
	if err != nil {
		return nil, err
	}
	return h.MissingSettings(b.Releases, slices.Sorted(maps.Keys(p.Endpoints)))
}

// endpointNames are the endpoints a binding serves.
func endpointNames(b *policy.Binding) []string {
	names := make([]string, len(b.Endpoints))
	for i := range b.Endpoints {
		names[i] = b.Endpoints[i].Endpoint
	}
	return names
}

// doctorSettings checks what calls will need of the owner's settings: each
// required setting the active revision's calls lack, and that the settings
// key this process finds opens every sensitive value stored.
func (h *Home) doctorSettings(b *policy.Binding, add func(string, error) bool) {
	if b != nil {
		missing, err := h.MissingSettings(b.Releases, endpointNames(b))
		if err != nil {
			add("settings", err)
			return
		}
		for _, m := range missing {
			add(fmt.Sprintf("setting %s of package %s", m.ID, m.Package), kernel.Errorf(kernel.CodeInvalid, "%s", strings.SplitN(m.String(), "; run: ", 2)[0]+": its calls are rejected").WithHint("run: "+m.SetLine()))
		}
	}
	recs, err := h.Store.Settings("")
	if err != nil {
		add("settings", err)
		return
	}
	rels, err := h.Store.Releases()
	if err != nil {
		add("settings", err)
		return
	}
	decls, err := declarations(rels)
	if err != nil {
		add("settings", err)
		return
	}
	sealed := 0
	for _, r := range recs {
		if r.Sensitive {
			sealed++
			continue
		}
		if d := findSetting(decls[r.Package], r.ID); d != nil && d.Sensitive {
			line := "rukh settings set " + r.Package + " " + d.ID
			if r.Endpoint != "" {
				line += " --endpoint " + r.Endpoint
			}
			add(fmt.Sprintf("setting %s of package %s", r.ID, r.Package), kernel.Errorf(kernel.CodeConflict,
				"a release declares it sensitive, but its value was stored in the clear before").WithHint("set it again to seal it: "+line))
		}
	}
	if sealed == 0 {
		return
	}
	key, _, err := h.settingsKey(false)
	if err != nil {
		add("settings key", kernel.Errorf(kernel.CodeUnavailable, "%d sensitive setting value(s) are stored, and this rukh has no key to open them", sealed).Wrap(err).WithHint(kernel.ErrorHint(err)))
		return
	}
	closed := 0
	for _, r := range recs {
		if !r.Sensitive {
			continue
		}
		if plain, err := key.Open(r); err != nil {
			closed++
			add(fmt.Sprintf("setting %s of package %s", r.ID, r.Package), err)
		} else {
			clear(plain)
		}
	}
	if closed == 0 {
		add(fmt.Sprintf("settings key %s opens the %d sensitive setting value(s) stored", key.ID(), sealed), nil)
	}
}
