package policy_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
)

const specProfile = `{
  "endpoints": {
    "local": {
      "namespace": "acme-laptop",
      "transports": ["stdio"],
      "subject": "owner",
      "template": "default",
      "publish": {"commands": ["notes.add"], "packages": ["acme.notes"]}
    }
  },
  "templates": {
    "default": {"timeoutMs": 30000, "maxConcurrent": 4, "maxHeld": 16,
                 "diagnosticsBytes": 65536, "resultBytes": 131072}
  }
}`

func TestParseProfileValid(t *testing.T) {
	tests := []struct {
		name, in, canonical string
	}{
		{"spec example", specProfile,
			`{"endpoints":{"local":{"namespace":"acme-laptop","transports":["stdio"],"subject":"owner","template":"default","publish":{"commands":["notes.add"],"packages":["acme.notes"]}}},"templates":{"default":{"timeoutMs":30000,"maxConcurrent":4,"maxHeld":16,"diagnosticsBytes":65536,"resultBytes":131072}}}`},
		{"empty", `{}`,
			`{"endpoints":{},"templates":{"default":{"timeoutMs":30000,"maxConcurrent":4,"maxHeld":16,"diagnosticsBytes":65536,"resultBytes":131072}}}`},
		{"defaults filled and lists sorted",
			`{"endpoints":{"b":{"namespace":"nb","template":"fast","toolNames":"compact","transports":["http","stdio"],"publish":{"packages":["z.pkg","a.pkg"]}},"a":{"namespace":"na"}},"templates":{"fast":{"timeoutMs":5000}}}`,
			`{"endpoints":{"a":{"namespace":"na","transports":["stdio"],"subject":"owner","template":"default","publish":{"commands":[],"packages":[]}},"b":{"namespace":"nb","transports":["http","stdio"],"subject":"owner","template":"fast","publish":{"commands":[],"packages":["a.pkg","z.pkg"]},"toolNames":"compact"}},"templates":{"default":{"timeoutMs":30000,"maxConcurrent":4,"maxHeld":16,"diagnosticsBytes":65536,"resultBytes":131072},"fast":{"timeoutMs":5000,"maxConcurrent":4,"maxHeld":16,"diagnosticsBytes":65536,"resultBytes":131072}}}`},
		// toolNames is kept exactly as stated: absent stays absent (the
		// default, compact), an explicit mode stays, even "compact".
		{"toolNames as stated",
			`{"endpoints":{"c":{"namespace":"nc","toolNames":"compact"},"f":{"namespace":"nf","toolNames":"full"},"n":{"namespace":"nn"},"s":{"namespace":"ns","toolNames":"stable"}}}`,
			`{"endpoints":{"c":{"namespace":"nc","transports":["stdio"],"subject":"owner","template":"default","publish":{"commands":[],"packages":[]},"toolNames":"compact"},"f":{"namespace":"nf","transports":["stdio"],"subject":"owner","template":"default","publish":{"commands":[],"packages":[]},"toolNames":"full"},"n":{"namespace":"nn","transports":["stdio"],"subject":"owner","template":"default","publish":{"commands":[],"packages":[]}},"s":{"namespace":"ns","transports":["stdio"],"subject":"owner","template":"default","publish":{"commands":[],"packages":[]},"toolNames":"stable"}},"templates":{"default":{"timeoutMs":30000,"maxConcurrent":4,"maxHeld":16,"diagnosticsBytes":65536,"resultBytes":131072}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := policy.ParseProfile([]byte(tt.in))
			if err != nil {
				t.Fatalf("ParseProfile: %v", err)
			}
			if got := string(p.Canonical()); got != tt.canonical {
				t.Errorf("Canonical:\n got %s\nwant %s", got, tt.canonical)
			}
			// The canonical form parses back to itself.
			q, err := policy.ParseProfile(p.Canonical())
			if err != nil {
				t.Fatalf("reparse canonical: %v", err)
			}
			if string(q.Canonical()) != tt.canonical {
				t.Errorf("canonical form is not a fixed point: %s", q.Canonical())
			}
		})
	}
}

func TestDefaultProfile(t *testing.T) {
	p := policy.DefaultProfile()
	if err := p.Validate(); err != nil {
		t.Fatalf("DefaultProfile is invalid: %v", err)
	}
	want := `{"endpoints":{"local":{"namespace":"local","transports":["stdio"],"subject":"owner","template":"default","publish":{"commands":[],"packages":[]}}},"templates":{"default":{"timeoutMs":30000,"maxConcurrent":4,"maxHeld":16,"diagnosticsBytes":65536,"resultBytes":131072}}}`
	if got := string(p.Canonical()); got != want {
		t.Errorf("Canonical:\n got %s\nwant %s", got, want)
	}
}

func TestParseProfileInvalid(t *testing.T) {
	ep := func(body string) string { return `{"endpoints":{"local":` + body + `}}` }
	tmpl := func(body string) string {
		return `{"endpoints":{"local":{"namespace":"n"}},"templates":{"default":` + body + `}}`
	}
	tests := []struct {
		name, in, path, msg string
	}{
		{"not an object", `[]`, "", "profile must be a JSON object"},
		{"trailing value", `{} {}`, "", "several top-level JSON values"},
		{"duplicate member", `{"endpoints":{},"endpoints":{}}`, "", `duplicate object member name "endpoints"`},
		{"unknown top-level member", `{"endpoint":{}}`, "/endpoint", `unknown member "endpoint"`},
		{"unknown endpoint member", ep(`{"namespace":"n","nmspace":"x"}`), "/endpoints/local/nmspace", `unknown member "nmspace"`},
		{"unknown template member", tmpl(`{"timeout":1}`), "/templates/default/timeout", `unknown member "timeout"`},
		{"null", ep(`{"namespace":"n","subject":null}`), "/endpoints/local/subject", "null is not allowed"},
		{"wrong type", tmpl(`{"timeoutMs":"30"}`), "/templates/default/timeoutMs", "cannot"},
		{"fraction", tmpl(`{"maxConcurrent":3.5}`), "/templates/default/maxConcurrent", "3.5 is not an integer in range"},
		{"huge", tmpl(`{"timeoutMs":1e30}`), "/templates/default/timeoutMs", "1e30 is not an integer in range"},
		{"endpoint name", `{"endpoints":{"Local":{"namespace":"n"}}}`, "/endpoints/Local", `invalid endpoint name "Local"`},
		{"endpoint name escaped", `{"endpoints":{"a/b":{"namespace":"n"}}}`, "/endpoints/a~1b", `invalid endpoint name "a/b"`},
		{"missing namespace", ep(`{}`), "/endpoints/local", `missing member "namespace"`},
		{"namespace syntax", ep(`{"namespace":"Acme_Laptop"}`), "/endpoints/local/namespace", `invalid namespace "Acme_Laptop"`},
		{"namespace too long", ep(`{"namespace":"` + strings.Repeat("a", 65) + `"}`), "/endpoints/local/namespace", "invalid namespace"},
		{"namespace unique", `{"endpoints":{"a":{"namespace":"x"},"b":{"namespace":"x"}}}`, "/endpoints/b/namespace", `namespace "x" is already used by endpoint "a"`},
		{"unknown template", ep(`{"namespace":"n","template":"fast"}`), "/endpoints/local/template", `unknown template "fast"`},
		{"empty template", ep(`{"namespace":"n","template":""}`), "/endpoints/local/template", "empty template"},
		{"unknown transport", ep(`{"namespace":"n","transports":["sse"]}`), "/endpoints/local/transports/0", `unknown transport "sse"`},
		{"duplicate transport", ep(`{"namespace":"n","transports":["stdio","stdio"]}`), "/endpoints/local/transports/1", `duplicate transport "stdio"`},
		{"no transports", ep(`{"namespace":"n","transports":[]}`), "/endpoints/local/transports", "no transports"},
		{"subject syntax", ep(`{"namespace":"n","subject":"Owner"}`), "/endpoints/local/subject", `invalid subject "Owner"`},
		{"toolNames", ep(`{"namespace":"n","toolNames":"short"}`), "/endpoints/local/toolNames", `unknown toolNames "short": want compact, full or stable`},
		{"publish command syntax", ep(`{"namespace":"n","publish":{"commands":["Notes.Add"]}}`), "/endpoints/local/publish/commands/0", `invalid command "Notes.Add"`},
		{"publish command duplicate", ep(`{"namespace":"n","publish":{"commands":["a.b","c","a.b"]}}`), "/endpoints/local/publish/commands/2", `duplicate command "a.b"`},
		{"publish rukh command", ep(`{"namespace":"n","publish":{"commands":["rukh.install"]}}`), "/endpoints/local/publish/commands/0", "built-in rukh namespace"},
		{"publish rukh itself", ep(`{"namespace":"n","publish":{"commands":["ok","rukh"]}}`), "/endpoints/local/publish/commands/1", "built-in rukh namespace"},
		{"publish package syntax", ep(`{"namespace":"n","publish":{"packages":["acme_notes"]}}`), "/endpoints/local/publish/packages/0", `invalid package "acme_notes"`},
		{"publish package duplicate", ep(`{"namespace":"n","publish":{"packages":["a","a"]}}`), "/endpoints/local/publish/packages/1", `duplicate package "a"`},
		{"publish rukh package", ep(`{"namespace":"n","publish":{"packages":["rukh.core"]}}`), "/endpoints/local/publish/packages/0", "built-in rukh namespace"},
		{"publish unknown member", ep(`{"namespace":"n","publish":{"tools":[]}}`), "/endpoints/local/publish/tools", `unknown member "tools"`},
		{"template name", `{"templates":{"Fast":{}}}`, "/templates/Fast", `invalid template name "Fast"`},
		{"timeout zero", tmpl(`{"timeoutMs":0}`), "/templates/default/timeoutMs", "timeoutMs must be greater than 0"},
		{"timeout too large", tmpl(`{"timeoutMs":86400001}`), "/templates/default/timeoutMs", "over the maximum of 86400000"},
		{"maxConcurrent negative", tmpl(`{"maxConcurrent":-1}`), "/templates/default/maxConcurrent", "greater than 0"},
		{"maxHeld too large", tmpl(`{"maxHeld":4097,"maxConcurrent":4}`), "/templates/default/maxHeld", "over the maximum"},
		{"maxHeld below maxConcurrent", tmpl(`{"maxConcurrent":8,"maxHeld":4}`), "/templates/default/maxHeld", "maxHeld 4 is less than maxConcurrent 8"},
		{"maxHeld below default maxConcurrent", tmpl(`{"maxHeld":2}`), "/templates/default/maxHeld", "maxHeld 2 is less than maxConcurrent 4"},
		{"diagnostics zero", tmpl(`{"diagnosticsBytes":0}`), "/templates/default/diagnosticsBytes", "greater than 0"},
		{"resultBytes over 128 KiB", tmpl(`{"resultBytes":131073}`), "/templates/default/resultBytes", "over the maximum of 131072"},
		{"invalid utf-8", "{\"endpoints\":{\"local\":{\"namespace\":\"\xff\"}}}", "/endpoints/local/namespace", "UTF-8"},
		{"confine unknown member", tmpl(`{"confine":{"net":"none"}}`), "/templates/default/confine/net", `unknown member "net"`},
		{"confine network unknown", tmpl(`{"confine":{"network":"lan"}}`), "/templates/default/confine/network", `unknown network "lan": want "none" or "host"`},
		{"confine network empty", tmpl(`{"confine":{"network":""}}`), "/templates/default/confine/network", "empty network"},
		{"confine network null", tmpl(`{"confine":{"network":null}}`), "/templates/default/confine/network", "null is not allowed"},
		{"confine null", tmpl(`{"confine":null}`), "/templates/default/confine", "null is not allowed"},
		{"confine read relative", tmpl(`{"confine":{"read":["release","etc"]}}`), "/templates/default/confine/read/1", `path "etc": not an absolute path, "~/...", "release" or "scratch"`},
		{"confine write dotdot", tmpl(`{"confine":{"write":["/srv/../etc"]}}`), "/templates/default/confine/write/0", `".." segment`},
		{"confine write unclean", tmpl(`{"confine":{"write":["/srv/"]}}`), "/templates/default/confine/write/0", "not a clean path (want /srv)"},
		{"confine read duplicate", tmpl(`{"confine":{"read":["scratch","scratch"]}}`), "/templates/default/confine/read/1", "already listed"},
		{"confine read same after ~", tmpl(`{"confine":{"read":["~/n","/home/owner/n"]}}`), "/templates/default/confine/read/1", "already listed"},
		{"confine read not a list", tmpl(`{"confine":{"read":"release"}}`), "/templates/default/confine/read", ""},
		{"confine processes zero", tmpl(`{"confine":{"processes":0}}`), "/templates/default/confine/processes", "processes must be greater than 0"},
		{"confine processes too many", tmpl(`{"confine":{"processes":4097}}`), "/templates/default/confine/processes", "over the maximum of 4096"},
		{"confine memory negative", tmpl(`{"confine":{"memoryMiB":-5}}`), "/templates/default/confine/memoryMiB", "greater than 0"},
		{"confine memory too large", tmpl(`{"confine":{"memoryMiB":1048577}}`), "/templates/default/confine/memoryMiB", "over the maximum of 1048576"},
		{"confine cpu too large", tmpl(`{"confine":{"cpuSeconds":86401}}`), "/templates/default/confine/cpuSeconds", "over the maximum of 86400"},
		{"confine file fraction", tmpl(`{"confine":{"fileMiB":1.5}}`), "/templates/default/confine/fileMiB", "1.5 is not an integer in range"},
		{"confine file zero", tmpl(`{"confine":{"fileMiB":0}}`), "/templates/default/confine/fileMiB", "greater than 0"},
	}
	defer policy.SetUserHome(func() (string, error) { return "/home/owner", nil })()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := policy.ParseProfile([]byte(tt.in))
			if err == nil {
				t.Fatalf("ParseProfile accepted it: %s", p.Canonical())
			}
			var ke *kernel.Error
			if !errors.As(err, &ke) {
				t.Fatalf("error %T %v is not a *kernel.Error", err, err)
			}
			if ke.Code != kernel.CodeInvalid {
				t.Errorf("code = %s, want invalid", ke.Code)
			}
			if ke.Path != tt.path {
				t.Errorf("path = %q, want %q (error %v)", ke.Path, tt.path, err)
			}
			if !strings.Contains(ke.Message, tt.msg) {
				t.Errorf("message = %q, want it to contain %q", ke.Message, tt.msg)
			}
		})
	}
}

func TestParseProfileConfine(t *testing.T) {
	defer policy.SetUserHome(func() (string, error) { return "/home/owner", nil })()
	const base = `"timeoutMs":30000,"maxConcurrent":4,"maxHeld":16,"diagnosticsBytes":65536,"resultBytes":131072`
	tests := []struct {
		name, confine, canonical string
	}{
		{"empty confines", `{}`, `{}`},
		{"everything", `{"network":"none","read":["release","/etc/ssl","~"],"write":["scratch","~/notes"],"processes":16,"memoryMiB":512,"cpuSeconds":60,"fileMiB":64}`,
			`{"network":"none","read":["release","/etc/ssl","/home/owner"],"write":["scratch","/home/owner/notes"],"processes":16,"memoryMiB":512,"cpuSeconds":60,"fileMiB":64}`},
		{"network host", `{"network":"host"}`, `{"network":"host"}`},
		{"root", `{"read":["/"]}`, `{"read":["/"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := policy.ParseProfile([]byte(`{"templates":{"locked":{"confine":` + tt.confine + `}}}`))
			if err != nil {
				t.Fatalf("ParseProfile: %v", err)
			}
			want := `"locked":{` + base + `,"confine":` + tt.canonical + `}`
			if got := string(p.Canonical()); !strings.Contains(got, want) {
				t.Fatalf("Canonical %s\nwant it to contain %s", got, want)
			}
			// The stored form reads back as itself, with no home to resolve.
			defer policy.SetUserHome(func() (string, error) { return "", errors.New("no home") })()
			q, err := policy.ParseProfile(p.Canonical())
			if err != nil || string(q.Canonical()) != string(p.Canonical()) {
				t.Fatalf("reparse: %v\n%s", err, q.Canonical())
			}
			// The binding carries it, named, to the kernel's limits.
			p.Endpoints = map[string]policy.Endpoint{"local": {Namespace: "n", Template: "locked"}}
			launch, err := policy.LaunchOf(p.Canonical(), "local")
			if err != nil {
				t.Fatal(err)
			}
			l := launch.Template.Limits()
			got, _ := json.Marshal(l.Confine)
			if l.Template != "locked" || l.Confine == nil || string(got) != tt.canonical {
				t.Fatalf("Limits = %+v (confine %s)", l, got)
			}
		})
	}
	// Without a home, "~/" cannot be resolved: an error, never a guess.
	defer policy.SetUserHome(func() (string, error) { return "", errors.New("no home") })()
	_, err := policy.ParseProfile([]byte(`{"templates":{"locked":{"confine":{"read":["~/notes"]}}}}`))
	if ke, ok := err.(*kernel.Error); !ok || ke.Path != "/templates/locked/confine/read/0" || !strings.Contains(ke.Message, "home directory is unknown") {
		t.Fatalf("no home: %v", err)
	}
}

func TestParseProfileWithoutConfine(t *testing.T) {
	// A profile from before confine reads, and its templates are unconfined.
	p, err := policy.ParseProfile([]byte(specProfile))
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Templates["default"].Confine; c != nil {
		t.Fatalf("confine = %+v", c)
	}
	if strings.Contains(string(p.Canonical()), "confine") {
		t.Fatalf("canonical form grew a confine: %s", p.Canonical())
	}
}

func TestValidateGoValue(t *testing.T) {
	// A profile built in Go is checked by the same rules; zero fields are defaults.
	p := &policy.Profile{Endpoints: map[string]policy.Endpoint{
		"a": {Namespace: "x"},
		"b": {Namespace: "y", Template: "missing"},
	}}
	err := p.Validate()
	var ke *kernel.Error
	if !errors.As(err, &ke) || ke.Path != "/endpoints/b/template" {
		t.Fatalf("Validate = %v, want an error at /endpoints/b/template", err)
	}
	p.Endpoints["b"] = policy.Endpoint{Namespace: "y"}
	if err := p.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
}
