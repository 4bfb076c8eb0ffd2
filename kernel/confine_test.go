package kernel

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
)

// TestConfineRefusesUnknownMembers: a confine read inside a lenient record
// still refuses a member it does not know.
func TestConfineRefusesUnknownMembers(t *testing.T) {
	var rec struct {
		Confine *Confine `json:"confine"`
	}
	err := json.Unmarshal([]byte(`{"confine":{"network":"none","syscalls":["read"]},"later":1}`), &rec, json.RejectUnknownMembers(false))
	if err == nil || !strings.Contains(err.Error(), "syscalls") {
		t.Fatalf("unknown member in confine: err %v, confine %+v", err, rec.Confine)
	}
	if err := json.Unmarshal([]byte(`{"confine":{"network":"none","read":["release"]},"later":1}`), &rec, json.RejectUnknownMembers(false)); err != nil || rec.Confine.Network != NetworkNone {
		t.Fatalf("a known confine: err %v, %+v", err, rec.Confine)
	}
}
