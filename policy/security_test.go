package policy_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
)

// Every credential kind against every level, plus one-time tokens bound to
// the called command and to another one.
func TestAuthorize(t *testing.T) {
	static := kernel.Credential{Agent: "bot", Endpoint: "e", Kind: kernel.CredentialStatic}
	short := kernel.Credential{Agent: "bot", Endpoint: "e", Kind: kernel.CredentialShortLived}
	once := kernel.Credential{Agent: "bot", Endpoint: "e", Kind: kernel.CredentialOneTime}
	onceHere := kernel.Credential{Agent: "bot", Endpoint: "e", Kind: kernel.CredentialOneTime, Command: "notes.delete"}
	onceThere := kernel.Credential{Agent: "bot", Endpoint: "e", Kind: kernel.CredentialOneTime, Command: "notes.add"}
	anon := kernel.Anonymous("e")
	creds := []struct {
		name string
		c    kernel.Credential
	}{{"static", static}, {"short-lived", short}, {"one-time", once}, {"one-time for this command", onceHere},
		{"one-time for another command", onceThere}, {"anonymous", anon}}
	allowed := map[string][]bool{ // level → allowed per creds entry
		policy.SecurityStandard: {true, true, true, true, false, true},
		policy.SecurityElevated: {false, true, true, true, false, false},
		policy.SecurityStrict:   {false, false, true, true, false, false},
	}
	for _, level := range policy.SecurityLevels {
		for i, c := range creds {
			err := policy.Authorize(level, c.c, "notes.delete")
			if allowed[level][i] {
				if err != nil {
					t.Errorf("%s with %s: refused: %v", level, c.name, err)
				}
				continue
			}
			if err == nil {
				t.Errorf("%s with %s: allowed, want refused", level, c.name)
				continue
			}
			if !errors.Is(err, policy.ErrInsufficientScope) || kernel.ErrorCode(err) != kernel.CodeDenied {
				t.Errorf("%s with %s: %v (code %s), want insufficient scope", level, c.name, err, kernel.ErrorCode(err))
			}
		}
	}
	if err := policy.Authorize("root", static, "x"); err == nil || errors.Is(err, policy.ErrInsufficientScope) {
		t.Errorf("unknown level: %v, want an internal error", err)
	}
	if err := policy.Authorize(policy.SecurityStandard, kernel.Credential{Kind: "password"}, "x"); err == nil {
		t.Error("unknown credential kind allowed")
	}
	err := policy.Authorize(policy.SecurityStrict, static, "notes.delete")
	var ke *kernel.Error
	if !errors.As(err, &ke) || !strings.Contains(ke.Hint, "rukh agent token bot --once --command notes.delete") {
		t.Errorf("strict refusal hint: %v", err)
	}
}

func TestSecurityProfile(t *testing.T) {
	p, err := policy.ParseProfile([]byte(`{"endpoints":{"e":{"namespace":"n","httpAuth":"none",
		"security":{"default":"elevated","commands":{"notes.delete":"strict","notes.list":"standard"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	ep := p.Endpoints["e"]
	for cmd, want := range map[string]string{"notes.delete": "strict", "notes.list": "standard", "notes.add": "elevated"} {
		if got := ep.SecurityLevel(cmd); got != want {
			t.Errorf("level of %s = %s, want %s", cmd, got, want)
		}
	}
	if ep.HTTPAuthMode() != policy.HTTPAuthNone {
		t.Errorf("httpAuth = %s", ep.HTTPAuthMode())
	}
	canon := string(p.Canonical())
	if !strings.Contains(canon, `"security":{"default":"elevated","commands":{"notes.delete":"strict","notes.list":"standard"}}`) || !strings.Contains(canon, `"httpAuth":"none"`) {
		t.Errorf("canonical form lost security: %s", canon)
	}
	// Unstated: standard and bearer, and the canonical form is unchanged.
	p, err = policy.ParseProfile([]byte(`{"endpoints":{"e":{"namespace":"n"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if ep := p.Endpoints["e"]; ep.SecurityLevel("x.y") != policy.SecurityStandard || ep.HTTPAuthMode() != policy.HTTPAuthBearer {
		t.Errorf("defaults: %s %s", ep.SecurityLevel("x.y"), ep.HTTPAuthMode())
	}
	if c := string(p.Canonical()); strings.Contains(c, "security") || strings.Contains(c, "httpAuth") {
		t.Errorf("unstated security appears in %s", c)
	}

	for _, tc := range []struct{ in, path, msg string }{
		{`{"security":{"default":"high"}}`, "/endpoints/e/security/default", `unknown security level "high": want standard, elevated or strict`},
		{`{"security":{"default":""}}`, "/endpoints/e/security/default", "empty default"},
		{`{"security":{"commands":{"notes.delete":"paranoid"}}}`, "/endpoints/e/security/commands/notes.delete", `unknown security level "paranoid": want standard, elevated or strict`},
		{`{"security":{"commands":{"Bad ID":"strict"}}}`, "/endpoints/e/security/commands/Bad ID", "invalid command"},
		{`{"security":{"level":"strict"}}`, "/endpoints/e/security/level", "unknown"},
		{`{"security":{"commands":{"a.b":1}}}`, "/endpoints/e/security/commands/a.b", ""},
		{`{"httpAuth":"basic"}`, "/endpoints/e/httpAuth", `unknown httpAuth "basic": want bearer, none, oauth or rukh+oauth`},
		{`{"httpAuth":""}`, "/endpoints/e/httpAuth", "empty httpAuth"},
	} {
		in := `{"endpoints":{"e":{"namespace":"n",` + strings.TrimPrefix(tc.in, "{")
		in += "}}"
		_, err := policy.ParseProfile([]byte(in))
		var ke *kernel.Error
		if !errors.As(err, &ke) || ke.Code != kernel.CodeInvalid {
			t.Errorf("%s: %v, want an invalid error", tc.in, err)
			continue
		}
		if ke.Path != tc.path || !strings.Contains(ke.Message, tc.msg) {
			t.Errorf("%s: path %q message %q, want %q containing %q", tc.in, ke.Path, ke.Message, tc.path, tc.msg)
		}
	}
}

// Build records non-standard levels on the tools and warns about a level
// given to a command the endpoint does not publish.
func TestBuildSecurity(t *testing.T) {
	m := parseManifest(t, manifestJSON("p", "1.0.0",
		cmdSpec{id: "p.read", path: `["p","read"]`},
		cmdSpec{id: "p.edit", path: `["p","edit"]`},
		cmdSpec{id: "p.drop", path: `["p","drop"]`}))
	prof := profile(t, `{"endpoints":{
		"a":{"namespace":"na","publish":{"packages":["p"]},"security":{"commands":{"p.edit":"elevated","p.drop":"strict","p.gone":"strict"}}},
		"b":{"namespace":"nb","publish":{"commands":["p.read"]},"security":{"default":"strict"}}}}`)
	b, warnings, err := policy.Build(policy.Input{Revision: "r1", Profile: prof, Releases: []policy.ReleaseInput{release(m)}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range b.Endpoints {
		for _, tool := range p.Tools {
			got[p.Endpoint+" "+tool.Command] = tool.Level() + "/" + tool.Security
		}
	}
	want := map[string]string{"a p.read": "standard/", "a p.edit": "elevated/elevated", "a p.drop": "strict/strict", "b p.read": "strict/strict"}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("tools %v", got)
	}
	if len(warnings) != 1 || warnings[0] != `endpoint "a": security.commands names "p.gone", which the endpoint does not publish` {
		t.Errorf("warnings %q", warnings)
	}
}
