package mcpcore

import (
	"testing"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
)

// readAtCatalog answers one tool and says which state of its store it
// answers from.
type readAtCatalog struct {
	Catalog // the methods a call's lookup does not use
	at      any
}

func (c *readAtCatalog) ReadAt() any               { return c.at }
func (c *readAtCatalog) HasEndpoint() bool         { return true }
func (c *readAtCatalog) Revision() string          { return "r1" }
func (c *readAtCatalog) Endpoints() []string       { return []string{"local"} }
func (c *readAtCatalog) Template() policy.Template { return policy.Template{} }
func (c *readAtCatalog) Discovery() *policy.Discovery {
	return nil
}
func (c *readAtCatalog) Launch() *policy.Launch {
	return &policy.Launch{Transports: []string{policy.TransportStdio}}
}
func (c *readAtCatalog) Resolve(name string) (*Resolved, error) {
	return &Resolved{Command: &kernel.Command{ID: "p.c"}, Release: &policy.BoundRelease{Name: "p"}}, nil
}

type plainCatalog struct{ *readAtCatalog }

func (plainCatalog) ReadAt() {} // not ReadAtCatalog's ReadAt

// A call's lookup carries what its catalog says of its store (ReadAt) to
// the pin; a catalog that says nothing gives nil.
func TestLookupCarriesReadAt(t *testing.T) {
	marker := new(int)
	for _, tc := range []struct {
		name string
		cat  Catalog
		want any
	}{
		{"a ReadAtCatalog", &readAtCatalog{at: marker}, marker},
		{"another catalog", plainCatalog{&readAtCatalog{}}, nil},
	} {
		s := newTestSession(Config{Endpoint: "local", View: func(_ uint64, fn func(uint64, Catalog) error) error { return fn(1, tc.cat) }})
		bc, n, at, ok := s.resolveCall(&Request{rep: &fakeReply{}}, "x")
		if !ok || bc == nil || n != 1 {
			t.Fatalf("%s: resolved %v %d %v", tc.name, bc, n, ok)
		}
		if at != tc.want {
			t.Errorf("%s: carried %v, want %v", tc.name, at, tc.want)
		}
	}
}

// A call that spends a one-time token has its pin read the store as it is
// when it starts, not as its lookup found it: the spending waits behind
// other writes to the store, an untrust among them.
func TestPinReadAtAfterSpend(t *testing.T) {
	marker := new(int)
	if got := pinReadAt(marker, nil); got != marker {
		t.Errorf("no token spent: the pin reads as of %v, want the lookup's %v", got, marker)
	}
	if got := pinReadAt(marker, func() error { return nil }); got != nil {
		t.Errorf("a one-time token spent: the pin reads as of %v, want the store as it is (nil)", got)
	}
}
