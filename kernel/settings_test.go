package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

func settingsManifest(api, settings string) []byte {
	return []byte(`{"apiVersion":"` + api + `","name":"svc","version":"1.0.0","settings":` + settings +
		`,"commands":[{"id":"svc.get","path":["svc","get"],"execute":{"program":"bin/svc"}}]}`)
}

func TestManifestSettings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, api, settings string
		path, msg           string // "" accepted
	}{
		{"accepted", APIVersion2, `[{"id":"apiKey","type":"string","sensitive":true,"required":true,"description":"the key"},` +
			`{"id":"region","type":"string","enum":["eu","us"],"default":"eu"},{"id":"retries","type":"integer","minimum":0,"maximum":9,"default":3},` +
			`{"id":"hosts","type":"list","items":{"type":"string","maxLength":64},"maxItems":4}]`, "", ""},
		{"empty", APIVersion2, `[]`, "", ""},
		{"v1", APIVersion1, `[{"id":"a","type":"string"}]`, "/settings", "need apiVersion"},
		{"bad id", APIVersion2, `[{"id":"9lives","type":"string"}]`, "/settings/0/id", "must match"},
		{"dup ignoring case", APIVersion2, `[{"id":"apiKey","type":"string"},{"id":"apikey","type":"string"}]`, "/settings/1/id", "already declared by /settings/0"},
		{"no type", APIVersion2, `[{"id":"a"}]`, "/settings/0/type", "missing type"},
		{"unknown type", APIVersion2, `[{"id":"a","type":"secret"}]`, "/settings/0/type", "unknown type"},
		{"required default", APIVersion2, `[{"id":"a","type":"string","required":true,"default":"x"}]`, "/settings/0/default", "required setting has no default"},
		{"sensitive default", APIVersion2, `[{"id":"a","type":"string","sensitive":true,"default":"x"}]`, "/settings/0/default", "sensitive setting has no default"},
		{"default out of enum", APIVersion2, `[{"id":"a","type":"string","enum":["x"],"default":"y"}]`, "/settings/0/default", "default"},
		{"flag refused", APIVersion2, `[{"id":"a","type":"string","flag":"a"}]`, "", "unknown"},
		{"null refused", APIVersion2, `[{"id":"a","type":"string","description":null}]`, "/settings/0/description", "null"},
		{"list without items", APIVersion2, `[{"id":"a","type":"list"}]`, "/settings/0/items", "needs items"},
	}
	var tooMany []string
	for i := range MaxSettings + 1 {
		tooMany = append(tooMany, `{"id":"s`+strings.Repeat("x", i)+`","type":"string"}`)
	}
	tests = append(tests, struct{ name, api, settings, path, msg string }{"too many", APIVersion2, "[" + strings.Join(tooMany, ",") + "]", "/settings", "at most 32"})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseManifest(settingsManifest(tt.api, tt.settings))
			if tt.msg == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if tt.name == "accepted" && (len(m.Settings) != 4 || !m.Settings[0].Sensitive || string(m.Settings[1].Default) != `"eu"`) {
					t.Errorf("settings decoded as %+v", m.Settings)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			var ke *Error
			if !errors.As(err, &ke) || ke.Code != CodeInvalid || !strings.Contains(err.Error(), tt.msg) || tt.path != "" && ke.Path != tt.path {
				t.Errorf("error %v (path %q), want %q at %q", err, ke.Path, tt.msg, tt.path)
			}
		})
	}
}

