// Package mcpcoretest is a test catalogue for the packages that serve the
// MCP core (mcpcore and its transports), as net/http/httptest is for
// net/http: a hand-built binding of behaviour tools ("test.<slug>": echo,
// hang, progress, …) and fillers, and the serve views the core reads. Test
// code only; it imports no transport, and not mcpcore either, so that
// mcpcore's own tests can use it. The session harness, the fakes that play
// the tools and the golden transcript runner are its subpackage transcript.
package mcpcoretest

import (
	"fmt"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rukh-dev/rukh/kernel"
	"github.com/rukh-dev/rukh/policy"
)

// The test binding is built by hand: tool names are "<slug>__r<revision>"
// (real names carry a fingerprint of the revision, so every publish renames
// every tool — which is what makes an old name stale).

const noArgs = `{"type":"object","properties":{},"additionalProperties":false}`

type fixtureTool struct {
	slug        string
	params      []kernel.Param
	interaction string
	schema      string // input schema
	endpoints   []string
}

func intPtr(i int) *int { return &i }

// fixtureTools are the behaviour tools; fake.Invoke picks the behaviour by
// command identity "test.<slug>".
var fixtureTools = []fixtureTool{
	{slug: "big"},
	{slug: "crash"},
	{slug: "echo", params: []kernel.Param{
		{ID: "title", Type: kernel.TypeString, Flag: "title", Required: true, MaxLength: intPtr(5)},
		{ID: "count", Type: kernel.TypeInteger, Flag: "count", Default: jsontext.Value(`3`)},
	}, schema: `{"type":"object","properties":{"title":{"type":"string","maxLength":5},"count":{"type":"integer","default":3}},"required":["title"],"additionalProperties":false}`},
	{slug: "fail"},
	{slug: "hang"},
	{slug: "interactive", interaction: kernel.InteractionRequired},
	{slug: "noisy"},
	{slug: "ok"},
	{slug: "progress"},
	{slug: "slow"},
	{slug: "wide", endpoints: []string{"other"}}, // published, but not to "local"
}

// ToolName is the name of the tool of command test.<slug> in revision rev.
func ToolName(slug string, rev uint64) string { return fmt.Sprintf("%s__r%d", slug, rev) }

// Binding builds revision rev: endpoint "local" with the behaviour
// tools, "many" with fillers fillers (f00…), "other" with "wide".
func Binding(rev uint64, fillers int, tmpl policy.Template) *policy.Binding {
	b := &policy.Binding{
		Revision: fmt.Sprintf("r%d", rev),
		Releases: []policy.BoundRelease{{Name: "test.pkg", Version: "1.0.0", Digest: "h1:test", Dir: "/releases/test.pkg@1.0.0"}},
	}
	local := policy.Projection{Endpoint: "local", Namespace: "test-ns", ToolNames: "full", Subject: "owner", Template: tmpl}
	many := policy.Projection{Endpoint: "many", Namespace: "test-many", ToolNames: "full", Subject: "owner", Template: tmpl}
	other := policy.Projection{Endpoint: "other", Namespace: "test-other", ToolNames: "full", Subject: "owner", Template: tmpl}
	addCommand := func(slug string, params []kernel.Param, interaction string) {
		b.Commands = append(b.Commands, policy.BoundCommand{
			Release: "test.pkg@1.0.0", Digest: "h1:test", Eligible: true,
			Declaration: kernel.Command{
				ID: "test." + slug, Path: []string{slug}, Summary: slug, Params: params,
				Execute: kernel.Execute{Program: "bin/" + slug, Mode: kernel.ModeManaged, Lifetime: kernel.LifetimeForeground,
					Result: &kernel.ResultDecl{Kind: kernel.ResultText}},
				Machine: &kernel.Machine{Eligible: true, Interaction: interaction,
					RequiredFeatures: []kernel.Feature{{ID: "command-result", Version: 1}}},
			},
		})
	}
	for _, ft := range fixtureTools {
		addCommand(ft.slug, ft.params, ft.interaction)
		schema := ft.schema
		if schema == "" {
			schema = noArgs
		}
		name := ToolName(ft.slug, rev)
		wire := fmt.Sprintf(`{"name":%q,"title":%q,"inputSchema":%s}`, name, ft.slug, schema)
		t := policy.Tool{Name: name, Command: "test." + ft.slug, Release: "test.pkg@1.0.0", Wire: jsontext.Value(wire)}
		if ft.endpoints == nil {
			local.Tools = append(local.Tools, t)
		} else {
			other.Tools = append(other.Tools, t)
		}
	}
	for i := range fillers {
		slug := fmt.Sprintf("f%04d", i)
		addCommand(slug, nil, "")
		name := ToolName(slug, rev)
		many.Tools = append(many.Tools, policy.Tool{Name: name, Command: "test." + slug, Release: "test.pkg@1.0.0",
			Wire: jsontext.Value(fmt.Sprintf(`{"name":%q,"inputSchema":%s}`, name, noArgs))})
	}
	b.Endpoints = []policy.Projection{local, many, other}
	SetProfile(b, nil)
	return b
}

// SetProfile writes b's profile from its projections: what serve-mcp
// checks the launch binding against. transports overrides an endpoint's
// (default stdio).
func SetProfile(b *policy.Binding, transports map[string][]string) {
	eps := map[string]any{}
	for _, p := range b.Endpoints {
		ep := map[string]any{"namespace": p.Namespace, "subject": p.Subject}
		if tr, ok := transports[p.Endpoint]; ok {
			ep["transports"] = tr
		}
		eps[p.Endpoint] = ep
	}
	data, err := json.Marshal(map[string]any{"endpoints": eps}, json.Deterministic(true))
	if err != nil {
		panic(err)
	}
	b.Profile = data
}

// Template is the limits the tests serve with.
var Template = policy.Template{TimeoutMs: 1000, MaxConcurrent: 2, MaxHeld: 3, DiagnosticsBytes: 64, ResultBytes: 128 << 10}

// Bindings adapts a loader of whole bindings to the serve view serve-mcp
// reads, through the same encoding the store keeps.
func Bindings(load func(uint64) (*policy.Binding, error)) func(uint64) (*policy.ServeView, error) {
	return BindingsFor("local", load)
}

// BindingsFor is Bindings for another endpoint.
func BindingsFor(endpoint string, load func(uint64) (*policy.Binding, error)) func(uint64) (*policy.ServeView, error) {
	return func(n uint64) (*policy.ServeView, error) {
		b, err := load(n)
		if err != nil || b == nil {
			return nil, err
		}
		return b.ServeView(endpoint)
	}
}

// View is b's serve view of endpoint "local".
func View(t testing.TB, b *policy.Binding) *policy.ServeView {
	t.Helper()
	v, err := b.ServeView("local")
	if err != nil {
		t.Fatal(err)
	}
	return v
}
