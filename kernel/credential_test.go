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
	if got := strings.Join(names, " "); got != "Transport Endpoint Subject Agent Credential" {
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
}
