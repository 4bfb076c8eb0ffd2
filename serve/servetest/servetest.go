// Package servetest publishes catalogues into a store for the tests of
// serving and of the CLI over it. It imports kernel, policy, search and
// store only, and only tests import it.
package servetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
	"github.com/rukh-dev/rukh/search"
	"github.com/rukh-dev/rukh/store"
)

// PublishCatalog publishes packages×perPackage commands ("p3.c7", path
// "p3 c7") as tools of the local endpoint, through policy.Build and the
// store's index writer (with search records), as publish does.
func PublishCatalog(t testing.TB, st *store.Store, packages, perPackage int) {
	t.Helper()
	PublishCatalogWith(t, st, packages, perPackage, "")
}

// PublishCatalogWith is PublishCatalog with more members of the local
// endpoint's profile, each followed by a comma, such as
// `"discovery":{"mode":"progressive"},`.
func PublishCatalogWith(t testing.TB, st *store.Store, packages, perPackage int, endpoint string) {
	t.Helper()
	publish(t, st, packages, perPackage, endpoint, true)
}

// PublishCatalogUnsearched is PublishCatalog as a rukh from before search
// records published it: without them.
func PublishCatalogUnsearched(t testing.TB, st *store.Store, packages, perPackage int) {
	t.Helper()
	publish(t, st, packages, perPackage, "", false)
}

func publish(t testing.TB, st *store.Store, packages, perPackage int, endpoint string, searched bool) {
	t.Helper()
	in := policy.Input{}
	var pkgs []string
	for p := range packages {
		name := fmt.Sprintf("acme.p%d", p)
		pkgs = append(pkgs, `"`+name+`"`)
		var cmds []string
		for c := range perPackage {
			cmds = append(cmds, fmt.Sprintf(`{"id":"p%d.c%d","path":["p%d","c%d"],"summary":"command %d of %d",
				"params":[{"id":"title","type":"string","flag":"title","maxLength":100},{"id":"n","type":"integer","flag":"n","default":3}],
				"execute":{"program":"bin/x","result":{"kind":"text"}},
				"machine":{"eligible":true,"interaction":"none","requiredFeatures":[{"id":"command-result","version":1}]}}`, p, c, p, c, c, p))
		}
		m, err := kernel.ParseManifest([]byte(fmt.Sprintf(`{"apiVersion":"rukh.extension/2","name":%q,"version":"1.0.0","publisher":"acme","commands":[%s]}`,
			name, strings.Join(cmds, ","))))
		if err != nil {
			t.Fatal(err)
		}
		in.Releases = append(in.Releases, policy.ReleaseInput{BoundRelease: policy.BoundRelease{Digest: fmt.Sprintf("h1:%043d=", p), AllowUnsigned: true}, Manifest: m})
	}
	prof, err := policy.ParseProfile([]byte(`{"endpoints":{"local":{"namespace":"n",` + endpoint + `"publish":{"packages":[` + strings.Join(pkgs, ",") + `]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	in.Profile = prof
	base, err := st.Active()
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Publish(base, func(_ uint64, id string, w *store.IndexWriter) (store.Revision, error) {
		in.Revision = id
		b, _, err := policy.Build(in)
		if err != nil {
			return store.Revision{}, err
		}
		if searched {
			w.IndexSearch(search.ObjectBag)
		}
		return store.Revision{}, policy.WriteIndex(b, w)
	})
	if err != nil {
		t.Fatal(err)
	}
}