func TestSettingParseValue(t *testing.T) {
	t.Parallel()
	m, err := ParseManifest(settingsManifest(APIVersion2, `[{"id":"key","type":"string","minLength":4},`+
		`{"id":"region","type":"string","enum":["eu","us"]},{"id":"n","type":"integer","maximum":10},`+
		`{"id":"on","type":"boolean"},{"id":"rate","type":"decimal"},{"id":"hosts","type":"list","items":{"type":"string"},"maxItems":2}]`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id, text, want, msg string
	}{
		{"key", "s3cr3t \"q\"", `"s3cr3t \"q\""`, ""},
		{"key", "abc", "", "at least 4 characters"},
		{"region", "us", `"us"`, ""},
		{"region", "asia", "", "one of"},
		{"n", "7", `7`, ""},
		{"n", "11", "", "at most"},
		{"n", "7.5", "", "integer"},
		{"on", "true", `true`, ""},
		{"on", "yes", "", "true or false"},
		{"rate", "1.50", `"1.5"`, ""},
		{"hosts", ` ["a","b"] `, `["a","b"]`, ""},
		{"hosts", `["a","b","c"]`, "", "at most 2"},
		{"hosts", `a,b`, "", "JSON array"},
		{"key", strings.Repeat("x", MaxSettingValueBytes), "", "over the limit"},
	}
	for _, tt := range tests {
		s := FindSetting(m.Settings, tt.id)
		got, err := s.ParseValue(tt.text)
		if tt.msg != "" {
			if err == nil || !strings.Contains(err.Error(), tt.msg) || !strings.Contains(err.Error(), `setting "`+tt.id+`"`) {
				t.Errorf("%s %q: error %v, want one naming the setting and %q", tt.id, tt.text, err, tt.msg)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("%s %q: %s, %v; want %s", tt.id, tt.text, got, err, tt.want)
			continue
		}
		back, err := s.CheckValue(got)
		if err != nil || string(back) != tt.want {
			t.Errorf("%s: CheckValue(%s) = %s, %v", tt.id, got, back, err)
		}
	}
	if FindSetting(m.Settings, "nope") != nil {
		t.Error("FindSetting found an undeclared id")
	}
	// A stored value the declaration has since tightened is refused.
	if _, err := FindSetting(m.Settings, "n").CheckValue(jsontext.Value(`12`)); err == nil {
		t.Error("CheckValue accepted 12 for maximum 10")
	}
}

func TestResolveSettings(t *testing.T) {
	t.Parallel()
	decls := []Setting{
		{ID: "apiKey", Type: TypeString, Required: true, Sensitive: true},
		{ID: "region", Type: TypeString, Default: jsontext.Value(`"eu"`)},
		{ID: "retries", Type: TypeInteger, Maximum: jsontext.Value(`5`)},
	}
	got, err := ResolveSettings("svc", decls, map[string]jsontext.Value{"apiKey": jsontext.Value(`"k"`)})
	if err != nil {
		t.Fatal(err)
	}
	if b := appendInput(nil, got); string(b) != `{"apiKey":"k","region":"eu"}` {
		t.Errorf("resolved %s", b)
	}
	got, err = ResolveSettings("svc", decls, map[string]jsontext.Value{"apiKey": jsontext.Value(`"k"`), "region": jsontext.Value(`"us"`), "retries": jsontext.Value(`2`)})
	if err != nil || string(appendInput(nil, got)) != `{"apiKey":"k","region":"us","retries":2}` {
		t.Errorf("resolved %s, %v", appendInput(nil, got), err)
	}
	_, err = ResolveSettings("svc", decls, nil)
	if want := `setting "apiKey" of package svc is not set; run: rukh settings set svc apiKey`; err == nil || err.Error() != want {
		t.Errorf("missing required: %v, want %q", err, want)
	}
	_, err = ResolveSettings("svc", decls, map[string]jsontext.Value{"apiKey": jsontext.Value(`"k"`), "retries": jsontext.Value(`9`)})
	if err == nil || !strings.Contains(err.Error(), "no longer fits") || !strings.Contains(err.Error(), "rukh settings set svc retries") {
		t.Errorf("stale value: %v", err)
	}
}

type settingsSource struct {
	vals    map[string]jsontext.Value
	err     error
	pkg, ep string
	asked   int
}

func (s *settingsSource) SettingValues(pkg, endpoint string, ids []string) (map[string]jsontext.Value, error) {
	s.asked++
	s.pkg, s.ep = pkg, endpoint
	return s.vals, s.err
}

func TestInvokeSettings(t *testing.T) {
	t.Parallel()
	decls := []Setting{{ID: "apiKey", Type: TypeString, Required: true, Sensitive: true}, {ID: "region", Type: TypeString, Default: jsontext.Value(`"eu"`)}}
	tests := []struct {
		name     string
		decls    []Setting
		src      *settingsSource
		outcome  Outcome
		reason   string
		settings string // the invoke line's settings member; "" absent
	}{
		{"none declared", nil, &settingsSource{}, Succeeded, "", ""},
		{"delivered", decls, &settingsSource{vals: map[string]jsontext.Value{"apiKey": jsontext.Value(`"k-1"`)}}, Succeeded, "", `,"settings":{"apiKey":"k-1","region":"eu"}`},
		{"missing required", decls, &settingsSource{}, Rejected, "run: rukh settings set svc apiKey", ""},
		{"source fails", decls, &settingsSource{err: errors.New("the settings key is missing")}, ExecutionFailed, "the settings key is missing", ""},
		{"optional only", decls[1:], &settingsSource{}, Succeeded, "", `,"settings":{"region":"eu"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			inv := fakeInvocation(t, "echo-invoke", textDecl)
			inv.Package, inv.Settings = "svc", tt.decls
			inv.Caller = Caller{Transport: TransportStdio, Endpoint: "tenant-a"}
			r := NewRunner()
			r.Settings = tt.src
			res := r.Invoke(context.Background(), inv)
			if res.Outcome != tt.outcome || !strings.Contains(res.Reason, tt.reason) {
				t.Fatalf("outcome %s (%s), want %s (%s)", res.Outcome, res.Reason, tt.outcome, tt.reason)
			}
			if tt.decls == nil && tt.src.asked != 0 {
				t.Error("the source was asked for a package that declares no settings")
			}
			if tt.decls != nil && (tt.src.pkg != "svc" || tt.src.ep != "tenant-a") {
				t.Errorf("asked for %q on %q", tt.src.pkg, tt.src.ep)
			}
			if res.Outcome != Succeeded {
				if res.CommandResult != nil {
					t.Error("a refused call has a result: something ran")
				}
				return
			}
			var cr struct{ Text string }
			if err := json.Unmarshal(res.CommandResult, &cr); err != nil {
				t.Fatal(err)
			}
			i := strings.Index(cr.Text, `,"settings":`)
			got := ""
			if i >= 0 {
				got = cr.Text[i : len(cr.Text)-1]
			}
			if got != tt.settings {
				t.Errorf("settings member %q, want %q (line %s)", got, tt.settings, cr.Text)
			}
		})
	}
}

// A sensitive value that fails its check is never quoted, not even by
// the JSON parser's message.
func TestSettingParseValueQuotesNoSecret(t *testing.T) {
	t.Parallel()
	s := &Setting{ID: "keys", Type: TypeList, Sensitive: true, Items: &ItemSpec{Type: TypeString}, MaxItems: new(1)}
	for _, text := range []string{`[{"sk_live_ABC":1,"sk_live_ABC":2}]`, `["ab", sk_live_ABC]`, `["sk_live_ABC\q"]`, `[1, "sk_live_ABC"]`, `["sk_live_ABC","sk_live_ABC"]`} {
		_, err := s.ParseValue(text)
		if err == nil {
			t.Errorf("%s accepted", text)
			continue
		}
		if strings.Contains(err.Error(), "sk_live_ABC") || strings.Contains(err.Error(), "sk_") {
			t.Errorf("%s: the error quotes the secret: %v", text, err)
		}
	}
}
