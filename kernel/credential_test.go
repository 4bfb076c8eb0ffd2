package kernel

import (
	"reflect"
	"strings"
	"testing"
)

// The caller an extension receives has no place for a secret: its members
// are exactly these strings.
func TestCallerHoldsNoSecret(t *testing.T) {
	var names []string
	typ := reflect.TypeFor[Caller]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Type.Kind() != reflect.String {
			t.Errorf("Caller.%s is a %s", f.Name, f.Type)
		}
		names = append(names, f.Name)
	}
	if got := strings.Join(names, " "); got != "Transport Endpoint Subject Agent Credential Issuer" {
		t.Errorf("Caller members: %s", got)
	}
}

func TestCredentialLogID(t *testing.T) {
	c := Credential{Kind: CredentialOneTime, Hash: TokenHash{0xde, 0xad, 0xbe, 0xef, 0x01}}
	if got := c.LogID(); got != "rukh_otk_deadbeef" {
		t.Errorf("LogID = %s", got)
	}
	if got := Anonymous("e").LogID(); got != "anonymous" {
		t.Errorf("anonymous LogID = %s", got)
	}
	o := Credential{Kind: CredentialOAuth, Hash: TokenHash{0x01, 0x23, 0x45, 0x67, 0x89}, Subject: "u-42"}
	if got := o.LogID(); got != "oauth_01234567" {
		t.Errorf("oauth LogID = %s", got)
	}
}

// An oauth caller is the identity provider's: its subject and issuer
// replace the endpoint's subject; a Rukh token's caller has no issuer.
func TestCredentialCallerOAuth(t *testing.T) {
	for _, tt := range []struct {
		cred Credential
		want Caller
	}{
		{Credential{Agent: "svc", Endpoint: "web", Kind: CredentialOAuth, Issuer: "https://idp", Subject: "u-1", Scopes: []string{"a"}},
			Caller{Transport: TransportHTTP, Endpoint: "web", Subject: "u-1", Agent: "svc", Credential: CredentialOAuth, Issuer: "https://idp"}},
		{Credential{Agent: "bot", Endpoint: "web", Kind: CredentialStatic, Issuer: "ignored", Subject: "ignored"},
			Caller{Transport: TransportHTTP, Endpoint: "web", Subject: "owner", Agent: "bot", Credential: CredentialStatic}},
		{Anonymous("web"), Caller{Transport: TransportHTTP, Endpoint: "web", Subject: "owner", Agent: AnonymousAgent}},
	} {
		if got := tt.cred.Caller(TransportHTTP, "owner"); got != tt.want {
			t.Errorf("%s: Caller = %+v, want %+v", tt.cred.Kind, got, tt.want)
		}
	}
}
