package home

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/store"
)

// secret is the sensitive value the tests search for as bytes; visible is
// one that is not sensitive, which the same searches must find.
const (
	secret  = "sk-live-7Qz9-settings-home-secret"
	visible = "https://visible-setting.example"
)

// settingsManifest declares settings: a required sensitive key, a url
// with a default, a required region, an integer.
func settingsManifest(name, version, settings string) []byte {
	return fmt.Appendf(nil, `{"apiVersion":"rukh.extension/2","name":%q,"version":%q,"publisher":"acme","settings":[%s],
		"commands":[{"id":"%s.run","path":["run"],"summary":"run","execute":{"program":"bin/x","result":{"kind":"text"}}}]}`,
		name, version, settings, name)
}

const notesSettings = `{"id":"apiKey","type":"string","required":true,"sensitive":true,"description":"the service's key"},
	{"id":"url","type":"string","default":"https://default.example"},
	{"id":"region","type":"string","required":true,"enum":["eu","us"]},
	{"id":"retries","type":"integer","minimum":0,"maximum":9}`

// settingsHome is a home with acme.notes 1.0.0 and 1.1.0 (which adds
// retries) and acme.site (no settings) installed; env is its environment.
func settingsHome(t testing.TB, env map[string]string) *Home {
	t.Helper()
	h := New(func(k string) string { return env[k] }, kernel.NewRunner())
	h.Store = store.New(filepath.Join(t.TempDir(), "home"))
	old := strings.Replace(notesSettings, `,
	{"id":"retries","type":"integer","minimum":0,"maximum":9}`, "", 1)
	for _, r := range []struct{ name, version, settings string }{
		{"acme.notes", "1.0.0", old},
		{"acme.notes", "1.1.0", notesSettings},
		{"acme.site", "1.0.0", ""},
	} {
		m := settingsManifest(r.name, r.version, r.settings)
		if _, err := kernel.ParseManifest(m); err != nil {
			t.Fatalf("%s@%s: %v", r.name, r.version, err)
		}
		install(t, h, store.Release{Name: r.name, Version: r.version, Manifest: m, Dir: "/releases/" + r.name})
	}
	t.Cleanup(func() {
		if err := h.Store.Check(); err != nil {
			t.Errorf("store after the test: %v", err)
		}
	})
	return h
}

func mustSet(t testing.TB, h *Home, pkg, id, endpoint, text string) (SettingView, []string) {
	t.Helper()
	v, w, err := h.SetSetting(pkg, id, endpoint, []byte(text))
	if err != nil {
		t.Fatalf("SetSetting(%s, %s, %q): %v", pkg, id, endpoint, err)
	}
	return v, w
}

