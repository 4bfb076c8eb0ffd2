package policy_test

import (
	"strings"
	"testing"

	"github.com/rukh-dev/rukh/policy"
)

// Only a task command's tool on an endpoint with the job family declares
// the started answer and its taskId.
func TestBuildStartedOutputSchema(t *testing.T) {
	in := policy.Input{
		Revision: "r1",
		Profile: profile(t, `{"endpoints":{
			"jobs":{"namespace":"a","publish":{"packages":["acme.notes"]},"tasks":{"commands":["notes.add","notes.gone"],"jobTools":true}},
			"ext":{"namespace":"b","publish":{"packages":["acme.notes"]},"tasks":{"commands":["notes.add"]}},
			"none":{"namespace":"c","publish":{"packages":["acme.notes"]}}}}`),
		Releases: []policy.ReleaseInput{release(acmeNotes(t))},
	}
	b, warnings, err := policy.Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || warnings[0] != `endpoint "jobs": tasks.commands names "notes.gone", which the endpoint does not publish` {
		t.Errorf("warnings %q", warnings)
	}
	for _, p := range b.Endpoints {
		wire := string(p.Tools[0].Wire)
		has := strings.Contains(wire, `"started"]`) && strings.Contains(wire, `"taskId":{"type":"string"}`)
		if has != (p.Endpoint == "jobs") {
			t.Errorf("endpoint %s: started declared %v: %s", p.Endpoint, has, wire)
		}
	}
}

// A required task command's tool declares execution.taskSupport "required"
// where a direct call is refused; with the job family it answers started
// instead, so it declares that; other tools declare neither.
func TestBuildTaskOnlyTool(t *testing.T) {
	in := policy.Input{
		Revision: "r1",
		Profile: profile(t, `{"endpoints":{
			"only":{"namespace":"a","publish":{"packages":["acme.notes"]},"tasks":{"commands":["notes.add"],"required":["notes.add"]}},
			"jobs":{"namespace":"b","publish":{"packages":["acme.notes"]},"tasks":{"commands":["notes.add"],"required":["notes.add"],"jobTools":true}},
			"may":{"namespace":"c","publish":{"packages":["acme.notes"]},"tasks":{"commands":["notes.add"]}}}}`),
		Releases: []policy.ReleaseInput{release(acmeNotes(t))},
	}
	b, _, err := policy.Build(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range b.Endpoints {
		wire := string(p.Tools[0].Wire)
		required := strings.Contains(wire, `,"execution":{"taskSupport":"required"}}`)
		started := strings.Contains(wire, `"started"]`)
		if required != (p.Endpoint == "only") || started != (p.Endpoint == "jobs") {
			t.Errorf("endpoint %s: required %v, started %v: %s", p.Endpoint, required, started, wire)
		}
	}
}