func values(t *testing.T, h *Home, pkg, endpoint string) string {
	t.Helper()
	m, err := h.SettingValues(pkg, endpoint, []string{"apiKey", "url", "region", "retries"})
	if err != nil {
		t.Fatalf("SettingValues(%s, %q): %v", pkg, endpoint, err)
	}
	b, err := json.Marshal(m) // sorted keys
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSettingsSetListUnset(t *testing.T) {
	h := settingsHome(t, nil)
	if got := values(t, h, "acme.notes", ""); got != "{}" {
		t.Fatalf("before any set: %s", got)
	}
	mustSet(t, h, "acme.notes", "apiKey", "", secret)
	mustSet(t, h, "acme.notes", "apiKey", "local", "local-key")
	mustSet(t, h, "acme.notes", "region", "", "eu")
	mustSet(t, h, "acme.notes", "REGION", "local", "us") // ids ignore case
	mustSet(t, h, "acme.notes", "retries", "", "3")
	mustSet(t, h, "acme.notes", "url", "tenant-b", visible)

	for _, tt := range []struct{ endpoint, want string }{
		{"", `{"apiKey":"` + secret + `","region":"eu","retries":3}`},
		{"local", `{"apiKey":"local-key","region":"us","retries":3}`},
		{"tenant-b", `{"apiKey":"` + secret + `","region":"eu","retries":3,"url":"` + visible + `"}`},
	} {
		if got := values(t, h, "acme.notes", tt.endpoint); got != tt.want {
			t.Errorf("SettingValues(%q) = %s\nwant %s", tt.endpoint, got, tt.want)
		}
	}

	list := func(pkg, endpoint string) string {
		t.Helper()
		vs, err := h.ListSettings(pkg, endpoint)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, v := range vs {
			fmt.Fprintf(&b, "%s %s %s req=%v sens=%v decl=%v default=%s:", v.Package, v.ID, v.Type, v.Required, v.Sensitive, v.Declared, string(v.Default))
			for _, s := range v.Values {
				fmt.Fprintf(&b, " [%s]=%s", s.Endpoint, string(s.Value))
			}
			b.WriteString("\n")
		}
		return b.String()
	}
	all := "" +
		"acme.notes apiKey string req=true sens=true decl=true default=: []= [local]=\n" +
		"acme.notes url string req=false sens=false decl=true default=\"https://default.example\": [tenant-b]=\"" + visible + "\"\n" +
		"acme.notes region string req=true sens=false decl=true default=: []=\"eu\" [local]=\"us\"\n" +
		"acme.notes retries integer req=false sens=false decl=true default=: []=3\n"
	if got := list("", ""); got != all {
		t.Errorf("ListSettings:\n%s\nwant\n%s", got, all)
	}
	if got := list("acme.notes", ""); got != all {
		t.Errorf("ListSettings(acme.notes):\n%s\nwant\n%s", got, all)
	}
	onLocal := "" +
		"acme.notes apiKey string req=true sens=true decl=true default=: []= [local]=\n" +
		"acme.notes url string req=false sens=false decl=true default=\"https://default.example\":\n" +
		"acme.notes region string req=true sens=false decl=true default=: []=\"eu\" [local]=\"us\"\n" +
		"acme.notes retries integer req=false sens=false decl=true default=: []=3\n"
	if got := list("acme.notes", "local"); got != onLocal {
		t.Errorf("ListSettings(acme.notes, local):\n%s\nwant\n%s", got, onLocal)
	}
	if got := list("acme.site", ""); got != "" {
		t.Errorf("a package without settings lists %q", got)
	}

	// unset: the endpoint's goes, the package's shows through
	for _, u := range []struct {
		id, endpoint string
		want         bool
	}{
		{"apiKey", "local", true},
		{"apiKey", "local", false},
		{"region", "local", true},
		{"retries", "tenant-b", false},
		{"gone", "", false},
	} {
		if got, err := h.UnsetSetting("acme.notes", u.id, u.endpoint); err != nil || got != u.want {
			t.Errorf("UnsetSetting(%s, %q) = %v, %v; want %v", u.id, u.endpoint, got, err, u.want)
		}
	}
	if got, want := values(t, h, "acme.notes", "local"), `{"apiKey":"`+secret+`","region":"eu","retries":3}`; got != want {
		t.Errorf("after unset: %s\nwant %s", got, want)
	}

	// a value no installed release declares any more is listed, and can be unset
	install(t, h, store.Release{Name: "acme.notes", Version: "2.0.0", Manifest: settingsManifest("acme.notes", "2.0.0", `{"id":"apiKey","type":"string","sensitive":true}`)})
	want := "" +
		"acme.notes apiKey string req=false sens=true decl=true default=: []=\n" +
		"acme.notes region  req=false sens=false decl=false default=: []=\"eu\"\n" +
		"acme.notes retries  req=false sens=false decl=false default=: []=3\n" +
		"acme.notes url  req=false sens=false decl=false default=: [tenant-b]=\"" + visible + "\"\n"
	if got := list("acme.notes", ""); got != want {
		t.Errorf("with orphans:\n%s\nwant\n%s", got, want)
	}
	if got, err := h.UnsetSetting("acme.notes", "retries", ""); err != nil || !got {
		t.Errorf("unset an orphan: %v, %v", got, err)
	}
	// retries is still declared by 1.1.0, so it can still be set
	mustSet(t, h, "acme.notes", "retries", "", "4")
}

func TestSetSettingRefuses(t *testing.T) {
	h := settingsHome(t, nil)
	tests := []struct {
		name, pkg, id, endpoint, text string
		code                          kernel.Code
		msg, hint                     string
	}{
		{"unknown package", "acme.none", "x", "", "1", kernel.CodeNotFound, "package acme.none is not installed", "rukh list"},
		{"undeclared id", "acme.notes", "token", "", "1", kernel.CodeNotFound, `declares no setting "token"`, "its settings: apiKey, url, region, retries"},
		{"package without settings", "acme.site", "x", "", "1", kernel.CodeNotFound, `declares no setting "x"`, "declare no settings"},
		{"not an integer", "acme.notes", "retries", "", "many", kernel.CodeInvalid, "retries", ""},
		{"over the maximum", "acme.notes", "retries", "", "10", kernel.CodeInvalid, "retries", ""},
		{"not in the enum", "acme.notes", "region", "", "mars", kernel.CodeInvalid, "region", ""},
		{"bad endpoint name", "acme.notes", "region", "Tenant A", "eu", kernel.CodeInvalid, `invalid endpoint name "Tenant A"`, ""},
		{"bad package name", "Acme", "region", "", "eu", kernel.CodeInvalid, `invalid package name "Acme"`, ""},
		{"bad id", "acme.notes", "1x", "", "eu", kernel.CodeInvalid, `invalid setting id "1x"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := h.SetSetting(tt.pkg, tt.id, tt.endpoint, []byte(tt.text))
			if kernel.ErrorCode(err) != tt.code || !strings.Contains(err.Error(), tt.msg) || !strings.Contains(kernel.ErrorHint(err), tt.hint) {
				t.Fatalf("error %v (code %s, hint %q); want %s %q, hint %q", err, kernel.ErrorCode(err), kernel.ErrorHint(err), tt.code, tt.msg, tt.hint)
			}
		})
	}
	if rs, err := h.Store.Settings(""); err != nil || len(rs) != 0 {
		t.Errorf("refused sets stored %v, %v", rs, err)
	}
	if _, err := os.Stat(h.Store.SettingsKeyPath()); err == nil {
		t.Error("refused sets made a settings key")
	}
	// an endpoint the draft profile lacks is set, with a warning
	_, w := mustSet(t, h, "acme.notes", "region", "tenant-z", "eu")
	if len(w) != 1 || !strings.Contains(w[0], "no endpoint tenant-z") {
		t.Errorf("warnings %q", w)
	}
	if _, w := mustSet(t, h, "acme.notes", "region", "local", "eu"); len(w) != 0 {
		t.Errorf("a draft endpoint warns: %q", w)
	}
}

// TestSensitiveNeverShown looks for a sensitive value in what the owner
// verbs return, in their JSON, and in the store file.
func TestSensitiveNeverShown(t *testing.T) {
	h := settingsHome(t, nil)
	set, _ := mustSet(t, h, "acme.notes", "apiKey", "", secret)
	setOnEndpoint, _ := mustSet(t, h, "acme.notes", "apiKey", "local", secret+"-local")
	mustSet(t, h, "acme.notes", "url", "", visible)
	list, err := h.ListSettings("", "")
	if err != nil {
		t.Fatal(err)
	}
	listLocal, err := h.ListSettings("acme.notes", "local")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what    string
		v       any
		visible bool
	}{
		{"the view SetSetting returns", set, false},
		{"the view of an endpoint's value", setOnEndpoint, false},
		{"ListSettings", list, true},
		{"ListSettings of an endpoint", listLocal, true},
	} {
		b, err := json.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		text := append(b, fmt.Sprintf("%v %+v", c.v, c.v)...)
		if bytes.Contains(text, []byte(secret)) {
			t.Errorf("%s shows the sensitive value: %s", c.what, text)
		}
		if c.visible && !bytes.Contains(text, []byte(visible)) {
			t.Errorf("%s lacks the value that is not sensitive: the search proves nothing: %s", c.what, text)
		}
	}
	if len(set.Values) != 1 || set.Values[0].Value != nil || set.Values[0].SetAt.IsZero() || !set.Sensitive {
		t.Errorf("the view of a sensitive value: %+v", set)
	}
	db, err := os.ReadFile(h.Store.Path())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(db, []byte(secret)) || !bytes.Contains(db, []byte(visible)) {
		t.Errorf("%s: holds the secret %v, holds the visible value %v", store.DBName, bytes.Contains(db, []byte(secret)), bytes.Contains(db, []byte(visible)))
	}
}

func TestSettingsKeyLocation(t *testing.T) {
	k1, err := store.NewSettingsKey()
	if err != nil {
		t.Fatal(err)
	}
	k2, _ := store.NewSettingsKey()
	keyFile := func(t *testing.T, k *store.SettingsKey) string {
		p := filepath.Join(t.TempDir(), "key")
		if err := os.WriteFile(p, k.Text(), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		env  func(t *testing.T) map[string]string
		// then: the environment a later call sees (nil: the same)
		then     func(t *testing.T, h *Home) map[string]string
		setErr   string
		madeFile bool   // SetSetting made HOME/settings.key
		callErr  string // SettingValues' error ("" none)
		callHint string
	}{
		{name: "the home's key, made on the first sensitive set", env: func(*testing.T) map[string]string { return nil }, madeFile: true},
		{name: "the key in the environment", env: func(*testing.T) map[string]string { return map[string]string{EnvSettingsKey: string(k1.Text())} }},
		{name: "the key in a file", env: func(t *testing.T) map[string]string { return map[string]string{EnvSettingsKeyFile: keyFile(t, k1)} }},
		{name: "the environment's key is not one", env: func(*testing.T) map[string]string { return map[string]string{EnvSettingsKey: "hunter2"} },
			setErr: EnvSettingsKey + ": not a rukh settings key"},
		{name: "the key file is missing", env: func(t *testing.T) map[string]string {
			return map[string]string{EnvSettingsKeyFile: filepath.Join(t.TempDir(), "none")}
		}, setErr: "there is no settings key file where " + EnvSettingsKeyFile + " says"},
		{name: "the key file wins over the home's", env: func(t *testing.T) map[string]string { return map[string]string{EnvSettingsKeyFile: keyFile(t, k1)} },
			then: func(t *testing.T, h *Home) map[string]string {
				if err := os.WriteFile(h.Store.SettingsKeyPath(), k2.Text(), 0o600); err != nil {
					t.Fatal(err)
				}
				return nil
			}},
		{name: "the key is gone", env: func(*testing.T) map[string]string { return nil }, madeFile: true,
			then: func(t *testing.T, h *Home) map[string]string {
				if err := os.Remove(h.Store.SettingsKeyPath()); err != nil {
					t.Fatal(err)
				}
				return nil
			}, callErr: `setting "apiKey" of package acme.notes needs the settings key: there is none`, callHint: "every replica of a shared store needs the same key"},
		{name: "another key", env: func(*testing.T) map[string]string { return map[string]string{EnvSettingsKey: string(k1.Text())} },
			then:    func(*testing.T, *Home) map[string]string { return map[string]string{EnvSettingsKey: string(k2.Text())} },
			callErr: "sealed with settings key " + k1.ID() + ", not with this rukh's settings key " + k2.ID(), callHint: k1.ID()},
		{name: "a group-readable home key", env: func(*testing.T) map[string]string { return nil }, madeFile: true,
			then: func(t *testing.T, h *Home) map[string]string {
				if err := os.Chmod(h.Store.SettingsKeyPath(), 0o640); err != nil {
					t.Fatal(err)
				}
				return nil
			}, callErr: "the settings key file is readable by other users (mode 0640)", callHint: "chmod 600"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := tt.env(t)
			h := settingsHome(t, nil)
			h.Env = func(k string) string { return env[k] }
			_, w, err := h.SetSetting("acme.notes", "apiKey", "", []byte(secret))
			if tt.setErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.setErr) || strings.Contains(err.Error(), "hunter2") {
					t.Fatalf("SetSetting error %v; want %q", err, tt.setErr)
				}
				if _, err := os.Stat(h.Store.SettingsKeyPath()); err == nil {
					t.Error("a key the environment names was not found, and one was made in the home")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			fi, statErr := os.Stat(h.Store.SettingsKeyPath())
			if made := statErr == nil; made != tt.madeFile {
				t.Fatalf("made HOME/settings.key: %v, want %v", made, tt.madeFile)
			}
			if tt.madeFile {
				if fi.Mode().Perm() != 0o600 {
					t.Errorf("settings.key has mode %04o", fi.Mode().Perm())
				}
				if len(w) != 1 || !strings.Contains(w[0], "made a new settings key in "+h.Store.SettingsKeyPath()) {
					t.Errorf("warnings %q", w)
				}
				if _, w2, err := h.SetSetting("acme.notes", "apiKey", "local", []byte(secret)); err != nil || len(w2) != 0 {
					t.Errorf("the second set: %q, %v", w2, err)
				}
			} else if len(w) != 0 {
				t.Errorf("warnings %q", w)
			}
			if tt.then != nil {
				if e := tt.then(t, h); e != nil {
					env = e
				}
			}
			got, err := h.SettingValues("acme.notes", "", []string{"apiKey", "url", "region", "retries"})
			if tt.callErr == "" {
				if err != nil || string(got["apiKey"]) != `"`+secret+`"` {
					t.Fatalf("SettingValues = %s, %v", got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.callErr) || !strings.Contains(kernel.ErrorHint(err), tt.callHint) {
				t.Fatalf("SettingValues error %v (hint %q); want %q, hint %q", err, kernel.ErrorHint(err), tt.callErr, tt.callHint)
			}
		})
	}
}

// A call of a package without sensitive values needs no key.
func TestSettingValuesWithoutKey(t *testing.T) {
	h := settingsHome(t, map[string]string{EnvSettingsKeyFile: "/nonexistent/key"})
	mustSet(t, h, "acme.notes", "region", "", "eu")
	if got := values(t, h, "acme.notes", "local"); got != `{"region":"eu"}` {
		t.Errorf("= %s", got)
	}
}

func TestMissingSettings(t *testing.T) {
	notes := policy.BoundRelease{Name: "acme.notes", Version: "1.1.0"}
	site := policy.BoundRelease{Name: "acme.site", Version: "1.0.0"}
	old := policy.BoundRelease{Name: "acme.notes", Version: "1.0.0"}
	tests := []struct {
		name      string
		set       [][3]string // package's id, endpoint, value
		rels      []policy.BoundRelease
		endpoints []string
		want      []string
	}{
		{"nothing set, no endpoints", nil, []policy.BoundRelease{notes, site}, nil,
			[]string{"acme.notes apiKey ", "acme.notes region "}},
		{"nothing set, two endpoints", nil, []policy.BoundRelease{notes}, []string{"local", "tenant-b"},
			[]string{"acme.notes apiKey ", "acme.notes region "}},
		{"the package's values", [][3]string{{"apiKey", "", "k"}, {"region", "", "eu"}}, []policy.BoundRelease{notes}, []string{"local", "tenant-b"}, nil},
		{"one endpoint's own", [][3]string{{"apiKey", "local", "k"}, {"region", "", "eu"}}, []policy.BoundRelease{notes}, []string{"local", "tenant-b", "tenant-c"},
			[]string{"acme.notes apiKey tenant-b", "acme.notes apiKey tenant-c", "acme.notes apiKey cli"}},
		{"every endpoint's own", [][3]string{{"apiKey", "local", "k"}, {"apiKey", "tenant-b", "k"}, {"region", "", "eu"}}, []policy.BoundRelease{notes}, []string{"local", "tenant-b"},
			[]string{"acme.notes apiKey cli"}},
		{"an endpoint not asked about", [][3]string{{"apiKey", "tenant-z", "k"}, {"region", "", "eu"}}, []policy.BoundRelease{notes}, []string{"local"},
			[]string{"acme.notes apiKey "}},
		{"the older release's declarations", [][3]string{{"apiKey", "", "k"}}, []policy.BoundRelease{old}, nil,
			[]string{"acme.notes region "}},
		{"a package without settings", nil, []policy.BoundRelease{site}, []string{"local"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := settingsHome(t, nil)
			for _, s := range tt.set {
				mustSet(t, h, "acme.notes", s[0], s[1], s[2])
			}
			rels := make([]policy.BoundRelease, len(tt.rels))
			for i, br := range tt.rels {
				r, err := h.Store.Release(br.Name, br.Version)
				if err != nil {
					t.Fatal(err)
				}
				m, err := kernel.DecodeInstalled(r.Manifest)
				if err != nil {
					t.Fatal(err)
				}
				rels[i] = br
				rels[i].Settings = m.Settings // as the revision carries them
			}
			ms, err := h.MissingSettings(rels, tt.endpoints)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range ms {
				e := m.Endpoint
				if m.CLI {
					e = "cli"
				}
				got = append(got, m.Package+" "+m.ID+" "+e)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("= %q\nwant %q", got, tt.want)
			}
		})
	}
	m := MissingSetting{Package: "acme.notes", ID: "apiKey", Endpoint: "tenant-b"}
	if got, want := m.String(), `setting "apiKey" of package acme.notes is not set for endpoint tenant-b; run: rukh settings set acme.notes apiKey --endpoint tenant-b`; got != want {
		t.Errorf("String = %q\nwant %q", got, want)
	}
}

// Before the first publish nothing is missing.
func TestMissingActiveSettingsBeforePublish(t *testing.T) {
	if ms, err := settingsHome(t, nil).MissingActiveSettings(); err != nil || ms != nil {
		t.Errorf("= %v, %v", ms, err)
	}
}

// The home is its runner's settings source, so a call sees what the
// owner stored.
func TestNewWiresRunnerSettings(t *testing.T) {
	r := kernel.NewRunner()
	h := New(nil, r)
	if r.Settings != kernel.SettingsSource(h) {
		t.Fatalf("Runner.Settings = %v", r.Settings)
	}
}

// A call asks only for what its release declares: a stored value the
// release dropped is never opened (so it needs no key), and ids match
// ignoring case, keyed as the release spells them.
func TestSettingValuesOnlyDeclared(t *testing.T) {
	env := map[string]string{}
	h := settingsHome(t, env)
	mustSet(t, h, "acme.notes", "apiKey", "", "k-1")
	mustSet(t, h, "acme.notes", "region", "", "us")
	if err := os.Remove(filepath.Join(h.Store.Home(), store.SettingsKeyName)); err != nil {
		t.Fatal(err)
	}
	got, err := h.SettingValues("acme.notes", "", []string{"REGION"})
	if err != nil || len(got) != 1 || string(got["REGION"]) != `"us"` {
		t.Errorf("= %s, %v; want only REGION, without opening apiKey", got, err)
	}
	if _, err := h.SettingValues("acme.notes", "", []string{"apiKey", "region"}); err == nil || !strings.Contains(err.Error(), "needs the settings key") {
		t.Errorf("a declared sensitive value without the key: %v", err)
	}
}

// A setting any installed release declares sensitive is treated as one:
// a value stored in the clear before is no longer shown, doctor asks for
// it to be set again, and setting it again seals it.
func TestSettingBecomesSensitive(t *testing.T) {
	h := settingsHome(t, nil)
	const plain = "https://plain-before.example"
	mustSet(t, h, "acme.notes", "url", "", plain)
	m := settingsManifest("acme.notes", "1.2.0", `{"id":"url","type":"string","sensitive":true}`)
	install(t, h, store.Release{Name: "acme.notes", Version: "1.2.0", Manifest: m, Dir: "/releases/acme.notes"})
	vs, err := h.ListSettings("acme.notes", "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(vs)
	if strings.Contains(string(b), plain) {
		t.Errorf("ListSettings shows a value a release declares sensitive: %s", b)
	}
	doctor := func() string {
		b, _ := json.Marshal(h.Doctor())
		return string(b)
	}
	if d := doctor(); !strings.Contains(d, "stored in the clear") || strings.Contains(d, plain) {
		t.Errorf("doctor: %s", d)
	}
	if d, err := h.SettingDeclaration("acme.notes", "url"); err != nil || !d.Sensitive {
		t.Fatalf("declaration %+v, %v", d, err)
	}
	mustSet(t, h, "acme.notes", "url", "", "https://sealed-now.example")
	raw, err := os.ReadFile(filepath.Join(h.Store.Home(), store.DBName))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "sealed-now") {
		t.Error("the value set again is in the clear in rukh.db")
	}
	if d := doctor(); strings.Contains(d, "stored in the clear") {
		t.Errorf("doctor still flags it: %s", d)
	}
}
